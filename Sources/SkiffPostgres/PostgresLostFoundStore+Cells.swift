import PostgresNIO
import SkiffDomain
import SkiffLostFound

extension PostgresLostFoundStore {
    /// The cells one band statement merges (the arms of its `UNION ALL`); a band with more runs one
    /// statement per group of its cells.
    static let cellsPerStatement = 32

    /// The most occupied cells a search newest first in a circle walks (every one is read: four statements
    /// of ``cellsPerStatement``); a circle with more is read another way.
    static let newestCellsBound = 4 * cellsPerStatement

    /// The most statements a walk of a circle's cells runs before it gives up for the planner's statement.
    static let walkStatementBudget = 32

    /// How a search reads (``circlePlan(_:size:_:_:)``).
    enum CirclePlan {
        /// Walk the circle's occupied cells (``bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``), these bands.
        case cells([(distance: Double, cells: [ApproximateLocation.Cell])])
        /// The filters keep few items: read them by the filters' indexes, not by the circle's box.
        case matches
        /// The circle holds many items: walk the newest-first index, checking the circle and the filters
        /// on each item, until the page is full.
        case walk
        /// No circle, or one whose box wraps, or holding few items: the planner's choice (which reads a
        /// circle's box by the GiST index when it holds few items).
        case planner
    }

    /// Chooses how a search in a circle reads, by estimated cost, as listing search does on PostgreSQL
    /// (`PostgresListingsStore.circlePlan`).
    ///
    /// A walk steps through about `(size + 1) · total / matching` items to fill a page, where `matching` is
    /// what the statuses, categories, building and keywords keep; reading the matches costs about
    /// `matching` times ``collectCost``. Both break even at `√((size + 1) · total / collectCost)` items. So
    /// keywords, categories or a building keeping fewer than that (the planner's estimate: an `EXPLAIN`,
    /// statistics, not a scan) are read by their own indexes (``CirclePlan/matches``); otherwise
    /// distance order walks the circle's cells band by band, and so does newest first when the circle has
    /// at most ``newestCellsBound`` occupied cells (either walk gives up after ``walkStatementBudget``
    /// statements for the planner's statement); otherwise newest first walks the newest-first index when
    /// (``CirclePlan/walk``) when that steps through fewer items than reading the circle's box costs
    /// (`PostgresGridCells.walkBeatsBox`, with the circle's items estimated from the statistics of `cell`),
    /// and reads the box when not.
    static func circlePlan(
        _ compiled: CompiledLostFoundQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> CirclePlan {
        let filter = compiled.query.filter
        guard let near = filter.near else { return .planner }
        let total = Double(try await PostgresEstimates.rows(in: "lost_found_item", db, storage))
        let breakEven = (Double(size + 1) * max(total, 1) / collectCost).squareRoot()
        var sql = PostgresQueryBuilder("EXPLAIN SELECT 1 FROM lost_found_item AS i WHERE ")
        sql.append(filterConditions(compiled, &sql).joined(separator: " AND "))
        let matching = total > 0 ? Double(try await PostgresEstimates.rows(sql.query, db, storage)) : 0
        let indexed = !compiled.terms.isEmpty || !filter.categories.isEmpty || compiled.buildingKey != nil
        if indexed, total > 0, matching < breakEven { return .matches }
        let grid = LostFoundSearchEngine.grid(near)
        guard let bands = try await PostgresGridCells.bands(grid, table: "lost_found_item", column: "cell", db, storage)
        else { return .planner }
        let cells = bands.flatMap(\.cells)
        if compiled.query.sort == .distance || cells.count <= newestCellsBound { return .cells(bands) }
        guard total > 0 else { return .planner }
        let inCircle = try await PostgresGridCells.estimatedRows(
            in: cells,
            table: "lost_found_item",
            column: "cell",
            db,
            storage
        )
        let walks = PostgresGridCells.walkBeatsBox(
            size: size,
            total: total,
            matching: matching,
            inCircle: inCircle,
            collectCost: collectCost
        )
        return walks ? .walk : .planner
    }

    /// The most walk steps an item read by a filter's index and sorted is worth.
    static let collectCost = 8.0

    /// The candidates of a page of a search in a circle, read from the circle's occupied cells (`bands`).
    ///
    /// Everyone else's items are in the circle when their cell's centre is, and are shown the distance to
    /// it, rounded (``SkiffDomain/ApproximateLocation``): distance order is band by band of the circle's
    /// cells, newest first within a band, and newest first is all the cells as one band
    /// (``PostgresGridCells/walk(bands:byDistance:cursor:size:cellsPerStatement:statement:hit:_:_:)``).
    /// Each group of cells is one statement (``bandStatement(_:cells:after:limit:)``) merging the cells'
    /// runs of the `lost_found_item_cell` index under the page's limit, the other filters checked in SQL.
    /// The searcher's own items are measured to their exact points: read apart on the reporter's index
    /// (the first `size + 1` after the cursor) and merged in by `LostFoundSearchEngine.page`.
    ///
    /// `nil` when the walk would take more than `statementBudget` statements.
    ///
    /// Bounded by: one index seek per occupied cell of the walked bands, one statement per group of them,
    /// at most `size + 1` rows per statement, and the searcher's own items in the circle's box.
    static func bandWalk(
        _ compiled: CompiledLostFoundQuery,
        bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        size: Int,
        groupSize: Int = cellsPerStatement,
        statementBudget: Int = walkStatementBudget,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [LostFoundSearchEngine.Hit]? {
        var own: [LostFoundSearchEngine.Hit] = []
        if let viewer = compiled.query.viewerID {
            let statement = searchQuery(compiled, limit: size + 1, reporter: viewer)
            for item in try await PostgresLostFoundItemRows.items(db.run(statement, storage)) {
                if let hit = LostFoundSearchEngine.hit(item, compiled) { own.append(hit) }
            }
        }
        let walked = try await PostgresGridCells.walk(
            bands: bands,
            byDistance: compiled.query.sort == .distance,
            cursor: compiled.cursor.map { (distance: $0.d, createdAt: $0.c, id: $0.i) },
            size: size,
            cellsPerStatement: groupSize,
            statementBudget: statementBudget,
            statement: { cells, after, need in bandStatement(compiled, cells: cells, after: after, limit: need) },
            hit: { row in
                LostFoundSearchEngine.hit(try PostgresLostFoundItemRows.item(row.makeRandomAccess()), compiled)
            },
            db,
            storage
        )
        return walked.map { own + $0 }
    }

    /// The statement of one band (or group of a band's cells) for ``bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``:
    /// the first `limit` items of `cells`, newest first after `after`, that pass the search's statuses,
    /// categories, building and keywords and are not the searcher's own. Each cell is one arm,
    /// `ORDER BY created_at DESC, id DESC LIMIT limit` on the `lost_found_item_cell` index; the arms are
    /// merged in the same order under the same limit.
    static func bandStatement(
        _ compiled: CompiledLostFoundQuery,
        cells: ArraySlice<ApproximateLocation.Cell>,
        after: (createdAt: Int64, id: String)?,
        limit: Int
    ) -> PostgresQuery {
        var sql = PostgresQueryBuilder("")
        var conditions = filterConditions(compiled, &sql)
        if let viewer = compiled.query.viewerID { conditions.append("i.reporter_id <> \(sql.bind(viewer))") }
        if let after {
            conditions.append("(i.created_at, i.id) < (\(sql.bind(after.createdAt)), \(sql.bind(after.id)))")
        }
        let filters = conditions.joined(separator: " AND ")
        let limit = sql.bind(Int64(limit))
        let arms = cells.map { cell in
            """
            (SELECT \(PostgresLostFoundItemRows.columns("i")) FROM lost_found_item AS i
            WHERE i.cell = \(sql.bind(cell.key)) AND \(filters)
            ORDER BY i.created_at DESC, i.id DESC LIMIT \(limit))
            """
        }
        sql.append(
            "SELECT * FROM (" + arms.joined(separator: " UNION ALL ")
                + ") AS band ORDER BY created_at DESC, id DESC LIMIT \(limit)"
        )
        return sql.query
    }
}
