import Foundation
package import SkiffDomain

/// Search semantics shared by every ``ListingsStore`` backend: matching, distance, ordering and keyset
/// paging. Backends may narrow candidates first (SQLite: SQL filters, FTS5, a bounding box), but the final
/// decision and order come from here, so all backends return identical pages.
package struct CompiledListingQuery: Sendable {
    package let query: ListingQuery
    /// The keyword terms (``SearchText/tokens(_:)`` of the text).
    package let terms: [String]
    /// The required tags, normalized.
    package let tags: [String]
    package let statuses: Set<ListingStatus>
    /// The cursor to continue after, if this is not the first page.
    package let cursor: ListingSearchEngine.Cursor?
    /// A hash of everything that defines the result list; page tokens carry it.
    package let fingerprint: String

    package init(_ query: ListingQuery, page: PageRequest) throws(DomainError) {
        self.query = query
        self.terms = SearchText.tokens(query.text)
        self.tags = query.filter.tags.map(ListingRules.normalizedTag)
        self.statuses = query.filter.effectiveStatuses
        self.fingerprint = Self.fingerprint(query, terms: terms, tags: tags, statuses: statuses)
        if let token = page.token {
            let cursor = try PageToken.decode(
                token,
                as: ListingSearchEngine.Cursor.self,
                kind: ListingSearchEngine.kind
            )
            guard cursor.f == fingerprint else { throw DomainError(.invalidArgument, PageToken.invalidMessage) }
            self.cursor = cursor
        } else {
            self.cursor = nil
        }
    }

    private static func fingerprint(
        _ query: ListingQuery,
        terms: [String],
        tags: [String],
        statuses: Set<ListingStatus>
    ) -> String {
        // FNV-1a, 64 bits (short, stable across processes, unlike `Hasher`) of the parts joined by `|`,
        // fed part by part rather than joined first.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ text: some StringProtocol) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        func add(_ list: [String], separator: String) {
            for (index, item) in list.enumerated() {
                if index > 0 { add(separator) }
                add(item)
            }
        }
        func add<Value: RawRepresentable<String>>(sorted values: some Collection<Value>) {
            if values.count <= 1 {
                if let value = values.first { add(value.rawValue) }
            } else {
                add(values.map(\.rawValue).sorted(), separator: ",")
            }
        }
        let filter = query.filter
        add("q=")
        add(terms, separator: " ")
        add("|s=")
        add(query.sort.rawValue)
        add("|v=")
        add(query.viewerID ?? "")
        add("|d=")
        add(String(query.postedWithinDays))
        add("|c=")
        add(sorted: filter.categories)
        add("|k=")
        add(sorted: filter.conditions)
        add("|p=")
        if let low = filter.minPriceCents { add(String(low)) }
        add("-")
        if let high = filter.maxPriceCents { add(String(high)) }
        add("|t=")
        add(tags.count <= 1 ? tags : tags.sorted(), separator: ",")
        add("|m=")
        if let onCampus = filter.madeOnCampus { add(onCampus ? "1" : "0") }
        add("|u=")
        add(filter.sellerID ?? "")
        add("|st=")
        add(sorted: statuses)
        if let near = filter.near {
            add("|n=\(near.center.latitude),\(near.center.longitude),\(near.radiusKm)")
        }
        return String(hash, radix: 16)
    }
}

/// Matching, ordering and paging of listing search (see ``CompiledListingQuery``).
package enum ListingSearchEngine {
    static let kind = "listings.search"
    /// The Earth's mean radius, in kilometres.
    package static let earthRadiusKm = GreatCircle.earthRadiusKm

    /// The position after a search result: the query's fingerprint, then the sort key.
    package struct Cursor: Codable, Hashable, Sendable {
        package var f: String
        /// Price, for price sorts.
        package var p: Int64?
        /// Title sort key, for title sort.
        package var t: String?
        /// Score, for relevance sort.
        package var r: Int?
        /// Distance, for distance sort.
        package var d: Double?
        /// `createdAt` in milliseconds.
        package var c: Int64
        /// The listing id.
        package var i: String
    }

    /// A matching listing with what it is ordered by.
    package struct Hit: Sendable {
        package var listing: Listing
        package var distanceKm: Double?
        package var score: Int
        package var titleKey: String
    }

    /// A rough share of listings that the filters an order walk checks let through: each category or
    /// condition listed counts for its share of the values (a category that leads the walked index, as
    /// SQLite's category indexes do, is not counted), a price range off the price order for a third,
    /// made-on-campus and posted-since (off the newest order) for a half each. Both backends use it to
    /// estimate how far a walk goes before its page is full.
    package static func filterSelectivity(_ query: CompiledListingQuery, categoryLeadsIndex: Bool) -> Double {
        let filter = query.query.filter
        var share = 1.0
        if !filter.categories.isEmpty, !(categoryLeadsIndex && filter.categories.count == 1) {
            share *= Double(filter.categories.count) / Double(ListingCategory.allCases.count)
        }
        if !filter.conditions.isEmpty {
            share *= Double(filter.conditions.count) / Double(ListingCondition.allCases.count)
        }
        let sort = query.query.sort
        let priceOrder = sort == .priceAscending || sort == .priceDescending
        if !priceOrder, filter.minPriceCents != nil || filter.maxPriceCents != nil { share /= 3 }
        if filter.madeOnCampus != nil { share /= 2 }
        if filter.postedSince != nil, sort != .newest { share /= 2 }
        return min(1, share)
    }

    /// Whether collecting the keyword matches (reading `collected` listings, `matches` of which match,
    /// at `collectCost` walk steps apiece) costs less than walking an order until a page of `size` is
    /// full, about `(size + 1) · total / (matches · selectivity)` steps: the rule both backends use to
    /// choose, so that a page costs the smaller of the two.
    package static func collectingIsCheaper(
        collected: Double,
        matches: Double,
        total: Int,
        size: Int,
        selectivity: Double,
        collectCost: Double
    ) -> Bool {
        let walked = Double(size + 1) * Double(max(total, 1)) / max(matches * selectivity, 1)
        return collected * collectCost < walked
    }

    /// The hit for a listing if it matches every filter and keyword, else `nil`. `tokens`, when given, are
    /// the listing's ``SearchText/DocumentTokens`` already computed (an index keeps them), and `titleKey` its
    /// title's ``SearchText/sortKey(_:)``. With
    /// `keywordsMatched`, a backend vouches that its own index matched the keywords (SQLite's FTS5 and word
    /// probes, differential-tested against this function) and supplies the relevance score itself, so the
    /// listing's text is not tokenized again here.
    package static func hit(
        _ listing: Listing,
        _ query: CompiledListingQuery,
        tokens cached: SearchText.DocumentTokens? = nil,
        titleKey cachedTitleKey: String? = nil,
        keywordsMatched: Bool = false
    ) -> Hit? {
        let filter = query.query.filter
        guard query.statuses.contains(listing.status) else { return nil }
        if !filter.categories.isEmpty, !filter.categories.contains(listing.category) { return nil }
        if !filter.conditions.isEmpty, !filter.conditions.contains(listing.condition) { return nil }
        if let min = filter.minPriceCents, listing.priceCents < min { return nil }
        if let max = filter.maxPriceCents, listing.priceCents > max { return nil }
        if let made = filter.madeOnCampus, listing.madeOnCampus != made { return nil }
        if let seller = filter.sellerID {
            guard listing.sellerID == seller, !listing.anonymous || query.query.viewerID == seller else { return nil }
        }
        if let since = filter.postedSince,
            listing.createdAt.millisecondsSince1970 < since.millisecondsSince1970
        {
            return nil
        }
        for tag in query.tags where !listing.tags.contains(tag) { return nil }
        var distance: Double?
        if let near = filter.near {
            // The listing's point, or its ZIP code's centroid (``ListingRules/searchPoint(for:centroids:)``).
            guard let point = ListingRules.searchPoint(for: listing.location) else { return nil }
            // Only the seller measures to the exact point; anyone else to its cell, rounded
            // (``SkiffDomain/ApproximateLocation``), in the filter, the order and the result alike.
            let viewer = query.query.viewerID
            let km = ApproximateLocation.distance(
                from: (near.center.latitude, near.center.longitude),
                to: (point.latitude, point.longitude),
                exact: viewer != nil && viewer == listing.sellerID
            )
            guard km.measured <= near.radiusKm else { return nil }
            distance = km.shown
        }
        var score = 0
        if !query.terms.isEmpty, !keywordsMatched {
            let tokens = cached ?? SearchText.DocumentTokens(listing.fields)
            guard SearchText.matches(tokens: tokens, terms: query.terms) else { return nil }
            if query.query.sort == .relevance { score = SearchText.score(of: tokens, terms: query.terms) }
        }
        let titleKey = query.query.sort == .title ? cachedTitleKey ?? SearchText.sortKey(listing.title) : ""
        return Hit(listing: listing, distanceKm: distance, score: score, titleKey: titleKey)
    }

    /// The great-circle distance between two points (haversine), in kilometres.
    package static func distanceKm(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        GreatCircle.distanceKm(
            latitude1: a.latitude,
            longitude1: a.longitude,
            latitude2: b.latitude,
            longitude2: b.longitude
        )
    }

    /// Listings a tag keeps at most for an in-memory search in distance order to check them all and sort
    /// them rather than walk the circle's grid cells band by band.
    package static let fewCandidates = 512

    /// Whether a search in distance order walks its circle's grid cells band by band rather than read its
    /// keyword matches and sort them (the rule every backend follows): it does unless the matches (about
    /// `matches` of `total` listings) are fewer than the listings the walk would step through, about
    /// `(size + 1) · total / (matches · selectivity)` and at most the `inCircle` listings of the circle's
    /// cells. `selectivity` is the share the other filters keep (``filterSelectivity(_:categoryLeadsIndex:)``).
    package static func walksCells(
        matches: Double,
        inCircle: Double,
        total: Double,
        size: Int,
        selectivity: Double
    ) -> Bool {
        let stepped = min(inCircle, Double(size + 1) * total / max(matches * selectivity, 1))
        return matches >= stepped
    }

    /// The circle on the grid (``SkiffDomain/GridCircle``): its box, its cells and their bands of shown
    /// distance, as every backend reads them.
    package static func grid(_ circle: GeoCircle) -> GridCircle {
        GridCircle(latitude: circle.center.latitude, longitude: circle.center.longitude, radiusKm: circle.radiusKm)
    }

    /// A latitude/longitude box containing every exact point whose distance, exact or approximate, can be
    /// within the circle (``SkiffDomain/GridCircle/boundingBox``), for prefiltering in SQL. `longitude` is
    /// `nil` when the box would wrap around the antimeridian or reach a pole.
    package static func boundingBox(
        _ circle: GeoCircle
    ) -> (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) {
        grid(circle).boundingBox
    }

    /// The cursor of a hit, for the given query.
    static func cursor(of hit: Hit, _ query: CompiledListingQuery) -> Cursor {
        var cursor = Cursor(f: query.fingerprint, c: hit.listing.createdAt.millisecondsSince1970, i: hit.listing.id)
        switch query.query.sort {
        case .newest: break
        case .priceAscending, .priceDescending: cursor.p = hit.listing.priceCents
        case .title: cursor.t = hit.titleKey
        case .relevance: cursor.r = hit.score
        case .distance: cursor.d = hit.distanceKm ?? 0
        }
        return cursor
    }

    /// Whether key `a` comes before key `b` in the query's order (ties: newest first, then id descending).
    static func precedes(_ a: Cursor, _ b: Cursor, sort: ListingSort) -> Bool {
        switch sort {
        case .newest: break
        case .priceAscending: if a.p != b.p { return (a.p ?? 0) < (b.p ?? 0) }
        case .priceDescending: if a.p != b.p { return (a.p ?? 0) > (b.p ?? 0) }
        case .title:
            if a.t != b.t { return (a.t ?? "").utf8.lexicographicallyPrecedes((b.t ?? "").utf8) }
        case .relevance: if a.r != b.r { return (a.r ?? 0) > (b.r ?? 0) }
        case .distance: if a.d != b.d { return (a.d ?? 0) < (b.d ?? 0) }
        }
        if a.c != b.c { return a.c > b.c }
        return b.i.utf8.lexicographicallyPrecedes(a.i.utf8)
    }

    /// Orders hits, drops those up to the cursor and returns one page.
    ///
    /// Only the first `size + 1` hits after the cursor are put in order (kept sorted while the others are
    /// passed over), so that many hits cost about one comparison each rather than a sort of them all.
    package static func page(_ hits: [Hit], _ query: CompiledListingQuery, size: Int) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let keys = hits.map { cursor(of: $0, query) }
        var best = BestValues<Int>(limit: size + 1) { precedes(keys[$0], keys[$1], sort: sort) }
        for index in keys.indices {
            if let after = query.cursor, !precedes(after, keys[index], sort: sort) { continue }
            best.offer(index)
        }
        return makePage(best.ordered().map { (key: keys[$0], hit: hits[$0]) }, query, size: size)
    }

    /// Builds a page from up to `size + 1` hits already in order and after the cursor.
    package static func page(ordered hits: [Hit], _ query: CompiledListingQuery, size: Int) -> Page<ListingSearchHit> {
        makePage(hits.map { (key: cursor(of: $0, query), hit: $0) }, query, size: size)
    }

    private static func makePage(
        _ keyed: [(key: Cursor, hit: Hit)],
        _ query: CompiledListingQuery,
        size: Int
    ) -> Page<ListingSearchHit> {
        let items = keyed.prefix(size).map { ListingSearchHit(listing: $0.hit.listing, distanceKm: $0.hit.distanceKm) }
        let next = keyed.count > size ? PageToken.encode(keyed[size - 1].key, kind: kind) : nil
        return Page(items: items, nextPageToken: next)
    }
}
