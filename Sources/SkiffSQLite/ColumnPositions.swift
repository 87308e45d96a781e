import GRDB

/// The position of each column of a statement's rows, by exact name (the first column of a name wins), read
/// once so that rows are then decoded by position: GRDB's lookup by name folds the case of both names on
/// every access.
struct ColumnPositions {
    private var positions: [String: Int] = [:]

    init(_ row: Row) {
        for (index, name) in row.columnNames.enumerated() where positions[name] == nil { positions[name] = index }
    }

    /// The position of a column the statement must have.
    func at(_ name: String) -> Int {
        guard let index = positions[name] else { preconditionFailure("no column \(name)") }
        return index
    }
}
