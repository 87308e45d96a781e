import PostgresNIO
import SkiffDomain
import SkiffLostFound

extension PostgresLostFoundStore {
    /// Chooses how a search in a circle reads: ``PostgresGridCells/plan(_:table:column:order:armsPerCell:size:collectCost:filters:indexed:_:_:)``
    /// on `lost_found_item.cell`, the filters with an index of their own being keywords, categories and a
    /// building.
    static func circlePlan(
        _ compiled: CompiledLostFoundQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> PostgresGridCells.Plan {
        let filter = compiled.query.filter
        guard let near = filter.near else { return .planner }
        var sql = PostgresQueryBuilder("EXPLAIN SELECT 1 FROM lost_found_item AS i WHERE ")
        sql.append(filterConditions(compiled, &sql).joined(separator: " AND "))
        return try await PostgresGridCells.plan(
            LostFoundSearchEngine.grid(near),
            table: "lost_found_item",
            column: "cell",
            order: compiled.query.sort == .distance ? .distance : .newest,
            armsPerCell: 1,
            size: size,
            collectCost: collectCost,
            filters: sql.query,
            indexed: !compiled.terms.isEmpty || !filter.categories.isEmpty || compiled.buildingKey != nil,
            db,
            storage
        )
    }

    /// The most walk steps an item read by a filter's index and sorted is worth.
    static let collectCost = 8.0

    /// The candidates of a page of a search in a circle, read from the circle's occupied cells (`bands`).
    ///
    /// Everyone else's items are in the circle when their cell's centre is, and are shown the distance to
    /// it, rounded (``SkiffDomain/ApproximateLocation``): distance order is band by band of the circle's
    /// cells, newest first within a band, and newest first is all the cells as one band
    /// (``PostgresGridCells/walk(bands:byDistance:cursor:size:cellsPerStatement:statementBudget:statement:hit:_:_:)``).
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
        groupSize: Int = PostgresGridCells.armsPerStatement,
        statementBudget: Int = PostgresGridCells.walkStatementBudget,
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
        sql.append(PostgresGridCells.merged(arms, limit: limit))
        return sql.query
    }
}
