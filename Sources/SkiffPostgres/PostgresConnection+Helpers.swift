import PostgresNIO

/// Shorthands the stores use on a connection of a ``PostgresStorage``.
extension PostgresConnection {
    /// Runs `query` with the storage's logger.
    @discardableResult
    func run(_ query: PostgresQuery, _ storage: PostgresStorage) async throws -> PostgresRowSequence {
        try await self.query(query, logger: storage.logger)
    }

    /// Whether `query` returns a row.
    func exists(_ query: PostgresQuery, _ storage: PostgresStorage) async throws -> Bool {
        for try await _ in try await self.query(query, logger: storage.logger) { return true }
        return false
    }

    /// The number `query` (a `SELECT count(*)`, or a `WITH … RETURNING` counted) returns.
    func count(_ query: PostgresQuery, _ storage: PostgresStorage) async throws -> Int {
        for try await count in try await self.query(query, logger: storage.logger).decode(Int.self) { return count }
        return 0
    }
}

/// A query put together piece by piece (filters that depend on the request), binding each value as a
/// parameter as it goes: `let key = builder.bind(queryKey); builder.append(" AND name = \(key)")`.
struct PostgresQueryBuilder {
    private(set) var sql: String
    private var binds = PostgresBindings()

    init(_ sql: String) { self.sql = sql }

    /// Binds `value` and returns its placeholder (`$N`).
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    /// Appends SQL text (never a value: bind those).
    mutating func append(_ text: String) { sql += text }

    /// The query.
    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}

/// What PostgreSQL's statistics say about a table or a query, for choosing how to read: catalogue reads
/// and plans, never a scan or a count.
enum PostgresEstimates {
    /// How many rows `table` holds: the planner's figure, or the live rows counted since the last ANALYZE
    /// if more.
    static func rows(in table: String, _ db: PostgresConnection, _ storage: PostgresStorage) async throws -> Int {
        var total = 0
        for try await count in try await db.run(
            """
            SELECT greatest(c.reltuples::bigint, coalesce(s.n_live_tup, 0))
            FROM pg_class AS c LEFT JOIN pg_stat_user_tables AS s ON s.relid = c.oid
            WHERE c.oid = \(table)::regclass
            """,
            storage
        ).decode(Int.self) {
            total = count
        }
        return total
    }

    /// The planner's row estimate for an `EXPLAIN` (of its top node).
    static func rows(
        _ explain: PostgresQuery,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> Int {
        let plan = try await db.run(explain, storage)
        for try await line in plan.decode(String.self) {
            // The top node: `Bitmap Heap Scan on listing  (cost=12.01..20.02 rows=7 width=4)`.
            if let rows = line.firstMatch(of: /rows=(\d+)/), let estimate = Int(rows.output.1) { return estimate }
        }
        throw PostgresStorageError("a plan has no row estimate")
    }
}
