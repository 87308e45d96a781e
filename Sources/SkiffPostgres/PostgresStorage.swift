public import Logging
public import PostgresNIO
import SkiffDomain
import Synchronization

/// A PostgreSQL database the services keep their data in: a pool of connections (at most
/// ``PostgresLocation/poolSize``), with the schema brought up to date when it is opened.
///
/// Several Skiff processes may open the same database at once: the migrations run under an advisory
/// lock in one transaction, so exactly one process migrates and the others find the work done.
public final class PostgresStorage: Sendable {
    /// Where the database is.
    public let location: PostgresLocation
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>
    private let attemptsRecord = Mutex(1)

    private init(location: PostgresLocation, client: PostgresClient, logger: Logger, running: Task<Void, Never>) {
        self.location = location
        self.client = client
        self.logger = logger
        self.running = running
    }

    /// Connects to the database and runs the migrations it has not run yet.
    ///
    /// - Parameters:
    ///   - location: Where the database is.
    ///   - connectTimeout: How long one connection attempt may take.
    ///   - logger: Where the pool logs (connections made and lost).
    /// - Throws: ``PostgresStorageError`` when the database cannot be reached or was migrated by a newer
    ///   version of Skiff.
    public static func open(
        _ location: PostgresLocation,
        connectTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "skiff.postgres")
    ) async throws -> PostgresStorage {
        var configuration = PostgresClient.Configuration(
            host: location.host,
            port: location.port,
            username: location.username,
            password: location.password,
            database: location.database,
            tls: try tlsConfiguration(location.tls)
        )
        configuration.options.maximumConnections = location.poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = connectTimeout
        // One connection of its own first: an unreachable or refusing server fails the open at once (the
        // pool would keep trying), and the migrations run on it before the pool serves any store.
        do {
            try await migrate(location, connectTimeout: connectTimeout, logger: logger)
        } catch {
            throw PostgresStorageError.wrapping(error, while: "opening \(location)")
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        return PostgresStorage(location: location, client: client, logger: logger, running: running)
    }

    private static func tlsConfiguration(_ mode: PostgresLocation.TLSMode) throws -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    private static func connectionTLS(_ mode: PostgresLocation.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }

    /// Closes every connection. Later use of a store fails.
    public func close() async {
        running.cancel()
        await running.value
    }

    /// The most attempts any one transaction on this storage has taken so far (1 when none was run
    /// again after a conflict): how close a busy write came to ``maximumTransactionAttempts``.
    package var mostTransactionAttempts: Int { attemptsRecord.withLock { $0 } }

    // MARK: Running queries

    /// Runs `body` on a connection of the pool, outside a transaction (each statement commits alone).
    func withConnection<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in try await body(connection) }
    }

    /// Runs `body` in one transaction at `isolation`, committing when it returns and rolling back when
    /// it throws (the error `body` threw is rethrown as it is).
    ///
    /// A transaction PostgreSQL aborts for a serialization failure or a deadlock (only possible at
    /// `.repeatableRead` and `.serializable`, or with row locks taken in different orders) is run again,
    /// up to ``maximumTransactionAttempts`` times: `body` must not have effects outside the database.
    func withTransaction<Result: Sendable>(
        _ isolation: TransactionIsolation = .readCommitted,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            if attempt > 1 { attemptsRecord.withLock { $0 = max($0, attempt) } }
            do {
                let result = try await client.withConnection { connection in
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.sql)"),
                        logger: logger
                    )
                    let result: Result
                    do {
                        result = try await body(connection)
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                    try await connection.query("COMMIT", logger: logger)
                    return result
                }
                return result
            } catch let error as PSQLError where Self.isRetryable(error) && attempt < Self.maximumTransactionAttempts {
                // Writers that collided wait a random part of a doubling interval, so they do not collide
                // again in step (full jitter).
                let ceiling = min(Self.maximumRetryPause, Self.firstRetryPause * (1 << min(attempt - 1, 16)))
                try await Task.sleep(for: .microseconds(Int.random(in: 0...ceiling)))
                attempt += 1
            }
        }
    }

    /// How many times a transaction aborted by a serialization failure or a deadlock is tried: enough
    /// for dozens of writers on one row (each round lets at least one commit).
    static let maximumTransactionAttempts = 40
    /// The longest pause before the second attempt, in microseconds; it doubles with each attempt.
    static let firstRetryPause = 500
    /// The longest pause between attempts, in microseconds.
    static let maximumRetryPause = 50_000

    static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"  // serialization_failure, deadlock_detected
    }

    /// A transaction's isolation level.
    enum TransactionIsolation: Sendable {
        case readCommitted, repeatableRead, repeatableReadOnly, serializable

        var sql: String {
            switch self {
            case .readCommitted: "READ COMMITTED"
            case .repeatableRead: "REPEATABLE READ"
            case .repeatableReadOnly: "REPEATABLE READ READ ONLY"
            case .serializable: "SERIALIZABLE"
            }
        }
    }

    // MARK: What stores use

    /// Runs one use case as a write: a SERIALIZABLE transaction (so a store's load → decide → save is
    /// atomic across every server on the database, as on SQLite's single writer), run again when
    /// PostgreSQL aborts it for a conflict, with PostgreSQL errors mapped to ``SkiffDomain/DomainError``.
    func write<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await withTransaction(.serializable, body)
        } catch let error as PSQLError {
            throw Self.domainError(error)
        }
    }

    /// Deletes rows in writes (``write(_:)``) of at most ``SkiffDomain/BatchedDelete/batchSize`` rows
    /// each (``SkiffDomain/BatchedDelete``); returns how many were deleted. `delete` is given the batch
    /// size and returns a query that deletes at most that many rows (a `LIMIT`ed subquery on the table's
    /// key) and answers with their count.
    func deleteInBatches(_ delete: @escaping (Int) -> PostgresQuery) async throws -> Int {
        try await BatchedDelete.run { limit in
            try await write { db in try await db.count(delete(limit), self) }
        }
    }

    /// A write (``write(_:)``) of a kind that many writers run at once on the same rows or index pages
    /// (counters, sequence heads, new listings): the first attempt runs as it is; every attempt after a
    /// conflict first takes `lock` on the table they all write, so it waits for the writers in flight
    /// and holds off new ones, and cannot lose to another writer of its kind again (a busy table cannot
    /// starve a writer through every attempt). Transactions that only read that table may still
    /// conflict with it, within the attempts ``withTransaction(_:_:)`` allows. A lock not granted within
    /// its ``RetryLock`` timeout ends the write with UNAVAILABLE, not run again.
    ///
    /// `SET LOCAL` and `LOCK TABLE` take no snapshot, so the transaction's snapshot, taken by its next
    /// statement, is from after every writer it waited for.
    func write<T: Sendable>(
        lockingOnRetry lock: RetryLock,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        var attempt = 0
        return try await write { connection in
            attempt += 1
            if attempt > 1 {
                try await connection.query(PostgresQuery(unsafeSQL: lock.timeoutStatement), logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: lock.statement), logger: logger)
            }
            return try await body(connection)
        }
    }

    /// The lock a write run again after a conflict takes first (``write(lockingOnRetry:_:)``).
    ///
    /// The wait for it is bounded: the lock also waits behind maintenance of the table (`VACUUM`,
    /// `ANALYZE`, `CREATE INDEX CONCURRENTLY`), and a vacuum that prevents transaction-ID wraparound does
    /// not give way. Past `timeout` (and for any other lock the rest of the transaction waits for) the
    /// write fails with UNAVAILABLE ("The database is busy") and its connection and call slot are free.
    /// While such a vacuum runs, the table's other writers may still queue behind each new retry, for up
    /// to `timeout` each time.
    struct RetryLock: Sendable {
        let table: StaticString
        let mode: StaticString
        /// `lock_timeout`, in milliseconds (at least 1: 0 would mean no timeout).
        let timeoutMilliseconds: Int64

        /// `LOCK TABLE table IN mode MODE`; the table and the mode are the stores' constants. Nothing is
        /// built until a write is run again, so a first attempt pays nothing for its lock.
        init(table: StaticString, mode: StaticString, timeout: Duration = Self.defaultTimeout) {
            self.table = table
            self.mode = mode
            timeoutMilliseconds = max(
                1,
                timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000
            )
        }

        /// The `LOCK TABLE` statement.
        var statement: String { "LOCK TABLE \(table) IN \(mode) MODE" }
        /// `SET LOCAL lock_timeout`, run just before.
        var timeoutStatement: String { "SET LOCAL lock_timeout = \(timeoutMilliseconds)" }

        /// The longest a retried write waits for its lock: far longer than writers in flight hold it
        /// (milliseconds each, a few seconds for a long queue of them), far shorter than maintenance. It
        /// must stay above `deadlock_timeout` (1 s by default), after which a waiting lock cancels an
        /// ordinary autovacuum that holds the table.
        static let defaultTimeout = Duration.seconds(10)
    }

    /// Runs a read in one snapshot (a read-only REPEATABLE READ transaction), with PostgreSQL errors
    /// mapped to ``SkiffDomain/DomainError``.
    func read<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await withTransaction(.repeatableReadOnly, body)
        } catch let error as PSQLError {
            throw Self.domainError(error)
        }
    }

    /// The domain error a PostgreSQL error stands for. Stores check uniqueness and existence themselves
    /// inside the transaction (so they can say precisely what is wrong); this is the safety net for
    /// constraints that fire anyway. The SQL message stays in `cause`, never in what clients see.
    /// Anything else stays as it is (an internal failure).
    static func domainError(_ error: PSQLError) -> any Error {
        switch error.serverInfo?[.sqlState] {
        case "23505": DomainError(.alreadyExists, "This already exists.", cause: error)
        case "23503": DomainError(.notFound, "A record this refers to does not exist.", cause: error)
        case "23514", "23502", "22003": DomainError(.invalidArgument, "A value is out of range.", cause: error)
        case "40001", "40P01": DomainError(.aborted, "The database is busy. Try again.", cause: error)
        case "55P03": DomainError(.unavailable, "The database is busy. Try again.", cause: error)  // lock_timeout
        case .some: error
        case .none: DomainError(.unavailable, "The database cannot be reached. Try again.", cause: error)
        }
    }

    // MARK: Migrations

    /// The key of the advisory lock migrations run under (any constant; the same in every process).
    static let migrationLockKey: Int64 = 0x736B_6966_665F_6D67  // "skiff_mg"

    /// Runs the migrations the database has not run yet, in one transaction under the advisory lock, on
    /// a connection of its own (closed afterwards).
    private static func migrate(
        _ location: PostgresLocation,
        connectTimeout: Duration,
        logger: Logger
    ) async throws {
        let connection = try await connect(location, timeout: connectTimeout, logger: logger)
        do {
            try await connection.query("BEGIN", logger: logger)
            do {
                try await migrate(connection, location: location, logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// A connection of its own, outside the pool (the caller closes it).
    static func connect(
        _ location: PostgresLocation,
        timeout: Duration,
        logger: Logger
    ) async throws
        -> PostgresConnection
    {
        var configuration = PostgresConnection.Configuration(
            host: location.host,
            port: location.port,
            username: location.username,
            password: location.password,
            database: location.database,
            tls: try connectionTLS(location.tls)
        )
        let (seconds, attoseconds) = timeout.components
        configuration.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
    }

    // MARK: Work one server does at a time

    /// Runs `body` unless another process (or task) holds the lease `name` on this database, holding it
    /// meanwhile; returns whether `body` ran. For periodic jobs that any server may do but only one at a
    /// time should (pruning, relays): the others skip their turn.
    ///
    /// The lease is a session advisory lock on a connection of its own (outside the pool, so `body` can
    /// use every pooled connection): when this process dies, PostgreSQL releases it.
    public func runAlone(_ name: String, _ body: () async throws -> Void) async throws -> Bool {
        let key = Self.leaseKey(name)
        let connection = try await Self.connect(location, timeout: .seconds(10), logger: logger)
        do {
            var held = false
            for try await granted in try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: logger)
                .decode(Bool.self)
            {
                held = granted
            }
            if held {
                do {
                    try await body()
                } catch {
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
            }
            try await connection.close()
            return held
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A lease's advisory-lock key: FNV-1a of `skiff:` and its name (stable across processes and versions).
    static func leaseKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("skiff:" + name).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    private static func migrate(
        _ connection: PostgresConnection,
        location: PostgresLocation,
        logger: Logger
    )
        async throws
    {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger)
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS skiff_migration (
                position integer PRIMARY KEY,
                id text NOT NULL UNIQUE,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
        var applied: Set<String> = []
        var count = 0
        for try await id in try await connection.query("SELECT id FROM skiff_migration", logger: logger)
            .decode(String.self)
        {
            applied.insert(id)
            count += 1
        }
        let known = Set(PostgresSchema.migrations.map(\.id))
        if let unknown = applied.subtracting(known).sorted().first {
            throw PostgresStorageError(
                "the database at \(location) was migrated by a newer version of Skiff (migration "
                    + "\(unknown.prefix(80))); refusing to open it"
            )
        }
        for migration in PostgresSchema.migrations where !applied.contains(migration.id) {
            for statement in migration.statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            count += 1
            try await connection.query(
                "INSERT INTO skiff_migration (position, id) VALUES (\(count), \(migration.id))",
                logger: logger
            )
            logger.info("migrated", metadata: ["migration": "\(migration.id)"])
        }
    }

    /// Every migration this version of Skiff knows, in the order they run.
    public static var schemaMigrations: [String] { PostgresSchema.migrations.map(\.id) }

    /// The migrations this database has run, in the order they ran.
    public func appliedMigrations() async throws -> [String] {
        try await withConnection { connection in
            var ids: [String] = []
            let rows = try await connection.query(
                "SELECT id FROM skiff_migration ORDER BY position",
                logger: logger
            )
            for try await id in rows.decode(String.self) { ids.append(id) }
            return ids
        }
    }
}

/// The PostgreSQL database cannot be used, and why.
public struct PostgresStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for the operator (never a password).
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }

    /// `error` as a ``PostgresStorageError`` that says what was being done, with the server's own
    /// message when there is one (PSQLError's description hides it).
    static func wrapping(_ error: any Error, while doing: String) -> PostgresStorageError {
        if let error = error as? PostgresStorageError { return error }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return PostgresStorageError("\(doing): \(message)")
            }
            return PostgresStorageError("\(doing): \(error.code)\(error.underlying.map { " (\($0))" } ?? "")")
        }
        return PostgresStorageError("\(doing): \(error)")
    }
}
