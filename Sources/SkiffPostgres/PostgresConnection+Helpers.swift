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
