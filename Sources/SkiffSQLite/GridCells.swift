import GRDB
import SkiffDomain

/// The grid cells (``SkiffDomain/ApproximateLocation``) of private points in SQL: the `cell` column of
/// lost-and-found items ("lostfound-v6") and of listings ("listings-v6"), and the tables that list the
/// occupied cells with their counts (`lostFoundCell`, `listingCell`, kept by triggers).
enum GridCells {
    /// The key of a cell as a `cell` column stores it: the row times a million plus the column. Unique for
    /// every point on Earth (a row has fewer than 40,000 columns), and a row's cells are one range of keys.
    static func key(_ cell: ApproximateLocation.Cell) -> Int64 {
        Int64(cell.row) * 1_000_000 + Int64(cell.column)
    }

    /// The key of the cell holding a point, or `nil` without one (or for a point not on Earth).
    static func key(latitude: Double?, longitude: Double?) -> Int64? {
        guard let latitude, let longitude else { return nil }
        return ApproximateLocation.cell(latitude: latitude, longitude: longitude).map(key)
    }

    /// The occupied cells of a circle's box (``SkiffDomain/GridCircle/boxCells``) with their counts, read
    /// from `table` (`cell` key, count in `count`): one range lookup per row of the box.
    static func occupied(
        _ db: Database,
        table: String,
        count: String,
        box: [(row: Int, columns: ClosedRange<Int>)]
    ) throws -> [ApproximateLocation.Cell: Int64] {
        let statement = try db.cachedStatement(sql: "SELECT cell, \(count) FROM \(table) WHERE cell BETWEEN ? AND ?")
        var cells: [ApproximateLocation.Cell: Int64] = [:]
        for (row, columns) in box {
            let first = key(ApproximateLocation.Cell(row: row, column: columns.lowerBound))
            let last = key(ApproximateLocation.Cell(row: row, column: columns.upperBound))
            let rows = try Row.fetchCursor(statement, arguments: [first, last])
            while let found = try rows.next() {
                let cell: Int64 = found[0]
                cells[ApproximateLocation.Cell(row: row, column: Int(cell - first) + columns.lowerBound)] = found[1]
            }
        }
        return cells
    }
}
