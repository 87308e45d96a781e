import Foundation
import PostgresNIO
public import SkiffDomain
public import SkiffListings

extension PostgresListingsStore {
    /// Searches with one SQL statement (``ListingsSearchSQL``), or in a circle in distance order or
    /// newest first a few (a walk of the circle's grid cells, band by band in distance order,
    /// ``bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``, as ``circlePlan(_:size:_:_:)`` chooses): the filters, keywords, circle,
    /// order, keyset cursor and `LIMIT page + 1` all run inside PostgreSQL, so a page costs what its rows
    /// and the index entries touched cost, not the table. The page's rows are then checked by
    /// `ListingSearchEngine.hit` (the shared definition of the filters, which also supplies the distance
    /// shown; the keywords SQL matched are not tokenized again) and paged with its cursors; relevance
    /// comes from SQL, so the next page continues exactly where SQL stopped.
    public func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit> {
        let compiled = try CompiledListingQuery(query, page: page)
        let size = page.size
        let statement = ListingsSearchSQL.statement(compiled, limit: size + 1)
        let scored = compiled.query.sort == .relevance && !compiled.terms.isEmpty
        return try await storage.read { db in
            var statement = statement
            switch try await Self.circlePlan(compiled, size: size, db, storage) {
            case .cells(let bands):
                if let hits = try await Self.bandWalk(compiled, bands: bands, size: size, db, storage) {
                    return ListingSearchEngine.page(hits, compiled, size: size)
                }
                try await ListingsSearchSQL.choosePath(compiled, size: size, db, storage)
            case .matches:
                statement = ListingsSearchSQL.statement(compiled, limit: size + 1, boxIndexed: false)
                try await ListingsSearchSQL.choosePath(compiled, size: size, db, storage)
            case .walk:
                statement = ListingsSearchSQL.statement(compiled, limit: size + 1, boxIndexed: false)
                try await PostgresGridCells.walkOrderIndex(db, storage)
            case .planner:
                try await ListingsSearchSQL.choosePath(compiled, size: size, db, storage)
            }
            var hits: [ListingSearchEngine.Hit] = []
            for try await row in try await db.run(statement, storage) {
                let listing = try ListingsRows.listing(row)
                guard var hit = ListingSearchEngine.hit(listing, compiled, keywordsMatched: true) else { continue }
                if scored { hit.score = try row.makeRandomAccess()[ListingsSearchSQL.scoreColumn].decode(Int.self) }
                hits.append(hit)
            }
            return ListingSearchEngine.page(ordered: hits, compiled, size: size)
        }
    }
}

/// The SQL of listing search, one statement per query, built from a ``CompiledListingQuery``.
///
/// - Status leads every order index, so each status asked for is one branch that walks its index from
///   the cursor (`listing_newest`, `listing_price_ascending`, `listing_price_descending`,
///   `listing_title`) and stops at the limit; several statuses are one branch each, `UNION ALL`, the
///   first `limit` of them in order.
/// - Keywords: `search_words @@ tsquery` on the GIN index, every term an exact lexeme and the last a
///   prefix (`:*`), as FTS5 matches on SQLite; ``choosePath(_:size:_:_:)`` chooses between collecting
///   the matches from the GIN index and walking the order's index.
/// - Relevance: `SearchText`'s integer score, counted in SQL from the stored token arrays: per term, 3
///   for each matching title token, 2 for each tag token and 1 for each description token.
/// - Tags: `tags @> ARRAY[…]` (one condition whatever the number of tags), on a GIN index.
/// - A circle: the search point in a bounding box (`listing_search_point`, GiST), then the distance
///   rule of ``SkiffDomain/ApproximateLocation`` in SQL, operation for operation as Swift computes it
///   (``haversine(_:_:_:_:)``, ``rounded(_:)``), so that the filter, the order and the keyset compare
///   the very `Double`s the other backends compute.
enum ListingsSearchSQL {
    /// The listing columns, as named in a statement's output.
    static let outputColumns = [
        "id", "seller_id", "title", "description", "price_cents", "category", "condition", "size", "tags",
        "made_on_campus", "bidding_enabled", "anonymous", "zip_code", "latitude", "longitude", "image_ids", "status",
        "created_at", "updated_at",
    ]
    /// The position of the relevance score in a row (after the listing columns), then of the distance
    /// shown and the title key.
    static let scoreColumn = 19

    /// The values a statement binds once and refers to wherever it needs them.
    private struct Bound {
        var center: (latitude: String, longitude: String)?
        var radians = ""
        var earthRadius = ""
        var distanceStep = ""
        var viewer: String?
    }

    /// The statement for `query`, returning at most `limit` rows in the query's order after its cursor;
    /// with `seller`, only that seller's listings (the searcher's own, read apart from a walk of a circle's
    /// cells: ``PostgresListingsStore/bandWalk(_:bands:size:groupSize:statementBudget:_:_:)``).
    ///
    /// `boxIndexed: false` leaves out the circle's bounding box (the GiST index's condition; the exact
    /// distance condition stays), so the planner cannot read by it: for a circle holding most listings,
    /// where its statistics-free estimate of the box (a fixed fraction) would read the whole box
    /// (``PostgresGridCells/Plan``).
    static func statement(
        _ query: CompiledListingQuery,
        limit: Int,
        seller: String? = nil,
        boxIndexed: Bool = true
    ) -> PostgresQuery {
        var sql = PostgresQueryBuilder("")
        var bound = Bound()
        let filter = query.query.filter
        let sort = query.query.sort
        if let viewer = query.query.viewerID { bound.viewer = sql.bind(viewer) }

        // The filters every branch shares.
        var conditions = filterConditions(query, &sql)
        if let seller { conditions.append("listing.seller_id = \(sql.bind(seller))") }

        var shown = "NULL::double precision"
        if let near = filter.near {
            bound.center = (sql.bind(near.center.latitude), sql.bind(near.center.longitude))
            bound.radians = sql.bind(Double.pi / 180)
            bound.earthRadius = sql.bind(GreatCircle.earthRadiusKm)
            bound.distanceStep = sql.bind(ApproximateLocation.distanceStepKm)
            if boxIndexed {
                let box = ListingSearchEngine.boundingBox(near)
                let longitude = box.longitude ?? -180...180
                conditions.append(
                    "point(listing.search_longitude, listing.search_latitude) <@ box(point("
                        + "\(sql.bind(longitude.lowerBound)), \(sql.bind(box.latitude.lowerBound))), point("
                        + "\(sql.bind(longitude.upperBound)), \(sql.bind(box.latitude.upperBound))))"
                )
            }
            conditions.append("\(distance(bound, shown: false)) <= \(sql.bind(near.radiusKm))")
            if sort == .distance { shown = distance(bound, shown: true) }
        }
        // Relevance: counted once per match, in a lateral subquery the keyset and the order both read.
        var score = "0::bigint"
        var from = "listing"
        if sort == .relevance, !query.terms.isEmpty {
            score = "relevance.total"
            // One part per distinct (term, whole or prefix), its points times its repeats
            // (`TextSearch.queryParts`): a query repeating a word compares each listing's words with it once.
            let parts = TextSearch.queryParts(query.terms)
            from += """
                 CROSS JOIN LATERAL (
                    SELECT coalesce(sum(word.weight * term.times), 0) AS total FROM (
                        SELECT w, 3 FROM unnest(listing.title_words) AS w
                        UNION ALL SELECT w, 2 FROM unnest(listing.tag_words) AS w
                        UNION ALL SELECT w, 1 FROM unnest(listing.description_words) AS w
                    ) AS word (w, weight)
                    JOIN unnest(
                        \(sql.bind(parts.map(\.term)))::text[], \(sql.bind(parts.map(\.prefix)))::boolean[],
                        \(sql.bind(parts.map { Int32($0.times) }))::integer[]
                    ) AS term (t, prefix, times)
                        ON CASE WHEN term.prefix THEN starts_with(word.w, term.t) ELSE word.w = term.t END
                ) AS relevance
                """
        }

        let keyset = query.cursor.map { keysetCondition($0, query, &sql) } ?? "true"
        let order = orderClause(query)
        let output = (outputColumns + ["relevance_score", "distance_shown", "title_key"]).joined(separator: ", ")
        let filters = conditions.isEmpty ? "" : " AND " + conditions.joined(separator: " AND ")
        let limitPlaceholder = sql.bind(limit)
        let statuses = query.statuses.map(\.rawValue).sorted()
        let branches = statuses.map { status in
            """
            SELECT \(output) FROM (
                SELECT \(ListingsRows.columns), \(score) AS relevance_score, \(shown) AS distance_shown,
                    listing.title_key
                FROM \(from)
                WHERE listing.status = \(sql.bind(status))\(filters)
            ) AS hit
            WHERE \(keyset)
            ORDER BY \(order) LIMIT \(limitPlaceholder)
            """
        }
        switch branches.count {
        case 0: sql.append("SELECT \(ListingsRows.columns), 0, NULL::double precision, '' FROM listing WHERE false")
        case 1: sql.append(branches[0])
        default:
            sql.append(
                "SELECT \(output) FROM (" + branches.map { "(" + $0 + ")" }.joined(separator: " UNION ALL ")
                    + ") AS page ORDER BY \(order) LIMIT \(limitPlaceholder)"
            )
        }
        return sql.query
    }

    /// The conditions of the query's filters but its circle and statuses (categories, conditions, prices,
    /// made on campus, seller, posted since, tags, keywords), on the `listing` table's columns.
    static func filterConditions(_ query: CompiledListingQuery, _ sql: inout PostgresQueryBuilder) -> [String] {
        let filter = query.query.filter
        var conditions: [String] = []
        if !filter.categories.isEmpty {
            conditions.append("listing.category = ANY(\(sql.bind(filter.categories.map(\.rawValue).sorted()))::text[])")
        }
        if !filter.conditions.isEmpty {
            conditions.append(
                "listing.condition = ANY(\(sql.bind(filter.conditions.map(\.rawValue).sorted()))::text[])"
            )
        }
        if let min = filter.minPriceCents { conditions.append("listing.price_cents >= \(sql.bind(min))") }
        if let max = filter.maxPriceCents { conditions.append("listing.price_cents <= \(sql.bind(max))") }
        if let made = filter.madeOnCampus { conditions.append("listing.made_on_campus = \(sql.bind(made))") }
        if let seller = filter.sellerID {
            let anonymousToo = query.query.viewerID == seller
            conditions.append(
                "listing.seller_id = \(sql.bind(seller))" + (anonymousToo ? "" : " AND NOT listing.anonymous")
            )
        }
        if let since = filter.postedSince {
            conditions.append("listing.created_at >= \(sql.bind(since.millisecondsSince1970))")
        }
        var seen: Set<String> = []
        let tags = query.tags.filter { seen.insert($0).inserted }
        if !tags.isEmpty { conditions.append("listing.tags @> \(sql.bind(tags))::text[]") }
        if !query.terms.isEmpty {
            conditions.append("listing.search_words @@ \(sql.bind(tsquery(query.terms)))::tsquery")
        }
        return conditions
    }

    /// The `tsquery` of the terms: each an exact lexeme, the last a prefix; all required; each of
    /// `TextSearch.queryParts` once.
    static func tsquery(_ terms: [String]) -> String {
        TextSearch.queryParts(terms).map { part in
            let quoted = part.term.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "'",
                with: "''"
            )
            return "'\(quoted)'" + (part.prefix ? ":*" : "")
        }.joined(separator: " & ")
    }

    /// The order of the query's results, on the statement's output columns.
    static func orderClause(_ query: CompiledListingQuery) -> String {
        let tail = "created_at DESC, id DESC"
        switch query.query.sort {
        case .priceAscending: return "price_cents ASC, \(tail)"
        case .priceDescending: return "price_cents DESC, \(tail)"
        case .title: return "title_key ASC, \(tail)"
        case .relevance where !query.terms.isEmpty: return "relevance_score DESC, \(tail)"
        case .distance where query.query.filter.near != nil: return "distance_shown ASC, \(tail)"
        default: return tail
        }
    }

    /// "Strictly after the cursor" in the query's order, on the statement's output columns. Each
    /// condition starts with a bound on the order's leading column (implied by the exact keyset that
    /// follows), so that the order's index is entered at the cursor rather than walked from its start.
    private static func keysetCondition(
        _ cursor: ListingSearchEngine.Cursor,
        _ query: CompiledListingQuery,
        _ sql: inout PostgresQueryBuilder
    ) -> String {
        let c = sql.bind(cursor.c)
        let i = sql.bind(cursor.i)
        let tail = "(created_at < \(c) OR (created_at = \(c) AND id < \(i)))"
        switch query.query.sort {
        case .priceAscending:
            let p = sql.bind(cursor.p ?? 0)
            return "price_cents >= \(p) AND (price_cents > \(p) OR (price_cents = \(p) AND \(tail)))"
        case .priceDescending:
            let p = sql.bind(cursor.p ?? 0)
            return "price_cents <= \(p) AND (price_cents < \(p) OR (price_cents = \(p) AND \(tail)))"
        case .title:
            let t = sql.bind(cursor.t ?? "")
            return "title_key >= \(t) AND (title_key > \(t) OR (title_key = \(t) AND \(tail)))"
        case .relevance where !query.terms.isEmpty:
            let r = sql.bind(Int64(cursor.r ?? 0))
            return "(relevance_score < \(r) OR (relevance_score = \(r) AND \(tail)))"
        case .distance where query.query.filter.near != nil:
            let d = sql.bind(cursor.d ?? 0)
            return "(distance_shown > \(d) OR (distance_shown = \(d) AND \(tail)))"
        default:
            // One range of the newest index (`status, created_at, id`, walked backwards).
            return "(created_at, id) < (\(c), \(i))"
        }
    }

    /// The most walk steps a matched listing is worth when collecting (reading it by its row and sorting
    /// it), as on SQLite.
    static let collectCost = 8.0

    /// Chooses, for keywords in an order an index can walk, between collecting the matches (GIN bitmap,
    /// then the first rows sorted) and walking the order's index checking each listing (stopping when the
    /// page is full), by their costs as `ListingSearchEngine.collectingIsCheaper` weighs them, and tells
    /// PostgreSQL's planner (`SET LOCAL`, for this read's transaction only). The planner's own cost model
    /// does not weigh a walk that stops at a full page against a collection, and walking the whole index
    /// for a rare word costs the table.
    ///
    /// The matches are estimated from PostgreSQL's statistics on the word arrays (the most common words'
    /// frequencies; any other word counts as rarer than the rarest of them), which costs a plan, not a
    /// scan: counting them (a GIN bitmap of every match of a common word) took two thirds of the
    /// searches' time at 100,000 listings. Either path returns the same page; the estimate only picks
    /// the cheaper one. Relevance scores every match, so its matches are collected; other shapes with
    /// keywords (a circle, a seller, tags) are left to the planner, whose statistics serve those
    /// filters, but never to a sequential scan.
    static func choosePath(
        _ query: CompiledListingQuery,
        size: Int,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws {
        guard !query.terms.isEmpty else { return }
        // Keywords always have the GIN index: never read the whole table for them.
        try await db.run("SET LOCAL enable_seqscan = off", storage)
        let filter = query.query.filter
        if query.query.sort == .relevance {
            // Every match is scored, so the matches drive (bitmap scans: the GIN index, with a circle's
            // or a seller's index beside it if the planner likes).
            try await db.run("SET LOCAL enable_indexscan = off", storage)
            return
        }
        guard filter.near == nil, filter.sellerID == nil, query.tags.isEmpty else { return }
        let total = try await listingCount(db, storage)
        guard total > 0 else { return }
        let selectivity = ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false)
        let breakEven = Int((Double(size + 1) * Double(total) / (selectivity * collectCost)).squareRoot()) + 1
        let matches = try await estimatedMatches(query.terms, db, storage)
        let collect =
            matches < breakEven
            && ListingSearchEngine.collectingIsCheaper(
                collected: Double(matches),
                matches: Double(matches),
                total: total,
                size: size,
                selectivity: selectivity,
                collectCost: collectCost
            )
        if collect { return }  // sequential and index scans stay off: the GIN bitmap drives
        try await db.run("SET LOCAL enable_indexscan = on", storage)
        try await db.run("SET LOCAL enable_bitmapscan = off", storage)
    }

    /// How many listings the table holds (``PostgresEstimates/rows(in:_:_:)``).
    static func listingCount(_ db: PostgresConnection, _ storage: PostgresStorage) async throws -> Int {
        try await PostgresEstimates.rows(in: "listing", db, storage)
    }

    /// How many listings PostgreSQL's planner expects `terms` to match (its row estimate for the keyword
    /// condition alone, from the statistics ANALYZE keeps on `search_words`).
    static func estimatedMatches(
        _ terms: [String],
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> Int {
        try await PostgresEstimates.rows(
            "EXPLAIN SELECT 1 FROM listing WHERE search_words @@ \(tsquery(terms))::tsquery",
            db,
            storage
        )
    }

    /// The distance from the circle's centre to a listing as ``SkiffDomain/ApproximateLocation`` measures
    /// it: exact, to its search point, for its seller; for anyone else to the point's cell centre, and
    /// `shown` rounded to the reporting step.
    private static func distance(_ bound: Bound, shown: Bool) -> String {
        let exact = haversine(bound, "listing.search_latitude", "listing.search_longitude")
        var cell = haversine(bound, "listing.search_cell_latitude", "listing.search_cell_longitude")
        if shown { cell = rounded(cell, step: bound.distanceStep) }
        guard let viewer = bound.viewer else { return cell }
        return "(CASE WHEN listing.seller_id = \(viewer) THEN \(exact) ELSE \(cell) END)"
    }

    /// `GreatCircle.distanceKm` from the bound centre to a point, in SQL, each operation in Swift's order
    /// on `double precision` (PostgreSQL's `sin`, `cos`, `asin` and `sqrt` are the C library's, as
    /// Swift's are).
    private static func haversine(_ bound: Bound, _ latitude: String, _ longitude: String) -> String {
        guard let center = bound.center else { return "NULL::double precision" }
        let (r, earth) = (bound.radians, bound.earthRadius)
        let halfLatitude = "sin((\(latitude) - \(center.latitude)) * \(r) / 2)"
        let halfLongitude = "sin((\(longitude) - \(center.longitude)) * \(r) / 2)"
        let h =
            "\(halfLatitude) * \(halfLatitude) + cos(\(center.latitude) * \(r)) * cos(\(latitude) * \(r)) * "
            + "\(halfLongitude) * \(halfLongitude)"
        return "(2 * \(earth) * asin(least(1::double precision, sqrt(\(h)))))"
    }

    /// `ApproximateLocation.rounded`: to the nearest multiple of the step, halves away from zero (as
    /// Swift's `rounded()`; PostgreSQL's `round` would round halves to even). Distances are not negative.
    private static func rounded(_ km: String, step: String) -> String {
        let x = "(\(km) / \(step))"
        return "((floor(\(x)) + CASE WHEN \(x) - floor(\(x)) >= 0.5::double precision THEN 1 ELSE 0 END) * \(step))"
    }
}
