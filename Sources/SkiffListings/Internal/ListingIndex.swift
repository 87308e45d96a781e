import Foundation
import SkiffDomain

/// The in-memory store's search indexes: what SQLite's indexes and FTS5 table are to the SQLite store.
///
/// Every listing has a slot, a small dense number reused after the listing leaves, so that the indexes
/// below hold numbers rather than ids, and a search can narrow them to a ``SlotSet`` (a bitset):
/// - an ``SkiffDomain/InvertedIndex`` over ``SearchText`` tokens (the last query term's prefix is a range
///   of its sorted vocabulary);
/// - tag and seller indexes and a ``SkiffDomain/GridIndex`` of search points (a listing's point, or its ZIP
///   code's centroid: ``ListingRules/searchPoint(for:centroids:)``);
/// - one ``SkiffDomain/SortedKeys`` per order (newest, price up, price down, title), in exactly
///   ``ListingSearchEngine``'s order, ties included; each key carries the slot and the filters a walk
///   checks before it looks the listing up.
///
/// A search builds the sets that are cheap to build (a set costs one step per posting, checking a walked
/// listing's own words costs many), then either walks the order's index from the cursor, testing each key
/// against the filters and the set, until the page is full, or, when the set is small against that walk
/// (and always for relevance and distance), checks and sorts the set's listings. Either way
/// `ListingSearchEngine.hit` decides each listing, so results equal SQLite's; the cost follows the page and
/// the postings read, not the table.
struct ListingIndex: Sendable {
    /// What the index keeps per listing: a reference, so that looking one up on a walk costs one retain
    /// rather than a copy of the listing and its tokens.
    final class Entry: Sendable {
        let listing: Listing
        let tokens: SearchText.DocumentTokens
        /// The distinct tokens with their relevance weights: matching and scoring without the listing's text.
        let weighted: SearchText.WeightedTokens
        /// The listing's key in the order indexes (with its title's ``SearchText/sortKey(_:)``), computed
        /// once: reading it never copies the listing.
        let key: OrderKey

        var slot: Int32 { key.slot }
        var titleKey: String { key.title }

        init(listing: Listing, slot: Int32) {
            self.listing = listing
            self.tokens = SearchText.DocumentTokens(listing.fields)
            self.weighted = SearchText.WeightedTokens(tokens)
            self.key = OrderKey(
                price: listing.priceCents,
                title: SearchText.sortKey(listing.title),
                createdAt: listing.createdAt.millisecondsSince1970,
                id: listing.id,
                slot: slot,
                status: listing.status,
                category: listing.category,
                condition: listing.condition
            )
        }
    }

    /// The key of a listing in the order indexes, with the filters a walk checks before it looks the
    /// listing up (as SQLite's covering indexes carry them).
    struct OrderKey: Sendable {
        var price: Int64
        var title: String
        var createdAt: Int64
        var id: String
        var slot: Int32 = -1
        var status: ListingStatus = .active
        var category: ListingCategory = .other
        var condition: ListingCondition = .new
    }

    let costs: ListingSearchCosts

    init(costs: ListingSearchCosts = .measured) {
        self.costs = costs
    }

    private(set) var entries: [String: Entry] = [:]
    private var slots: [Entry?] = []
    private var freeSlots: [Int32] = []
    private var words = InvertedIndex<Int32>()
    /// The postings of common tokens again, as bitsets: a term whose token is in one of every
    /// ``denseShare`` listings is read a word (64 listings) at a time rather than a listing at a time.
    private var dense: [String: SlotSet] = [:]
    static let denseShare = 64
    private var tagged: [String: Set<Int32>] = [:]
    private var bySeller: [String: Set<Int32>] = [:]
    private var grid = GridIndex<Int32>()
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
        let slot = freeSlots.popLast() ?? Int32(slots.count)
        if Int(slot) == slots.count { slots.append(nil) }
        let entry = Entry(listing: listing, slot: slot)
        entries[listing.id] = entry
        slots[Int(slot)] = entry
        let tokens = Self.distinctTokens(entry.tokens)
        words.insert(slot, tokens: tokens)
        let denseCount = max(Self.denseShare, slots.count / Self.denseShare)
        for token in tokens {
            if dense[token] != nil {
                dense[token]?.insert(slot)
            } else if words.count(token) >= denseCount {
                dense[token] = SlotSet(words.documents(token), capacity: slots.count)
            }
        }
        for tag in listing.tags { tagged[tag, default: []].insert(slot) }
        bySeller[listing.sellerID, default: []].insert(slot)
        if let point = ListingRules.searchPoint(for: listing.location) {
            grid.insert(slot, latitude: point.latitude, longitude: point.longitude)
        }
        let key = entry.key
        newest.insert(key)
        cheapest.insert(key)
        dearest.insert(key)
        byTitle.insert(key)
    }

    private mutating func remove(_ entry: Entry) {
        let id = entry.listing.id
        let slot = entry.slot
        entries[id] = nil
        slots[Int(slot)] = nil
        freeSlots.append(slot)
        let tokens = Self.distinctTokens(entry.tokens)
        words.remove(slot, tokens: tokens)
        for token in tokens where dense[token] != nil {
            if words.count(token) == 0 { dense[token] = nil } else { dense[token]?.remove(slot) }
        }
        for tag in entry.listing.tags { Self.remove(slot, from: &tagged, at: tag) }
        Self.remove(slot, from: &bySeller, at: entry.listing.sellerID)
        if let point = ListingRules.searchPoint(for: entry.listing.location) {
            grid.remove(slot, latitude: point.latitude, longitude: point.longitude)
        }
        let key = entry.key
        newest.remove(key) { $0.id == id }
        cheapest.remove(key) { $0.id == id }
        dearest.remove(key) { $0.id == id }
        byTitle.remove(key) { $0.id == id }
    }

    private static func remove<K: Hashable>(_ slot: Int32, from index: inout [K: Set<Int32>], at key: K) {
        index[key]?.remove(slot)
        if index[key]?.isEmpty == true { index[key] = nil }
    }

    // MARK: Search

    /// A seller's listings, in no particular order.
    func listings(sellerID: String) -> [Listing] {
        (bySeller[sellerID] ?? []).compactMap { slots[Int($0)]?.listing }
    }

    /// The filters an order key carries (status, category, condition, price, posting time): checked before a
    /// listing is looked up, on a walk and when collecting a set alike.
    struct KeyFilter {
        // Small lists, not sets: no hashing per listing checked.
        let statuses: [ListingStatus]
        let categories: [ListingCategory]
        let conditions: [ListingCondition]
        let minPrice: Int64
        let maxPrice: Int64
        let since: Int64

        init(_ query: CompiledListingQuery) {
            let filter = query.query.filter
            statuses = Array(query.statuses)
            categories = Array(filter.categories)
            conditions = Array(filter.conditions)
            minPrice = filter.minPriceCents ?? .min
            maxPrice = filter.maxPriceCents ?? .max
            since = filter.postedSince?.millisecondsSince1970 ?? .min
        }

        func admits(
            status: ListingStatus,
            category: ListingCategory,
            condition: ListingCondition,
            price: Int64,
            createdAt: Int64
        ) -> Bool {
            price >= minPrice && price <= maxPrice && createdAt >= since && statuses.contains(status)
                && (categories.isEmpty || categories.contains(category))
                && (conditions.isEmpty || conditions.contains(condition))
        }

        func admits(_ entry: Entry) -> Bool {
            admits(
                status: entry.key.status,
                category: entry.key.category,
                condition: entry.key.condition,
                price: entry.key.price,
                createdAt: entry.key.createdAt
            )
        }
    }

    /// The sets a search narrows its listings to, and what they leave to be checked listing by listing.
    struct Narrowing {
        /// The listings every built set holds, or `nil` when no set was built.
        var slots: SlotSet?
        /// Whether `slots` holds exactly the keyword matches (every term's postings were read), so that a
        /// listing in it need not have its words checked again.
        var keywordsExact = false
        /// The share of listings that the filters and terms left to the walk let through (an estimate).
        var unbuiltShare = 1.0
    }

    /// Chooses and builds the sets for a search: a term's, tag's or seller's postings, or the grid cells a
    /// circle covers, are read into sets when every match is needed or when reading them costs less than
    /// checking the listings a walk would reach without them; the rest is checked on the walk.
    func narrowing(_ query: CompiledListingQuery, size: Int, needsEveryMatch: Bool) -> Narrowing {
        let total = max(1, entries.count)
        let capacity = slots.count
        var result = Narrowing()
        result.unbuiltShare = ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false)
        // Each source: how many listings it holds (at most), what building its set costs in postings read,
        // and how to build it.
        var sources: [(count: Int, cost: Int, build: () -> SlotSet, isTerm: Bool)] = []
        let terms = query.terms
        for (position, term) in terms.enumerated() {
            let prefix = position == terms.count - 1
            let count = prefix ? words.count(prefix: term, limit: total) : words.count(term)
            // A dense token costs a pass over its bitset instead of its postings.
            let cost = dense[term] == nil ? count : count - words.count(term) + capacity / 64
            let build = {
                var set = SlotSet(capacity: capacity)
                words.forEachPosting(matching: term, prefix: prefix) { token, documents in
                    if let bits = dense[token] {
                        set.formUnion(bits)
                    } else {
                        for slot in documents { set.insert(slot) }
                    }
                }
                return set
            }
            sources.append((count, cost, build, true))
        }
        for tag in Set(query.tags) {
            let slots = tagged[tag] ?? []
            sources.append((slots.count, slots.count, { SlotSet(slots, capacity: capacity) }, false))
        }
        if let seller = query.query.filter.sellerID {
            let slots = bySeller[seller] ?? []
            sources.append((slots.count, slots.count, { SlotSet(slots, capacity: capacity) }, false))
        }
        if let near = query.query.filter.near {
            let box = ListingSearchEngine.boundingBox(near)
            if let count = grid.count(latitude: box.latitude, longitude: box.longitude) {
                let build = {
                    var set = SlotSet(capacity: capacity)
                    _ = grid.forEachDocument(latitude: box.latitude, longitude: box.longitude) { set.insert($0) }
                    return set
                }
                sources.append((count, count, build, false))
            }
        }
        if sources.contains(where: { $0.count == 0 }) {
            result.slots = SlotSet(capacity: capacity)
            result.keywordsExact = true
            return result
        }
        for source in sources { result.unbuiltShare *= Double(min(source.count, total)) / Double(total) }
        // How far a walk goes to fill the page, whichever sets are built; a set is worth building when
        // reading it costs less than checking the walked listings without it.
        let walked = min(Double(size + 1) / max(result.unbuiltShare, 1 / Double(total)), Double(total))
        var builtTerms = 0
        for source in sources.sorted(by: { $0.count < $1.count }) {
            let share = Double(min(source.count, total)) / Double(total)
            guard needsEveryMatch || Double(source.cost) < costs.postingsPerWordCheck * walked else { continue }
            let set = source.build()
            if result.slots == nil { result.slots = set } else { result.slots!.formIntersection(set) }
            result.unbuiltShare /= max(share, 1 / Double(total))
            if source.isTerm { builtTerms += 1 }
        }
        result.unbuiltShare = min(1, result.unbuiltShare)
        result.keywordsExact = builtTerms == terms.count
        return result
    }

    /// One page of results for `query`, as ``ListingSearchEngine`` defines them.
    func search(_ query: CompiledListingQuery, size: Int) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let needsEveryMatch =
            (sort == .relevance && !query.terms.isEmpty) || (sort == .distance && query.query.filter.near != nil)
        let narrowing = narrowing(query, size: size, needsEveryMatch: needsEveryMatch)
        let keywordsExact = narrowing.keywordsExact
        let filter = KeyFilter(query)
        // With exact keyword sets the words are not checked again; relevance scores them anyway.
        func hit(_ entry: Entry) -> ListingSearchEngine.Hit? {
            guard filter.admits(entry) else { return nil }
            return ListingSearchEngine.hit(
                entry.listing,
                query,
                tokens: entry.tokens,
                titleKey: entry.titleKey,
                keywordsMatched: keywordsExact && sort != .relevance
            )
        }
        if let set = narrowing.slots {
            let count = set.count
            if count == 0 { return Page(items: [], nextPageToken: nil) }
            let walked =
                Double(size + 1) / max(Double(count) / Double(max(1, entries.count)) * narrowing.unbuiltShare, 1e-12)
            if sort == .relevance {
                return relevancePage(set.lazy.compactMap { slots[Int($0)] }, query, size: size)
            }
            if needsEveryMatch {
                var hits: [ListingSearchEngine.Hit] = []
                for slot in set {
                    if let entry = slots[Int(slot)], let found = hit(entry) { hits.append(found) }
                }
                return ListingSearchEngine.page(hits, query, size: size)
            }
            if Double(count) * costs.walkStepsPerCollected < walked {
                return collect(set, query, size: size, hit: hit)
            }
        } else if needsEveryMatch {
            if sort == .relevance { return relevancePage(slots.lazy.compactMap { $0 }, query, size: size) }
            return ListingSearchEngine.page(slots.compactMap { $0.flatMap(hit) }, query, size: size)
        }
        return walk(query, size: size, narrowing: narrowing)
    }

    /// A page in relevance order: each candidate the key filters admit is scored from its weighted tokens
    /// (no copy of the listing, no text), the scored ones after the cursor are put in order (score, then
    /// newest, then id, as ``ListingSearchEngine`` orders), and only the first are looked at in full.
    private func relevancePage(
        _ candidates: some Sequence<Entry>,
        _ query: CompiledListingQuery,
        size: Int
    ) -> Page<ListingSearchHit> {
        let filter = KeyFilter(query)
        // Plain values to sort (no reference counting per comparison); ids break the rare equal times.
        typealias Scored = (score: Int, createdAt: Int64, slot: Int32)
        func precedes(_ a: Scored, _ b: Scored) -> Bool {
            if a.score != b.score { return a.score > b.score }
            if a.createdAt != b.createdAt { return a.createdAt > b.createdAt }
            guard let left = slots[Int(a.slot)], let right = slots[Int(b.slot)] else { return a.slot < b.slot }
            return Self.newestFirst(left.key, right.key)
        }
        let cursor = query.cursor.map { (score: $0.r ?? 0, key: Self.key($0)) }
        var scored: [Scored] = []
        for entry in candidates {
            guard filter.admits(entry), let score = entry.weighted.score(query.terms) else { continue }
            if let cursor {
                let after =
                    cursor.score != score ? cursor.score > score : Self.newestFirst(cursor.key, entry.key)
                if !after { continue }
            }
            scored.append((score, entry.key.createdAt, entry.slot))
        }
        scored.sort(by: precedes)
        var hits: [ListingSearchEngine.Hit] = []
        for (score, _, slot) in scored {
            guard
                let entry = slots[Int(slot)],
                var found = ListingSearchEngine.hit(
                    entry.listing,
                    query,
                    titleKey: entry.titleKey,
                    keywordsMatched: true
                )
            else { continue }
            found.score = score
            hits.append(found)
            if hits.count > size { break }
        }
        return ListingSearchEngine.page(ordered: hits, query, size: size)
    }

    /// The order index a sort walks (relevance without terms and distance without a circle are newest
    /// first, as every score or distance ties).
    private func orderIndex(_ sort: ListingSort) -> SortedKeys<OrderKey> {
        switch sort {
        case .priceAscending: cheapest
        case .priceDescending: dearest
        case .title: byTitle
        default: newest
        }
    }

    /// The key of the last listing a cursor names.
    private static func key(_ cursor: ListingSearchEngine.Cursor) -> OrderKey {
        OrderKey(price: cursor.p ?? 0, title: cursor.t ?? "", createdAt: cursor.c, id: cursor.i)
    }

    /// A page from a set of candidates in an order their keys define: the candidates the keys' filters
    /// admit are put in order by key, and only the first are looked at in full until the page is full,
    /// so a listing that cannot be on the page is never copied.
    private func collect(
        _ set: SlotSet,
        _ query: CompiledListingQuery,
        size: Int,
        hit: (Entry) -> ListingSearchEngine.Hit?
    ) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let filter = KeyFilter(query)
        // Candidates are ranked by plain numbers (no reference counting per comparison): the order's
        // primary key (the price, negated for dearest first; nothing for newest first), then newest first,
        // then ids descending for the rare equal times. Title order compares the title keys themselves.
        typealias Ranked = (primary: Int64, createdAt: Int64, slot: Int32)
        func primary(price: Int64) -> Int64 {
            switch sort {
            case .priceAscending: price
            case .priceDescending: -price
            default: 0
            }
        }
        func idPrecedes(_ a: String, _ b: String) -> Bool { b.utf8.lexicographicallyPrecedes(a.utf8) }
        func precedes(_ a: Ranked, _ b: Ranked) -> Bool {
            if a.primary != b.primary { return a.primary < b.primary }
            guard let left = slots[Int(a.slot)], let right = slots[Int(b.slot)] else { return a.slot < b.slot }
            if sort == .title, left.key.title != right.key.title {
                return left.key.title.utf8.lexicographicallyPrecedes(right.key.title.utf8)
            }
            if a.createdAt != b.createdAt { return a.createdAt > b.createdAt }
            return idPrecedes(left.key.id, right.key.id)
        }
        let after = query.cursor.map(Self.key)
        func isAfterCursor(_ entry: Entry, _ ranked: Ranked) -> Bool {
            guard let after else { return true }
            let cursorPrimary = primary(price: after.price)
            if cursorPrimary != ranked.primary { return cursorPrimary < ranked.primary }
            if sort == .title, after.title != entry.key.title {
                return after.title.utf8.lexicographicallyPrecedes(entry.key.title.utf8)
            }
            if after.createdAt != ranked.createdAt { return after.createdAt > ranked.createdAt }
            return idPrecedes(after.id, entry.key.id)
        }
        var ranked: [Ranked] = []
        for slot in set {
            guard let entry = slots[Int(slot)], filter.admits(entry) else { continue }
            let candidate = (primary(price: entry.key.price), entry.key.createdAt, slot)
            if isAfterCursor(entry, candidate) { ranked.append(candidate) }
        }
        ranked.sort(by: precedes)
        var hits: [ListingSearchEngine.Hit] = []
        for candidate in ranked {
            guard let entry = slots[Int(candidate.slot)], let found = hit(entry) else { continue }
            hits.append(found)
            if hits.count > size { break }
        }
        return ListingSearchEngine.page(ordered: hits, query, size: size)
    }

    /// Walks the order's index from the cursor, testing each key against the filters it carries and the
    /// narrowing set, until a page (and one more, for the next page's token) is full.
    private func walk(_ query: CompiledListingQuery, size: Int, narrowing: Narrowing) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let index = orderIndex(sort)
        var start = index.start
        if let cursor = query.cursor {
            start = index.position(of: Self.key(cursor), after: true)
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
        let keyFilter = KeyFilter(query)
        func isPastEnd(price: Int64, createdAt: Int64) -> Bool {
            switch sort {
            case .priceAscending: return price > keyFilter.maxPrice
            case .priceDescending: return price < keyFilter.minPrice
            case .title: return false
            default: return createdAt < keyFilter.since
            }
        }
        let set = narrowing.slots
        let checkWords = !query.terms.isEmpty && !narrowing.keywordsExact
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
                    let price = keys[at].price
                    let createdAt = keys[at].createdAt
                    if isPastEnd(price: price, createdAt: createdAt) {
                        full = true
                        return
                    }
                    // The filters the key carries are checked before the listing is looked up.
                    guard
                        keyFilter.admits(
                            status: keys[at].status,
                            category: keys[at].category,
                            condition: keys[at].condition,
                            price: price,
                            createdAt: createdAt
                        )
                    else { continue }
                    let slot = keys[at].slot
                    if let set, !set.contains(slot) { continue }
                    guard let entry = slots[Int(slot)] else { continue }
                    if checkWords, entry.weighted.score(query.terms) == nil { continue }
                    // The words are matched by now (by the set or just above).
                    if let found = ListingSearchEngine.hit(
                        entry.listing,
                        query,
                        titleKey: entry.titleKey,
                        keywordsMatched: true
                    ) {
                        hits.append(found)
                    }
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
}

/// The costs an in-memory listing search weighs when it chooses how to answer (see `ListingIndex`).
package struct ListingSearchCosts: Sendable {
    /// How many postings cost as much as checking one walked listing's own words: a search reads a
    /// term's (or tag's, seller's, circle's) postings into a set only when that costs less than checking
    /// the listings its walk would reach.
    package var postingsPerWordCheck = 16.0
    /// How many walk steps checking one listing of a set costs: a search collects a set's listings,
    /// rather than walking an order, when that costs less.
    package var walkStepsPerCollected = 4.0

    /// The costs measured on this code.
    package static let measured = ListingSearchCosts()
    /// Builds every set and always collects (tests: the collecting path on any data).
    package static let alwaysCollect = ListingSearchCosts(postingsPerWordCheck: .infinity, walkStepsPerCollected: 0)
    /// Builds no set unless every match is needed, and always walks (tests: the walking path).
    package static let alwaysWalk = ListingSearchCosts(postingsPerWordCheck: 0, walkStepsPerCollected: .infinity)
}
