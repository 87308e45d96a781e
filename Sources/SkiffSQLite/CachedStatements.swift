import GRDB
import Synchronization

// Statements whose SQL text never varies are prepared once per connection and reused (GRDB's statement
// cache): preparing costs more than running for the short statements of the hot paths (a listing insert
// compiles its FTS5 and word-table triggers into the statement every time). Only fixed text goes through
// here, so a connection's cache holds a bounded number of statements. SQL built per request (searches)
// goes through ``Database/boundedCachedStatement(sql:)``: the first ``BoundedStatementShapes/limit``
// distinct texts are cached, anything later is prepared each time.
extension Database {
    /// Executes fixed-text SQL through the connection's statement cache.
    func executeCached(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The first row of fixed-text SQL, through the connection's statement cache.
    func fetchOneCached(sql: String, arguments: StatementArguments = []) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}

/// The SQL texts built per request that may enter a database's statement caches: the first `limit`
/// distinct ones seen (a search's text depends on its shape — the filters present, the order, the number
/// of terms — never on its values, so a deployment sees a few dozen). A client that makes up shapes can
/// fill the list, which then only costs later shapes their preparation; each connection's cache stays
/// bounded either way.
final class BoundedStatementShapes: Sendable {
    /// The default number of texts admitted.
    static let defaultLimit = 256

    let limit: Int
    private let admitted = Mutex(Set<String>())

    init(limit: Int = BoundedStatementShapes.defaultLimit) {
        self.limit = limit
    }

    /// Whether `sql` may be cached (admitting it while there is room).
    func admits(_ sql: String) -> Bool {
        admitted.withLock { shapes in
            if shapes.contains(sql) { return true }
            guard shapes.count < limit else { return false }
            shapes.insert(sql)
            return true
        }
    }
}

extension Database {
    /// A statement for SQL built per request: from the connection's cache when `shapes` admits its text,
    /// else prepared for this use only.
    func boundedCachedStatement(sql: String, shapes: BoundedStatementShapes) throws -> Statement {
        shapes.admits(sql) ? try cachedStatement(sql: sql) : try makeStatement(sql: sql)
    }

    /// ``boundedCachedStatement(sql:shapes:)`` when `cacheable` (a statement of few arms, whose shapes are
    /// few), else a statement prepared for this use only.
    func boundedCachedStatement(sql: String, shapes: BoundedStatementShapes, if cacheable: Bool) throws -> Statement {
        cacheable ? try boundedCachedStatement(sql: sql, shapes: shapes) : try makeStatement(sql: sql)
    }
}
