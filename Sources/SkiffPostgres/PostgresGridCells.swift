import PostgresNIO
import SkiffDomain

/// The grid cells (``SkiffDomain/ApproximateLocation``) of private points on PostgreSQL: finding a circle's
/// occupied cells on a table's cell index, and walking them band by band. Listings (`listing.search_cell`,
/// "listings-v2") and lost-and-found items (`lost_found_item.cell`, "lostfound-v2") share it.
enum PostgresGridCells {
    /// The cells of `grid`'s circle that hold rows of `table` (any status), by band of shown distance
    /// (``SkiffDomain/GridCircle/bands(_:)``, nearest first), from an index led by `column` (the cell key,
    /// ``SkiffDomain/ApproximateLocation/Cell/key``): one statement that skips through the index row by
    /// row of the circle's box (a recursive query: one index probe per row of the box and per occupied
    /// cell, at most about 900 rows at the largest radius). `nil` when the box wraps around the
    /// antimeridian or a pole.
    static func bands(
        _ grid: GridCircle,
        table: String,
        column: String,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        guard let box = grid.boxCells else { return nil }
        let firsts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.lowerBound).key }
        let lasts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.upperBound).key }
        var cells: [ApproximateLocation.Cell] = []
        // The planner's estimate of a recursive query is large (it cannot know the probes stop early), large
        // enough to compile it just in time: ~25 ms of compiling for ~1 ms of work. Not for this read.
        try await db.run("SET LOCAL jit = off", storage)
        for try await key in try await db.run(
            """
            WITH RECURSIVE found (cell, last) AS (
                SELECT (SELECT min(t.\(unescaped: column)) FROM \(unescaped: table) AS t
                        WHERE t.\(unescaped: column) BETWEEN r.first AND r.last),
                    r.last
                FROM unnest(\(firsts)::bigint[], \(lasts)::bigint[]) AS r (first, last)
                UNION ALL
                SELECT (SELECT min(t.\(unescaped: column)) FROM \(unescaped: table) AS t
                        WHERE t.\(unescaped: column) > f.cell AND t.\(unescaped: column) <= f.last),
                    f.last
                FROM found AS f WHERE f.cell IS NOT NULL
            )
            SELECT cell FROM found WHERE cell IS NOT NULL
            """,
            storage
        ).decode(Int64.self) {
            cells.append(ApproximateLocation.Cell(key: key))
        }
        return grid.bands(cells)
    }

    /// How many rows of `table` the planner expects in `cells` (from the statistics of `column`), from a
    /// sample of at most 1,024 of them scaled up: an `EXPLAIN` of a long list costs its length to plan.
    static func estimatedRows(
        in cells: [ApproximateLocation.Cell],
        table: String,
        column: String,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> Double {
        let stride = max(1, (cells.count + 1_023) / 1_024)
        let sample = Swift.stride(from: 0, to: cells.count, by: stride).map { cells[$0].key }
        let rows = try await PostgresEstimates.rows(
            "EXPLAIN SELECT 1 FROM \(unescaped: table) WHERE \(unescaped: column) = ANY(\(sample)::bigint[])",
            db,
            storage
        )
        return Double(rows) * Double(cells.count) / Double(max(sample.count, 1))
    }

    /// Whether walking an order's index (checking the circle and the filters on each row until the page
    /// is full) costs less than reading the circle's box and sorting it: the walk steps through about
    /// `(size + 1) · total / (inCircle · matching / total)` rows (the circle and the filters taken as
    /// independent), the box costs `inCircle · collectCost`; and a walk never costs more than the table.
    static func walkBeatsBox(size: Int, total: Double, matching: Double, inCircle: Double, collectCost: Double) -> Bool
    {
        let walkSteps = Double(size + 1) * total / max(1, inCircle * matching / max(total, 1))
        return walkSteps < min(total, inCircle * collectCost)
    }

    /// The hits of a walk of a circle's cells, `bands` nearest first: in distance order band by band
    /// (bands nearer than the cursor's skipped, the cursor's time and id applied in its own band), newest
    /// first as one band of all the cells (the cursor's time and id applied throughout). Each band's cells
    /// go `cellsPerStatement` to a statement (`statement`: a group's cells, `after`, and `need`, the rows
    /// still wanted, `size + 1` less what earlier bands found), whose rows `hit` decides; the walk stops at
    /// the end of the band in which `size + 1` hits are found. `nil` if that would take more than
    /// `statementBudget` statements (the caller reads another way).
    static func walk<Hit>(
        bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        byDistance: Bool,
        cursor: (distance: Double?, createdAt: Int64, id: String)?,
        size: Int,
        cellsPerStatement: Int,
        statementBudget: Int,
        statement: (
            _ cells: ArraySlice<ApproximateLocation.Cell>, _ after: (createdAt: Int64, id: String)?, _ need: Int
        )
            -> PostgresQuery,
        hit: (PostgresRow) throws -> Hit?,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [Hit]? {
        let bands = byDistance || bands.isEmpty ? bands : [(distance: 0, cells: bands.flatMap(\.cells))]
        var hits: [Hit] = []
        var statements = 0
        for band in bands {
            if byDistance, let distance = cursor?.distance, band.distance < distance { continue }
            let after = cursor.flatMap {
                !byDistance || $0.distance == band.distance ? (createdAt: $0.createdAt, id: $0.id) : nil
            }
            let need = size + 1 - hits.count
            for start in stride(from: 0, to: band.cells.count, by: cellsPerStatement) {
                guard statements < statementBudget else { return nil }
                statements += 1
                let group = band.cells[start..<min(start + cellsPerStatement, band.cells.count)]
                for try await row in try await db.run(statement(group, after, need), storage) {
                    if let next = try hit(row) { hits.append(next) }
                }
            }
            if hits.count > size { break }
        }
        return hits
    }
}
