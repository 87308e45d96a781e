import GRDB
import SkiffDomain
import SkiffListings

extension SQLiteListingsStore {
    /// The (cell, status) pairs one band statement merges (the arms of its compound `SELECT`); a band with
    /// more runs one statement per group of its cells.
    static let armsPerStatement = 32

    /// Band statements of up to this many arms go through the statement cache.
    static let cachedArmCount = 8

    /// How a search in distance order reads: through the circle's cells
    /// (``bandWalk(_:_:occupied:size:shapes:groupSize:)``, `occupied`: ``occupiedCells(_:_:)``), by reading a
    /// narrow price range and sorting it (``ListingSearchSQL/priceRange(_:_:)``), by collecting the keyword
    /// matches and sorting them (``ListingSearchSQL/Plan/collect``, when `ListingSearchEngine.walksCells` says
    /// they are fewer than the walk would step through: matches estimated from `listingWordCount`, the
    /// circle's listings counted from `occupied`), or through the seller's index when a seller is named
    /// (``ListingSearchSQL/Plan/planner``; also for a box that wraps, which reads the box). Tags are checked
    /// on the walk. Reads `MAX(docID)`, at most ``ListingSearchSQL/priceRangeBound`` entries of a price index,
    /// and one entry of `listingWordCount` per term (``ListingSearchSQL/prefixEstimateWords`` for the last).
    static func distancePlan(
        _ db: Database,
        _ compiled: CompiledListingQuery,
        size: Int,
        occupied: CircleCells?
    ) throws -> ListingSearchSQL.Plan {
        guard let occupied, compiled.query.filter.near != nil, compiled.query.filter.sellerID == nil else {
            return .planner
        }
        // A narrow price range is read and sorted, as a walk of the cells would step through about
        // `(size + 1) · total / range` listings.
        let total = try ListingSearchSQL.listingCount(db)
        if let range = try ListingSearchSQL.priceRange(compiled, db),
            range.listings < Double(size + 1) * total / max(range.listings, 1)
        {
            return .walk(index: range.index)
        }
        guard !compiled.terms.isEmpty else { return .cells }
        let walks = ListingSearchEngine.walksCells(
            matches: try ListingSearchSQL.estimatedMatches(compiled, total: total, db),
            inCircle: Double(occupied.listings),
            total: total,
            size: size,
            selectivity: ListingSearchEngine.filterSelectivity(compiled, categoryLeadsIndex: false)
        )
        return walks ? .cells : .collect
    }

    /// The cells of a circle that hold listings: the occupied cells whose centres are in the circle, by band
    /// of shown distance (``SkiffDomain/GridCircle/bands(_:)``, nearest first), and how many listings they
    /// hold. Found once per search, for its plan and its walk.
    struct CircleCells {
        let bands: [(distance: Double, cells: [ApproximateLocation.Cell])]
        /// The listings of the bands' cells (every status).
        let listings: Int64
        /// The bands' cells.
        let cellCount: Int
    }

    /// The cells of the circle holding listings (``CircleCells``), from `listingCell` ("listings-v6"): one
    /// range lookup per row of the circle's box (at most about 900 at the largest radius); `nil` when the box
    /// wraps around the antimeridian or a pole.
    static func occupiedCells(_ db: Database, _ near: GeoCircle) throws -> CircleCells? {
        let grid = ListingSearchEngine.grid(near)
        guard let box = grid.boxCells else { return nil }
        let counts = try GridCells.occupied(db, table: "listingCell", count: "listings", box: box)
        let bands = grid.bands(counts.keys)
        var listings: Int64 = 0
        var cellCount = 0
        for band in bands {
            cellCount += band.cells.count
            for cell in band.cells { listings += counts[cell] ?? 0 }
        }
        return CircleCells(bands: bands, listings: listings, cellCount: cellCount)
    }

    /// The candidates of a page of a search in a circle, read from the circle's grid cells (`occupied`:
    /// ``occupiedCells(_:_:)``).
    ///
    /// Everyone but the searcher sees a listing at its cell's centre, at that distance rounded
    /// (``SkiffDomain/ApproximateLocation``), and it is in the circle when its cell's centre is; so distance
    /// order is band by band of the circle's cells (``SkiffDomain/GridCircle/bands(_:)``), newest first
    /// within a band, and any other order reads the circle's cells as one band. Each band's listings come
    /// from ``bandStatement(_:cells:statuses:after:)`` (one statement per `groupSize` of its (cell, status)
    /// pairs), which walks the `(cell, status, createdAt, id)` index newest first and checks every other
    /// filter and keyword in SQL; rows are stepped one at a time and checked with `ListingSearchEngine.hit`.
    /// Newest first (in a band, or overall), each statement stops once `size + 1` are found, and distance
    /// order stops at the end of the band that fills the page; price and title order read every listing of
    /// the cells, and `ListingSearchEngine.page` sorts. The searcher's own listings are measured to their
    /// exact points: read apart (``ListingSearchSQL/statement(_:limit:plan:seller:)`` with the seller: the
    /// `size + 1` first after the cursor) and merged in by `ListingSearchEngine.page`.
    ///
    /// Bounded by: one index seek per occupied cell of the circle and status at most, one statement per
    /// group of them; the rows stepped until `size + 1` pass every filter (per group of a band's cells), or
    /// in price and title order the circle's listings (chosen only when the plan's estimate says that costs
    /// least), each with one probe of `listingWord` per keyword and one count of `listingTag` for the tags;
    /// and the searcher's own listings in the circle's box.
    static func bandWalk(
        _ db: Database,
        _ compiled: CompiledListingQuery,
        occupied: CircleCells,
        size: Int,
        shapes: BoundedStatementShapes,
        groupSize: Int = armsPerStatement
    ) throws -> [ListingSearchEngine.Hit] {
        let sort = compiled.query.sort
        var bands = occupied.bands
        if sort != .distance, !bands.isEmpty { bands = [(distance: 0, cells: bands.flatMap(\.cells))] }
        var hits: [ListingSearchEngine.Hit] = []
        let viewer = compiled.query.viewerID
        if let viewer {
            let own = ListingSearchSQL.statement(compiled, limit: size + 1, seller: viewer)
            hits += try ListingRow.fetchAll(db, sql: own.sql, arguments: own.arguments)
                .compactMap { ListingSearchEngine.hit($0, compiled) }
        }
        let statuses = compiled.statuses.map(\.rawValue).sorted()
        var layout: ListingRow.Layout?
        return try hits
            + GridCells.walk(
                db,
                bands: bands,
                order: sort == .distance ? .distance : sort == .newest ? .newest : .other,
                cursor: compiled.cursor.map { (distance: $0.d, createdAt: $0.c, id: $0.i) },
                size: size,
                groupSize: max(1, groupSize / statuses.count),
                cachedGroupSize: max(1, cachedArmCount / statuses.count),
                shapes: shapes,
                statement: { group, after, _ in
                    let statement = bandStatement(compiled, cells: group, statuses: statuses, after: after)
                    return (statement.sql, statement.arguments)
                },
                hit: { row in
                    let positions = layout ?? ListingRow.Layout(row)
                    layout = positions
                    let listing = ListingRow.listing(row, positions)
                    guard listing.sellerID != viewer else { return nil }
                    return ListingSearchEngine.hit(listing, compiled, keywordsMatched: true)
                }
            )
    }

    /// The statement of one band (or group of a band's cells) for ``bandWalk(_:_:occupied:size:shapes:groupSize:)``:
    /// the listings of `cells` in `statuses`, newest first after `after`, that pass the search's other
    /// filters and keywords.
    ///
    /// Each (cell, status) pair is one arm of a compound `SELECT … UNION ALL … ORDER BY createdAt DESC, id
    /// DESC` walking the `(cell, status, createdAt, id)` index; SQLite merges the arms lazily in a
    /// co-routine and checks the filters on the merged rows. The outer query has no `ORDER BY` of its own (one
    /// would make SQLite flatten the query and sort each arm): it relies on SQLite returning a subquery's rows
    /// in the subquery's order, which it does (3.40) but SQL does not promise; the search plan tests check
    /// the plan, and the differential tests the results.
    static func bandStatement(
        _ compiled: CompiledListingQuery,
        cells: ArraySlice<ApproximateLocation.Cell>,
        statuses: [String],
        after: (createdAt: Int64, id: String)?
    ) -> ListingSearchSQL.Statement {
        var arguments: StatementArguments = []
        var arms: [String] = []
        for cell in cells {
            for status in statuses {
                var arm = "SELECT l.* FROM listing l WHERE l.cell = ? AND l.status = ?"
                arguments += [GridCells.key(cell), status]
                if let since = compiled.query.filter.postedSince {
                    // Each arm stops at the oldest time the filter allows.
                    arm += " AND l.createdAt >= ?"
                    arguments += [since.millisecondsSince1970]
                }
                if let after {
                    arm += " AND l.createdAt <= ? AND (l.createdAt < ? OR (l.createdAt = ? AND l.id < ?))"
                    arguments += [after.createdAt, after.createdAt, after.createdAt, after.id]
                }
                arms.append(arm)
            }
        }
        // The unary `+` keeps SQLite from reading by another index when it pushes a condition into the arms.
        var conditions = ListingSearchSQL.filterConditions(compiled) { "+listing.\($0)" }
        ListingSearchSQL.appendKeywordProbes(&conditions, compiled)
        arguments += conditions.arguments
        return ListingSearchSQL.Statement(
            sql: """
                SELECT listing.* FROM (\(arms.joined(separator: " UNION ALL ")) ORDER BY createdAt DESC, id DESC) \
                listing WHERE \(conditions.sql)
                """,
            arguments: arguments
        )
    }
}
