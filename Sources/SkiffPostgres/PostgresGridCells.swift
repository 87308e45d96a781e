import PostgresNIO
import SkiffDomain

/// The grid cells (``SkiffDomain/ApproximateLocation``) of private points on PostgreSQL: finding a circle's
/// occupied cells on a table's cell index, and walking them band by band. Listings (`listing.search_cell`,
/// "listings-v2") and lost-and-found items (`lost_found_item.cell`, "lostfound-v2") share it.
enum PostgresGridCells {
    /// The (cell, status) pairs, or cells, one walk statement merges (the arms of its `UNION ALL`); a
    /// band with more runs one statement per group.
    static let armsPerStatement = 32

    /// The most arms a search newest first in a circle walks (it reads every one: four statements of
    /// ``armsPerStatement``); a circle with more is read another way.
    static let newestArmsBound = 4 * armsPerStatement

    /// The most statements a walk of a circle's cells runs before it gives up for the planner's statement
    /// (a circle of very many occupied cells whose filters keep few rows near its centre).
    static let walkStatementBudget = 32

    /// How a search in a circle reads (``plan(_:table:column:order:armsPerCell:size:collectCost:filters:indexed:_:_:)``).
    enum Plan {
        /// Walk the circle's occupied cells, these bands (``walk(bands:byDistance:cursor:size:cellsPerStatement:statementBudget:statement:hit:_:_:)``).
        case cells([(distance: Double, cells: [ApproximateLocation.Cell])])
        /// The filters keep few rows: read them by the filters' indexes, not by the circle's box.
        case matches
        /// The circle holds many rows: walk the order's index, checking the circle and the filters on each
        /// row, until the page is full.
        case walk
        /// The planner's choice, which reads the circle's box by the GiST index: the circle holds few rows,
        /// or its box wraps.
        case planner
    }

    /// The order a search in a circle asks for, as the plan sees it.
    enum Order {
        case distance, newest, other
    }

    /// Chooses how a search in a circle reads, by estimated cost.
    ///
    /// To fill a page, a walk steps through about `(size + 1) · total / matching` rows, where `matching` is
    /// what the filters keep; reading the matches costs about `matching` times `collectCost`. Both break
    /// even at `√((size + 1) · total / collectCost)` rows (about 510 at 100,000 rows and pages of 20). So:
    /// - `indexed` filters (an index of their own serves them) keeping fewer than that, by the planner's
    ///   estimate of `filters` (an `EXPLAIN` without the circle: statistics, not a scan), are read by their
    ///   indexes: ``Plan/matches``;
    /// - otherwise distance order walks the circle's cells band by band (``Plan/cells``), and so does
    ///   newest first when the circle's occupied cells times `armsPerCell` are at most
    ///   ``newestArmsBound``; a circle holding no cell centre holds only the searcher's own rows
    ///   (``Plan/cells`` with no bands);
    /// - otherwise the order's index is walked (``Plan/walk``) when ``walkBeatsBox(size:total:matching:inCircle:collectCost:)``
    ///   says so, the circle's rows estimated from the statistics of `column` for its cells
    ///   (``estimatedRows(in:table:column:_:_:)``); else the box (``Plan/planner``).
    ///
    /// Costs: up to two `EXPLAIN`s, a catalogue read and the occupied-cell lookup (``bands(_:table:column:_:_:)``).
    static func plan(
        _ grid: GridCircle,
        table: String,
        column: String,
        order: Order,
        armsPerCell: Int,
        size: Int,
        collectCost: Double,
        filters: PostgresQuery?,
        indexed: Bool,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> Plan {
        let total = Double(try await PostgresEstimates.rows(in: table, db, storage))
        let breakEven = (Double(size + 1) * max(total, 1) / collectCost).squareRoot()
        var matching = total
        if let filters, total > 0 {
            matching = Double(try await PostgresEstimates.rows(filters, db, storage))
            if indexed, matching < breakEven { return .matches }
        }
        guard let bands = try await bands(grid, table: table, column: column, db, storage) else { return .planner }
        let cells = bands.flatMap(\.cells)
        switch order {
        case .distance: return .cells(bands)
        case .newest where cells.count * armsPerCell <= newestArmsBound: return .cells(bands)
        default: break
        }
        if cells.isEmpty { return .cells([]) }
        guard total > 0 else { return .planner }
        let inCircle = try await estimatedRows(in: cells, table: table, column: column, db, storage)
        let walks = walkBeatsBox(
            size: size,
            total: total,
            matching: matching,
            inCircle: inCircle,
            collectCost: collectCost
        )
        return walks ? .walk : .planner
    }

    /// Makes this read's transaction walk the order's index for ``Plan/walk`` (`SET LOCAL`): no sequential
    /// scan, no bitmap (which reads every match before the first row), no sort.
    static func walkOrderIndex(_ db: PostgresConnection, _ storage: PostgresStorage) async throws {
        for setting in ["enable_seqscan", "enable_bitmapscan", "enable_sort"] {
            try await db.run("SET LOCAL \(unescaped: setting) = off", storage)
        }
    }

    /// The cells of `grid`'s circle that hold rows of `table` (any status), by band of shown distance
    /// (``SkiffDomain/GridCircle/bands(_:)``, nearest first), from an index led by `column` (the cell key,
    /// ``SkiffDomain/ApproximateLocation/Cell/key``), in one statement: the box's first and last occupied
    /// keys (two probes), then a skip through the index row by row of the box between them (a recursive
    /// query: one index probe per such row and per occupied cell, at most about 900 rows at the largest
    /// radius). `nil` when the box wraps around the antimeridian or a pole.
    static func bands(
        _ grid: GridCircle,
        table: String,
        column: String,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        guard let box = grid.boxCells, let top = box.first, let bottom = box.last else { return nil }
        let low = ApproximateLocation.Cell(row: top.row, column: top.columns.lowerBound).key
        let high = ApproximateLocation.Cell(row: bottom.row, column: bottom.columns.upperBound).key
        let firsts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.lowerBound).key }
        let lasts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.upperBound).key }
        var cells: [ApproximateLocation.Cell] = []
        // The planner's estimate of a recursive query is large (it cannot know the probes stop early), large
        // enough to compile it just in time: ~25 ms of compiling for ~1 ms of work. Not for this read.
        try await db.run("SET LOCAL jit = off", storage)
        // `occupied`: the box's first and last occupied keys (two probes), so rows of a wide box beyond
        // the data are not probed one by one.
        for try await key in try await db.run(
            """
            WITH RECURSIVE occupied (first, last) AS (
                SELECT min(t.\(unescaped: column)), max(t.\(unescaped: column)) FROM \(unescaped: table) AS t
                WHERE t.\(unescaped: column) BETWEEN \(low) AND \(high)
            ), found (cell, last) AS (
                SELECT (SELECT min(t.\(unescaped: column)) FROM \(unescaped: table) AS t
                        WHERE t.\(unescaped: column) BETWEEN r.first AND r.last),
                    r.last
                FROM unnest(\(firsts)::bigint[], \(lasts)::bigint[]) AS r (first, last), occupied AS o
                WHERE r.last >= o.first AND r.first <= o.last
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

    /// One walk statement from its arms (each a parenthesised `SELECT … ORDER BY created_at DESC, id DESC
    /// LIMIT limit` of one cell's run of the cell index): the arms merged in the same order under the
    /// same limit, which PostgreSQL runs as a Merge Append reading each arm only as far as the limit.
    static func merged(_ arms: [String], limit: String) -> String {
        "SELECT * FROM (" + arms.joined(separator: " UNION ALL ")
            + ") AS band ORDER BY created_at DESC, id DESC LIMIT \(limit)"
    }
}
