import PostgresNIO
import SkiffDomain
import SkiffListings

extension PostgresListingsStore {
    /// The (cell, status) pairs one band statement merges (the arms of its `UNION ALL`); a band with more
    /// runs one statement per group of its cells.
    static let armsPerStatement = 32

    /// The cells of a circle that hold listings (of any status), by band of shown distance
    /// (``SkiffDomain/GridCircle/bands(_:)``, nearest first), from the `listing_search_cell` index
    /// ("listings-v2"): one statement that skips through the index row by row of the circle's box (a
    /// recursive query: one index probe per row of the box and per occupied cell, at most about 900 rows
    /// at the largest radius). `nil` when the box wraps around the antimeridian or a pole.
    static func circleBands(
        _ near: GeoCircle,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        let grid = ListingSearchEngine.grid(near)
        guard let box = grid.boxCells else { return nil }
        let firsts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.lowerBound).key }
        let lasts = box.map { ApproximateLocation.Cell(row: $0.row, column: $0.columns.upperBound).key }
        var cells: [ApproximateLocation.Cell] = []
        for try await key in try await db.run(
            """
            WITH RECURSIVE found (cell, last) AS (
                SELECT (SELECT min(l.search_cell) FROM listing AS l WHERE l.search_cell BETWEEN r.first AND r.last),
                    r.last
                FROM unnest(\(firsts)::bigint[], \(lasts)::bigint[]) AS r (first, last)
                UNION ALL
                SELECT (SELECT min(l.search_cell) FROM listing AS l WHERE l.search_cell > f.cell AND l.search_cell <= f.last),
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

    /// How a search in a circle reads (``circlePlan(_:size:_:_:)``).
    enum CirclePlan {
        /// Walk the circle's occupied cells (``bandWalk(_:bands:size:groupSize:_:_:)``), these bands.
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
    /// - filters keeping fewer than that (the planner's estimate of them, without the circle: an
    ///   `EXPLAIN`, statistics, not a scan) are read by their indexes: ``CirclePlan/matches``;
    /// - otherwise distance order walks the circle's cells band by band (``CirclePlan/cells``), and so
    ///   does newest first when the circle has at most ``newestCellsBound`` occupied (cell, status) pairs
    ///   (it reads all of them);
    /// - otherwise a circle holding more listings than the break-even (estimated from the statistics of
    ///   `search_cell` for the circle's cells) walks the order's index (``CirclePlan/walk``), and a
    ///   circle holding fewer is read by its box (``CirclePlan/planner``).
    ///
    /// Costs: the occupied-cell lookup (``circleBands(_:_:_:)``) and up to two `EXPLAIN`s.
    static func circlePlan(
        _ query: CompiledListingQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> CirclePlan {
        let filter = query.query.filter
        guard let near = filter.near, filter.sellerID == nil, !query.statuses.isEmpty,
            let bands = try await circleBands(near, db, storage)
        else { return .planner }
        let total = try await ListingsSearchSQL.listingCount(db, storage)
        let breakEven = (Double(size + 1) * Double(max(total, 1)) / ListingsSearchSQL.collectCost).squareRoot()
        let statuses = query.statuses.map(\.rawValue).sorted()
        var sql = PostgresQueryBuilder("")
        let conditions = ListingsSearchSQL.filterConditions(query, &sql)
        if !conditions.isEmpty, total > 0 {
            sql.append(
                "EXPLAIN SELECT 1 FROM listing WHERE listing.status = ANY(\(sql.bind(statuses))::text[]) AND "
                    + conditions.joined(separator: " AND ")
            )
            let matching = try await ListingsSearchSQL.estimatedRows(sql.query, db, storage)
            if Double(matching) < breakEven { return .matches }
        }
        let cells = bands.flatMap(\.cells)
        switch query.query.sort {
        case .distance: return .cells(bands)
        case .newest where cells.count * statuses.count <= newestCellsBound: return .cells(bands)
        case .relevance where !query.terms.isEmpty: return .planner  // every match is scored
        default: break
        }
        // No cell centre in the circle: no one else's listing is in it, only the searcher's own.
        if cells.isEmpty { return .cells([]) }
        guard total > 0 else { return .planner }
        let inCircle = try await ListingsSearchSQL.estimatedRows(
            "EXPLAIN SELECT 1 FROM listing WHERE search_cell = ANY(\(cells.map(\.key))::bigint[])",
            db,
            storage
        )
        return Double(inCircle) < breakEven ? .planner : .walk
    }

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
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [ListingSearchEngine.Hit] {
        var hits: [ListingSearchEngine.Hit] = []
        func add(_ statement: PostgresQuery) async throws -> Int {
            var added = 0
            for try await row in try await db.run(statement, storage) {
                guard let hit = ListingSearchEngine.hit(try ListingsRows.listing(row), query, keywordsMatched: true)
                else { continue }
                hits.append(hit)
                added += 1
            }
            return added
        }
        if let viewer = query.query.viewerID {
            _ = try await add(ListingsSearchSQL.statement(query, limit: size + 1, seller: viewer))
        }
        let statuses = query.statuses.map(\.rawValue).sorted()
        guard !statuses.isEmpty else { return hits }
        let cellsPerStatement = max(1, groupSize / statuses.count)
        // Newest first, the circle's cells are one band.
        let byDistance = query.query.sort == .distance
        let bands = byDistance || bands.isEmpty ? bands : [(distance: 0, cells: bands.flatMap(\.cells))]
        var found = 0
        for band in bands {
            let cursor = query.cursor
            if byDistance, let distance = cursor?.d, band.distance < distance { continue }
            let after = cursor.flatMap { !byDistance || $0.d == band.distance ? (createdAt: $0.c, id: $0.i) : nil }
            let need = size + 1 - found
            for start in stride(from: 0, to: band.cells.count, by: cellsPerStatement) {
                let group = band.cells[start..<min(start + cellsPerStatement, band.cells.count)]
                found += try await add(
                    bandStatement(query, cells: group, statuses: statuses, after: after, limit: need)
                )
            }
            if found > size { break }
        }
        return hits
    }

    /// The statement of one band (or group of a band's cells) for ``bandWalk(_:bands:size:groupSize:_:_:)``:
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
