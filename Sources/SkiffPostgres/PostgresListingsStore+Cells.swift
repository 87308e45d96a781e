import PostgresNIO
import SkiffDomain
import SkiffListings

extension PostgresListingsStore {
    /// Chooses how a search in a circle reads: ``PostgresGridCells/plan(_:table:column:order:armsPerCell:size:collectCost:filters:indexed:_:_:)``
    /// on `listing.search_cell`, the filters with an index of their own being keywords, tags, categories
    /// and a price. Relevance with keywords scores every match, and a seller's index serves a seller's
    /// listings: the planner's (``PostgresGridCells/Plan/planner``), as for a search with no status.
    static func circlePlan(
        _ query: CompiledListingQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> PostgresGridCells.Plan {
        let filter = query.query.filter
        guard let near = filter.near, filter.sellerID == nil, !query.statuses.isEmpty else { return .planner }
        if query.query.sort == .relevance, !query.terms.isEmpty { return .planner }
        let statuses = query.statuses.map(\.rawValue).sorted()
        var sql = PostgresQueryBuilder("")
        let conditions = ListingsSearchSQL.filterConditions(query, &sql)
        sql.append(
            "EXPLAIN SELECT 1 FROM listing WHERE listing.status = ANY(\(sql.bind(statuses))::text[]) AND "
                + conditions.joined(separator: " AND ")
        )
        let order: PostgresGridCells.Order =
            switch query.query.sort {
            case .distance: .distance
            case .newest: .newest
            default: .other
            }
        return try await PostgresGridCells.plan(
            ListingSearchEngine.grid(near),
            table: "listing",
            column: "search_cell",
            order: order,
            armsPerCell: statuses.count,
            size: size,
            collectCost: ListingsSearchSQL.collectCost,
            filters: conditions.isEmpty ? nil : sql.query,
            indexed: !query.terms.isEmpty || !query.tags.isEmpty || !filter.categories.isEmpty
                || filter.minPriceCents != nil || filter.maxPriceCents != nil,
            db,
            storage
        )
    }

    /// The candidates of a page of a search in distance order (or newest first), read from the circle's
    /// occupied cells (`bands`: ``PostgresGridCells/bands(_:table:column:_:_:)`` on `listing.search_cell`).
    ///
    /// Everyone but the searcher sees a listing at its cell's centre, at that distance rounded
    /// (``SkiffDomain/ApproximateLocation``), and it is in the circle when its cell's centre is; so distance
    /// order is band by band of the circle's cells, newest first within a band (newest first: the cells
    /// as one band). Bands nearer than the cursor's are skipped; each band's listings come from ``bandStatement(_:cells:statuses:after:limit:)``
    /// (one statement per `groupSize` of its (cell, status) pairs), which walks each pair's run of the
    /// `listing_search_cell` index newest first, checks the other filters and keywords in SQL, and merges
    /// the pairs (a Merge Append under a Limit: PostgreSQL reads only as far as the limit); the walk stops
    /// at the end of the band that fills the page. The searcher's own listings are measured to their exact
    /// points: read apart (``ListingsSearchSQL/statement(_:limit:seller:)`` with the seller: the `size + 1`
    /// first after the cursor) and merged in by `ListingSearchEngine.page`.
    ///
    /// `nil` when the walk would take more than `statementBudget` statements.
    ///
    /// In another order `bands` must be empty (no cell centre in the circle): the page is then the
    /// searcher's own listings alone.
    ///
    /// Bounded by: one index seek per occupied (cell, status) of the circle's bands at most, one statement
    /// per group of them, at most `size + 1` rows per statement (each checked against the filters as the
    /// index is stepped), and the searcher's own listings in the circle's box.
    static func bandWalk(
        _ query: CompiledListingQuery,
        bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        size: Int,
        groupSize: Int = PostgresGridCells.armsPerStatement,
        statementBudget: Int = PostgresGridCells.walkStatementBudget,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [ListingSearchEngine.Hit]? {
        var own: [ListingSearchEngine.Hit] = []
        if let viewer = query.query.viewerID {
            let statement = ListingsSearchSQL.statement(query, limit: size + 1, seller: viewer)
            for try await row in try await db.run(statement, storage) {
                if let hit = ListingSearchEngine.hit(try ListingsRows.listing(row), query, keywordsMatched: true) {
                    own.append(hit)
                }
            }
        }
        let statuses = query.statuses.map(\.rawValue).sorted()
        guard !statuses.isEmpty else { return own }
        let walked = try await PostgresGridCells.walk(
            bands: bands,
            byDistance: query.query.sort == .distance,
            cursor: query.cursor.map { (distance: $0.d, createdAt: $0.c, id: $0.i) },
            size: size,
            cellsPerStatement: max(1, groupSize / statuses.count),
            statementBudget: statementBudget,
            statement: { cells, after, need in
                bandStatement(query, cells: cells, statuses: statuses, after: after, limit: need)
            },
            hit: { row in ListingSearchEngine.hit(try ListingsRows.listing(row), query, keywordsMatched: true) },
            db,
            storage
        )
        return walked.map { own + $0 }
    }

    /// The statement of one band (or group of a band's cells) for ``bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``:
    /// the first `limit` listings of `cells` in `statuses`, newest first after `after`, that pass the search's
    /// other filters and keywords and are not the searcher's own. Each (cell, status) pair is one arm,
    /// `ORDER BY created_at DESC, id DESC LIMIT limit` on the `listing_search_cell` index; the arms are
    /// merged in the same order under the same limit.
    static func bandStatement(
        _ query: CompiledListingQuery,
        cells: ArraySlice<ApproximateLocation.Cell>,
        statuses: [String],
        after: (createdAt: Int64, id: String)?,
        limit: Int
    ) -> PostgresQuery {
        var sql = PostgresQueryBuilder("")
        var conditions = ListingsSearchSQL.filterConditions(query, &sql)
        if let viewer = query.query.viewerID { conditions.append("listing.seller_id <> \(sql.bind(viewer))") }
        if let after {
            conditions.append(
                "(listing.created_at, listing.id) < (\(sql.bind(after.createdAt)), \(sql.bind(after.id)))"
            )
        }
        let filters = conditions.map { " AND " + $0 }.joined()
        let limit = sql.bind(limit)
        let statusPlaceholders = statuses.map { sql.bind($0) }
        var arms: [String] = []
        for cell in cells {
            let key = sql.bind(cell.key)
            for status in statusPlaceholders {
                arms.append(
                    """
                    (SELECT \(ListingsRows.columns) FROM listing
                    WHERE listing.search_cell = \(key) AND listing.status = \(status)\(filters)
                    ORDER BY listing.created_at DESC, listing.id DESC LIMIT \(limit))
                    """
                )
            }
        }
        sql.append(PostgresGridCells.merged(arms, limit: limit))
        return sql.query
    }
}
