import GRDB

// Statements whose SQL text never varies are prepared once per connection and reused (GRDB's statement
// cache): preparing costs more than running for the short statements of the hot paths (a listing insert
// compiles its FTS5 and word-table triggers into the statement every time). Only fixed text goes through
// here, so a connection's cache holds a bounded number of statements; SQL built per request (searches, `IN`
// lists of a request's size) is prepared each time.
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
