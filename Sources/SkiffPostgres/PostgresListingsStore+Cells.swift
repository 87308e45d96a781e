import PostgresNIO
import SkiffDomain
import SkiffListings

extension PostgresListingsStore {
    /// The (cell, status) pairs one band statement merges (the arms of its `UNION ALL`); a band with more
    /// runs one statement per group of its cells.
    static let armsPerStatement = 32

    /// The cells of a circle that hold listings (of any status), by band of shown distance, from the
    /// `listing_search_cell` index ("listings-v2"): ``PostgresGridCells/bands(_:table:column:_:_:)``.
    static func circleBands(
        _ near: GeoCircle,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        try await PostgresGridCells.bands(
            ListingSearchEngine.grid(near),
            table: "listing",
            column: "search_cell",
            db,
            storage
        )
    }

    /// How a search in a circle reads (``circlePlan(_:size:_:_:)``).
    enum CirclePlan {
        /// Walk the circle's occupied cells (``bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``), these bands.
        case cells([(distance: Double, cells: [ApproximateLocation.Cell])])
        /// The filters keep few listings: read them by the filters' indexes (the keywords' GIN index, …),
        /// not by the circle's box, and sort them.
        case matches
        /// The circle holds many listings: walk the order's index, checking the circle and the filters on
        /// each listing, until the page is full.
        case walk
        /// No circle, a seller named (the seller's index serves it), or a box that wraps: the planner's
        /// choice (which reads a circle's box by the GiST index when the circle holds few listings).
        case planner
    }

    /// Chooses how a search in a circle reads, by estimated cost.
    ///
    /// To fill a page, a walk steps through about `(size + 1) · total / matching` listings, where
    /// `matching` is what the filters keep; reading the matches costs about `matching` times
    /// ``ListingsSearchSQL/collectCost``. Both break even at `√((size + 1) · total / collectCost)`
    /// listings (about 510 at 100,000 listings and pages of 20). So:
    /// - relevance with keywords scores every match: the planner's (``CirclePlan/planner``);
    /// - filters with an index of their own (keywords, tags, categories, a price) keeping fewer than that
    ///   (the planner's estimate of them, without the circle: an `EXPLAIN`, statistics, not a scan) are
    ///   read by their indexes: ``CirclePlan/matches``;
    /// - otherwise distance order walks the circle's cells band by band (``CirclePlan/cells``), and so
    ///   does newest first when the circle has at most ``newestCellsBound`` occupied (cell, status) pairs
    ///   (it reads all of them); either walk gives up after ``walkStatementBudget`` statements for the
    ///   planner's statement;
    /// - otherwise the order's index is walked (``CirclePlan/walk``) when that steps through fewer listings
    ///   than reading the circle's box would cost: `(size + 1) · total / (inCircle · matching / total)`
    ///   against `inCircle · collectCost`, `inCircle` estimated from the statistics of `search_cell` for the
    ///   circle's cells (a sample of 1,024 of them when there are more); else the box
    ///   (``CirclePlan/planner``).
    ///
    /// Costs: up to three `EXPLAIN`s and the occupied-cell lookup (``circleBands(_:_:_:)``).
    static func circlePlan(
        _ query: CompiledListingQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> CirclePlan {
        let filter = query.query.filter
        guard let near = filter.near, filter.sellerID == nil, !query.statuses.isEmpty else { return .planner }
        if query.query.sort == .relevance, !query.terms.isEmpty { return .planner }  // every match is scored
        let total = Double(try await ListingsSearchSQL.listingCount(db, storage))
        let breakEven = (Double(size + 1) * max(total, 1) / ListingsSearchSQL.collectCost).squareRoot()
        let statuses = query.statuses.map(\.rawValue).sorted()
        var matching = total
        var sql = PostgresQueryBuilder("")
        let conditions = ListingsSearchSQL.filterConditions(query, &sql)
        if !conditions.isEmpty, total > 0 {
            sql.append(
                "EXPLAIN SELECT 1 FROM listing WHERE listing.status = ANY(\(sql.bind(statuses))::text[]) AND "
                    + conditions.joined(separator: " AND ")
            )
            matching = Double(try await PostgresEstimates.rows(sql.query, db, storage))
            let indexed =
                !query.terms.isEmpty || !query.tags.isEmpty || !filter.categories.isEmpty
                || filter.minPriceCents != nil || filter.maxPriceCents != nil
            if indexed, matching < breakEven { return .matches }
        }
        guard let bands = try await circleBands(near, db, storage) else { return .planner }
        let cells = bands.flatMap(\.cells)
        switch query.query.sort {
        case .distance: return .cells(bands)
        case .newest where cells.count * statuses.count <= newestCellsBound: return .cells(bands)
        default: break
        }
        // No cell centre in the circle: no one else's listing is in it, only the searcher's own.
        if cells.isEmpty { return .cells([]) }
        guard total > 0 else { return .planner }
        let inCircle = try await PostgresGridCells.estimatedRows(
            in: cells,
            table: "listing",
            column: "search_cell",
            db,
            storage
        )
        let walks = PostgresGridCells.walkBeatsBox(
            size: size,
            total: total,
            matching: matching,
            inCircle: inCircle,
            collectCost: ListingsSearchSQL.collectCost
        )
        return walks ? .walk : .planner
    }

    /// The most statements a walk of a circle's cells runs before it gives up for the planner's statement
    /// (a circle of very many occupied cells whose filters keep few listings near its centre).
    static let walkStatementBudget = 32

    /// The most (cell, status) pairs a search newest first in a circle walks (every one is read: four
    /// statements of ``armsPerStatement``); a circle with more is read another way.
    static let newestCellsBound = 4 * armsPerStatement

    /// The candidates of a page of a search in distance order (or newest first), read from the circle's
    /// occupied cells (`bands`: ``circleBands(_:_:_:)``).
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
        groupSize: Int = armsPerStatement,
        statementBudget: Int = walkStatementBudget,
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
        sql.append(
            "SELECT * FROM (" + arms.joined(separator: " UNION ALL ")
                + ") AS band ORDER BY created_at DESC, id DESC LIMIT \(limit)"
        )
        return sql.query
    }
}
