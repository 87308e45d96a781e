import Foundation
import SkiffDomain

/// The in-memory store's search indexes: what SQLite's indexes and FTS5 table are to the SQLite store.
///
/// - an ``SkiffDomain/InvertedIndex`` over ``SearchText`` tokens (the last query term's prefix is a range
///   of its sorted vocabulary);
/// - tag and seller indexes and a ``SkiffDomain/GridIndex`` of search points (a listing's point, or its ZIP
///   code's centroid: ``ListingRules/searchPoint(for:centroids:)``);
/// - one ``SkiffDomain/SortedKeys`` per order (newest, price up, price down, title), in exactly
///   ``ListingSearchEngine``'s order, ties included.
///
/// A search narrows the candidates with the inverted, tag, seller and cell indexes, then either walks the
/// order's index from the cursor, checking each listing, until the page is full (when the candidates are
/// many), or checks and sorts the candidates (when they are few, and always for relevance and distance).
/// Either way `ListingSearchEngine.hit` decides each listing, so results equal SQLite's; the cost follows the
/// page and the candidates, not the table.
struct ListingIndex: Sendable {
    /// What the index keeps per listing: a reference, so that looking one up on a walk costs one retain
    /// rather than a copy of the listing and its tokens.
    final class Entry: Sendable {
        let listing: Listing
        let tokens: SearchText.DocumentTokens

        init(listing: Listing, tokens: SearchText.DocumentTokens) {
            self.listing = listing
            self.tokens = tokens
        }
    }

    /// The key of a listing in the order indexes, with the filters a walk checks before it looks the
    /// listing up (as SQLite's covering indexes carry them).
    struct OrderKey: Sendable {
        var price: Int64
        var title: String
        var createdAt: Int64
        var id: String
        var status: ListingStatus = .active
        var category: ListingCategory = .other
        var condition: ListingCondition = .new
    }

    private(set) var entries: [String: Entry] = [:]
    private var words = InvertedIndex()
    private var tagged: [String: Set<String>] = [:]
    private var bySeller: [String: Set<String>] = [:]
    private var grid = GridIndex()
    private var newest = SortedKeys<OrderKey>(by: ListingIndex.newestFirst)
    private var cheapest = SortedKeys<OrderKey> { a, b in
        a.price != b.price ? a.price < b.price : ListingIndex.newestFirst(a, b)
    }
    private var dearest = SortedKeys<OrderKey> { a, b in
        a.price != b.price ? a.price > b.price : ListingIndex.newestFirst(a, b)
    }
    private var byTitle = SortedKeys<OrderKey> { a, b in
        a.title != b.title ? a.title.utf8.lexicographicallyPrecedes(b.title.utf8) : ListingIndex.newestFirst(a, b)
    }

    /// Newest first, then id descending: every order's tie-break.
    @Sendable static func newestFirst(_ a: OrderKey, _ b: OrderKey) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : b.id.utf8.lexicographicallyPrecedes(a.id.utf8)
    }

    private static func key(_ listing: Listing) -> OrderKey {
        OrderKey(
            price: listing.priceCents,
            title: SearchText.sortKey(listing.title),
            createdAt: listing.createdAt.millisecondsSince1970,
            id: listing.id,
            status: listing.status,
            category: listing.category,
            condition: listing.condition
        )
    }

    private static func distinctTokens(_ tokens: SearchText.DocumentTokens) -> Set<String> {
        Set(tokens.title).union(tokens.description).union(tokens.tags)
    }

    // MARK: Maintenance

    /// Indexes a listing, replacing what was indexed for it before.
    mutating func put(_ listing: Listing) {
        if let old = entries[listing.id] {
            guard old.listing != listing else { return }
            remove(old)
        }
        let tokens = SearchText.DocumentTokens(listing.fields)
        entries[listing.id] = Entry(listing: listing, tokens: tokens)
        words.insert(listing.id, tokens: Self.distinctTokens(tokens))
        for tag in listing.tags { tagged[tag, default: []].insert(listing.id) }
        bySeller[listing.sellerID, default: []].insert(listing.id)
        if let point = ListingRules.searchPoint(for: listing.location) {
            grid.insert(listing.id, latitude: point.latitude, longitude: point.longitude)
        }
        let key = Self.key(listing)
        newest.insert(key)
        cheapest.insert(key)
        dearest.insert(key)
        byTitle.insert(key)
    }

    private mutating func remove(_ entry: Entry) {
        let id = entry.listing.id
        entries[id] = nil
        words.remove(id, tokens: Self.distinctTokens(entry.tokens))
        for tag in entry.listing.tags { Self.remove(id, from: &tagged, at: tag) }
        Self.remove(id, from: &bySeller, at: entry.listing.sellerID)
        if let point = ListingRules.searchPoint(for: entry.listing.location) {
            grid.remove(id, latitude: point.latitude, longitude: point.longitude)
        }
        let key = Self.key(entry.listing)
        newest.remove(key) { $0.id == id }
        cheapest.remove(key) { $0.id == id }
        dearest.remove(key) { $0.id == id }
        byTitle.remove(key) { $0.id == id }
    }

    private static func remove<K: Hashable>(_ id: String, from index: inout [K: Set<String>], at key: K) {
        index[key]?.remove(id)
        if index[key]?.isEmpty == true { index[key] = nil }
    }

    // MARK: Search

    /// A seller's listings, in no particular order.
    func listings(sellerID: String) -> [Listing] {
        (bySeller[sellerID] ?? []).compactMap { entries[$0]?.listing }
    }

    /// One page of results for `query`, as ``ListingSearchEngine`` defines them.
    func search(_ query: CompiledListingQuery, size: Int) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let needsEveryMatch =
            (sort == .relevance && !query.terms.isEmpty) || (sort == .distance && query.query.filter.near != nil)
        let candidates = candidates(query, size: size, needsEveryMatch: needsEveryMatch)
        if let candidates, candidates.isEmpty { return Page(items: [], nextPageToken: nil) }
        func hit(_ id: String) -> ListingSearchEngine.Hit? {
            guard let entry = entries[id] else { return nil }
            return ListingSearchEngine.hit(entry.listing, query, tokens: entry.tokens)
        }
        if needsEveryMatch {
            let ids = candidates.map(Array.init) ?? Array(entries.keys)
            return ListingSearchEngine.page(ids.compactMap(hit), query, size: size)
        }
        if let candidates, Self.isFew(candidates.count, size: size, of: entries.count) {
            return ListingSearchEngine.page(candidates.compactMap(hit), query, size: size)
        }
        // Many candidates (or none narrowed): walk the order's index from the cursor.
        let index: SortedKeys<OrderKey>
        switch sort {
        case .priceAscending: index = cheapest
        case .priceDescending: index = dearest
        case .title: index = byTitle
        default: index = newest
        }
        var start = index.start
        if let cursor = query.cursor {
            let key = OrderKey(price: cursor.p ?? 0, title: cursor.t ?? "", createdAt: cursor.c, id: cursor.i)
            start = index.position(of: key, after: true)
        }
        // Filters on the order's own key bound the walk at both ends, as an index range does in SQL: seek
        // to the first price that can match, stop past the last one (or before `postedSince`).
        let filter = query.query.filter
        func firstKey(price: Int64) -> OrderKey { OrderKey(price: price, title: "", createdAt: .max, id: "") }
        switch sort {
        case .priceAscending:
            if let min = filter.minPriceCents { start = Swift.max(start, index.position(of: firstKey(price: min))) }
        case .priceDescending:
            if let max = filter.maxPriceCents { start = Swift.max(start, index.position(of: firstKey(price: max))) }
        default: break
        }
        let since = filter.postedSince?.millisecondsSince1970
        func isPastEnd(price: Int64, createdAt: Int64) -> Bool {
            switch sort {
            case .priceAscending: if let max = filter.maxPriceCents { return price > max }
            case .priceDescending: if let min = filter.minPriceCents { return price < min }
            case .title: break
            default: if let since { return createdAt < since }
            }
            return false
        }
        // The filters the key carries are checked before the listing is looked up.
        // Small lists, not sets: no hashing per key walked.
        let categories = Array(filter.categories)
        let conditions = Array(filter.conditions)
        let statuses = Array(query.statuses)
        var hits: [ListingSearchEngine.Hit] = []
        // The walk, over the keys in place (see `SortedKeys.orderedChunks`).
        let chunks = index.orderedChunks
        var chunk = start.chunk
        var offset = start.offset
        var full = false
        while !full, chunk < chunks.count {
            chunks[chunk].withUnsafeBufferPointer { keys in
                while offset < keys.count {
                    // Fields are read in place: binding the whole key would copy (and retain) its strings.
                    let at = offset
                    offset += 1
                    if isPastEnd(price: keys[at].price, createdAt: keys[at].createdAt) {
                        full = true
                        return
                    }
                    guard statuses.contains(keys[at].status),
                        categories.isEmpty || categories.contains(keys[at].category),
                        conditions.isEmpty || conditions.contains(keys[at].condition)
                    else { continue }
                    if let candidates, !candidates.contains(keys[at].id) { continue }
                    if let found = hit(keys[at].id) { hits.append(found) }
                    if hits.count > size {
                        full = true
                        return
                    }
                }
            }
            chunk += 1
            offset = 0
        }
        return ListingSearchEngine.page(ordered: hits, query, size: size)
    }

    /// Whether collecting the keyword matches is cheaper than walking an order index and checking each
    /// listing's words (``ListingSearchEngine/collectingIsCheaper(collected:matches:total:size:selectivity:collectCost:)``):
    /// collecting reads the rarest term's listings (``SkiffDomain/InvertedIndex/superset(matching:)``);
    /// matches are estimated from the index's counts, the rarest term times the others' frequencies.
    func wordsAreFew(_ query: CompiledListingQuery, size: Int) -> Bool {
        let total = max(1, entries.count)
        var matches = Double(total)
        for (position, term) in query.terms.enumerated() {
            let count = position == query.terms.count - 1 ? words.count(prefix: term, limit: total) : words.count(term)
            matches *= Double(min(count, total)) / Double(total)
        }
        return ListingSearchEngine.collectingIsCheaper(
            collected: Double(words.supersetCount(matching: query.terms, limit: total)),
            matches: matches,
            total: total,
            size: size,
            selectivity: ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false),
            collectCost: 2
        )
    }

    /// Whether checking and sorting `count` candidates costs less than walking an order's index, where a
    /// page of `size` needs about `(size + 1) · total / count` steps.
    static func isFew(_ count: Int, size: Int, of total: Int) -> Bool {
        SortedKeys<OrderKey>.collectingIsCheaper(count, pageSize: size, total: total)
    }

    /// The listings that can match (a superset of the matches), or `nil` when no index narrows them enough
    /// to be worth building: a set that would hold many listings (a common word, a circle over the whole
    /// campus) is not built, and the walk checks each listing instead; unless every match is needed
    /// (relevance, distance order).
    func candidates(_ query: CompiledListingQuery, size: Int, needsEveryMatch: Bool) -> Set<String>? {
        let total = entries.count
        var sets: [Set<String>] = []
        if !query.terms.isEmpty, needsEveryMatch || wordsAreFew(query, size: size) {
            // A superset: `hit` checks each listing's own words.
            sets.append(words.superset(matching: query.terms))
        }
        for tag in Set(query.tags) { sets.append(tagged[tag] ?? []) }
        if let seller = query.query.filter.sellerID { sets.append(bySeller[seller] ?? []) }
        if let near = query.query.filter.near {
            let box = ListingSearchEngine.boundingBox(near)
            if let count = grid.count(latitude: box.latitude, longitude: box.longitude),
                needsEveryMatch || Self.isFew(count, size: size, of: total),
                let cells = grid.documents(latitude: box.latitude, longitude: box.longitude)
            {
                sets.append(cells)
            }
        }
        guard !sets.isEmpty else { return nil }
        sets.sort { $0.count < $1.count }
        var result = sets[0]
        for set in sets.dropFirst() {
            if result.isEmpty { break }
            result.formIntersection(set)
        }
        return result
    }
}
