import GRDB
import SkiffDomain

/// The grid cells (``SkiffDomain/ApproximateLocation``) of private points in SQL: the `cell` column of
/// lost-and-found items ("lostfound-v6") and of listings ("listings-v6"), and the tables that list the
/// occupied cells with their counts (`lostFoundCell`, `listingCell`, kept by triggers).
enum GridCells {
    /// The key of a cell as a `cell` column stores it (``SkiffDomain/ApproximateLocation/Cell/key``).
    static func key(_ cell: ApproximateLocation.Cell) -> Int64 { cell.key }

    /// The key of the cell holding a point, or `nil` without one (or for a point not on Earth).
    static func key(latitude: Double?, longitude: Double?) -> Int64? {
        ApproximateLocation.Cell.key(latitude: latitude, longitude: longitude)
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

    /// How a walk of a circle's cells orders what it reads (``walk(_:bands:order:cursor:size:groupSize:cachedGroupSize:shapes:statement:hit:)``).
    enum WalkOrder {
        /// Band by band of shown distance, newest first within a band: bands nearer than the cursor's are
        /// skipped, and the walk stops at the end of the band in which the page fills.
        case distance
        /// Newest first (the cells as one band).
        case newest
        /// Another order: every row of the cells is read, for the caller to sort.
        case other
    }

    /// The hits of a walk of a circle's cells, `bands` nearest first (one band of them all unless in
    /// distance order): each band's cells in groups of `groupSize`, one statement per group (through the
    /// statement cache up to `cachedGroupSize` cells), each returning its cells' rows newest first after
    /// `after` (the cursor's time and id, in its band). Rows are stepped one at a time and `hit` decides
    /// each; newest first (in a band, or overall), each statement stops once `need` (`size + 1` less what
    /// the band's earlier bands found) hits are found, so all groups' hits together hold the band's newest
    /// `need` for the caller to order. `statement` makes a group's statement from its cells, `after` and
    /// `need`.
    static func walk<Hit>(
        _ db: Database,
        bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        order: WalkOrder,
        cursor: (distance: Double?, createdAt: Int64, id: String)?,
        size: Int,
        groupSize: Int,
        cachedGroupSize: Int,
        shapes: BoundedStatementShapes,
        statement: (
            _ cells: ArraySlice<ApproximateLocation.Cell>, _ after: (createdAt: Int64, id: String)?, _ need: Int
        ) -> (sql: String, arguments: StatementArguments),
        hit: (Row) -> Hit?
    ) throws -> [Hit] {
        var hits: [Hit] = []
        var found = 0
        for band in bands {
            if order == .distance, let distance = cursor?.distance, band.distance < distance { continue }
            let after: (createdAt: Int64, id: String)? = cursor.flatMap { cursor in
                switch order {
                case .distance: cursor.distance == band.distance ? (cursor.createdAt, cursor.id) : nil
                case .newest: (cursor.createdAt, cursor.id)
                case .other: nil
                }
            }
            let need = order == .other ? Int.max : size + 1 - found
            for start in stride(from: 0, to: band.cells.count, by: groupSize) {
                let group = band.cells[start..<min(start + groupSize, band.cells.count)]
                let made = statement(group, after, need)
                let prepared = try db.boundedCachedStatement(
                    sql: made.sql,
                    shapes: shapes,
                    if: group.count <= cachedGroupSize
                )
                let rows = try Row.fetchCursor(prepared, arguments: made.arguments)
                var kept = 0
                while kept < need, let row = try rows.next() {
                    guard let next = hit(row) else { continue }
                    hits.append(next)
                    kept += 1
                }
                found += kept
            }
            if order == .distance, found > size { break }
        }
        return hits
    }
}
