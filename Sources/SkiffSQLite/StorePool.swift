import GRDB
import SkiffDomain

/// What every SQLite store works through: reads on the pool's concurrent WAL readers, writes through the
/// database's one ``GroupCommitWriter``.
struct StorePool: Sendable {
    /// The connection pool, for reads.
    let readers: DatabasePool
    /// The group-commit writer shared by every store of the database.
    let writer: GroupCommitWriter
    /// The per-request SQL texts the readers' statement caches may hold.
    let shapes = BoundedStatementShapes()

    /// Runs one use case as a write (in its own savepoint of a group-commit transaction), with SQLite
    /// errors mapped to ``SkiffDomain/DomainError``; returns once the write is durable.
    func domainWrite<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.write(updates)
    }

    /// Deletes rows in writes of at most ``SkiffDomain/BatchedDelete/batchSize`` rows each
    /// (``SkiffDomain/BatchedDelete``); returns how many were deleted. `sql` is a `DELETE` whose last
    /// parameter is the batch's `LIMIT` (a subquery choosing the rows by their key), so a write's
    /// savepoint journal, kept in memory, holds one batch's pages.
    func deleteInBatches(_ sql: String, _ arguments: StatementArguments) async throws -> Int {
        try await BatchedDelete.run { limit in
            try await domainWrite { db in
                try db.executeCached(sql: sql, arguments: arguments + [limit])
                return db.changesCount
            }
        }
    }

    /// Runs a read in a snapshot, with SQLite errors mapped to ``SkiffDomain/DomainError``.
    func domainRead<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await readers.read(value)
        } catch let error as DatabaseError {
            throw error.domainError ?? error
        }
    }
}

extension DatabaseError {
    /// The domain error this SQLite error stands for, or `nil` if it is an internal failure.
    ///
    /// Stores check uniqueness and existence themselves inside the transaction (so they can say precisely
    /// what is wrong); this mapping is the safety net for constraints that fire anyway. The SQL message
    /// stays in `cause`, never in the message sent to clients.
    var domainError: DomainError? {
        switch extendedResultCode {
        case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
            return DomainError(.alreadyExists, "This already exists.", cause: self)
        case .SQLITE_CONSTRAINT_FOREIGNKEY:
            return DomainError(.notFound, "A record this refers to does not exist.", cause: self)
        case .SQLITE_CONSTRAINT_CHECK, .SQLITE_CONSTRAINT_NOTNULL:
            return DomainError(.invalidArgument, "A value is out of range.", cause: self)
        default:
            break
        }
        switch resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return DomainError(.aborted, "The database is busy. Try again.", cause: self)
        default:
            return nil
        }
    }
}
