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
        /// The listing's key in the order indexes (with its title's ``SearchText/sortKey(_:)``), computed
        /// once: reading it never copies the listing.
        let key: OrderKey

        var slot: Int32 { key.slot }
        var titleKey: String { key.title }

        init(listing: Listing, tokens: SearchText.DocumentTokens, slot: Int32) {
            self.listing = listing
            self.tokens = tokens
            self.key = OrderKey(
                price: listing.priceCents,
                title: SearchText.sortKey(listing.title),
                createdAt: listing.createdAt.millisecondsSince1970,
                id: listing.id,
                idPrefix: ListingIndex.idPrefix(listing.id),
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
        /// The id's first 8 UTF-8 bytes as a big-endian number (zeros past its end): comparing two
        /// prefixes orders most ids without comparing the strings.
        var idPrefix: UInt64 = 0
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
    /// What relevance scoring and set collecting read per listing, in flat arrays by slot: looking at a
    /// candidate costs a read of these (close together for close slots) instead of following its
    /// ``Entry`` and its token arrays to three places in memory, which was most of a search that scores
    /// tens of thousands of listings (a one-letter prefix in relevance order).
    private(set) var columns = SlotColumns()
    private var words = InvertedIndex<Int32>()
    /// The postings of common tokens again, as bitsets: a term whose token is in one of every
    /// ``denseShare`` listings is read a word (64 listings) at a time rather than a listing at a time.
    private var dense: [String: SlotSet] = [:]
    static let denseShare = 64
    /// A number per distinct token indexed (freed with the token's last listing, then reused).
    private var tokenIDs: [String: Int32] = [:]
    private var freeTokenIDs: [Int32] = []
    private var nextTokenID: Int32 = 0
    private var tagged: [String: Set<Int32>] = [:]
    private var bySeller: [String: Set<Int32>] = [:]
    private var grid = GridIndex<Int32>()
    /// Each grid cell's listings (``SkiffDomain/ApproximateLocation``, by search point), newest first: a
    /// search in distance order walks a circle's cells band by band of shown distance.
    private var byCell: [ApproximateLocation.Cell: SortedKeys<OrderKey>] = [:]
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

    /// The id of a token, given one if it has none.
    private mutating func internedID(_ token: String) -> Int32 {
        if let id = tokenIDs[token] { return id }
        let id: Int32
        if let free = freeTokenIDs.popLast() {
            id = free
        } else {
            id = nextTokenID
            nextTokenID += 1
        }
        tokenIDs[token] = id
        return id
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
        let document = SearchText.DocumentTokens(listing.fields)
        var weights: [String: Int32] = [:]
        for token in document.title { weights[token, default: 0] += 3 }
        for token in document.tags { weights[token, default: 0] += 2 }
        for token in document.description { weights[token, default: 0] += 1 }
        let weighted = weights.map { token, weight in (id: internedID(token), weight: weight) }
        let entry = Entry(listing: listing, tokens: document, slot: slot)
        entries[listing.id] = entry
        slots[Int(slot)] = entry
        columns.put(entry.key, weighted: weighted)
        let tokens = Set(weights.keys)
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
        let key = entry.key
        if let point = ListingRules.searchPoint(for: listing.location) {
            grid.insert(slot, latitude: point.latitude, longitude: point.longitude)
            if let cell = ApproximateLocation.cell(latitude: point.latitude, longitude: point.longitude) {
                byCell[cell, default: SortedKeys(by: ListingIndex.newestFirst)].insert(key)
            }
        }
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
        columns.remove(slot)
        freeSlots.append(slot)
        let tokens = Self.distinctTokens(entry.tokens)
        words.remove(slot, tokens: tokens)
        for token in tokens where words.count(token) == 0 {
            dense[token] = nil
            if let id = tokenIDs.removeValue(forKey: token) { freeTokenIDs.append(id) }
        }
        for token in tokens { dense[token]?.remove(slot) }
        for tag in entry.listing.tags { Self.remove(slot, from: &tagged, at: tag) }
        Self.remove(slot, from: &bySeller, at: entry.listing.sellerID)
        let key = entry.key
        if let point = ListingRules.searchPoint(for: entry.listing.location) {
            grid.remove(slot, latitude: point.latitude, longitude: point.longitude)
            if let cell = ApproximateLocation.cell(latitude: point.latitude, longitude: point.longitude) {
                _ = byCell[cell]?.remove(key) { $0.id == id }
                if byCell[cell]?.count == 0 { byCell[cell] = nil }
            }
        }
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

    /// The token ids a query term matches: its own token's, or for the last term every token it is a
    /// prefix of.
    enum TermTokens {
        case none
        case one(Int32)
        case many(SlotSet)
    }

    /// The token ids each query term matches.
    func termTokens(_ terms: [String]) -> [TermTokens] {
        terms.enumerated().map { position, term in
            guard position == terms.count - 1 else { return tokenIDs[term].map(TermTokens.one) ?? .none }
            var ids: [Int32] = []
            words.forEachPosting(matching: term, prefix: true) { token, _ in
                if let id = tokenIDs[token] { ids.append(id) }
            }
            switch ids.count {
            case 0: return .none
            case 1: return .one(ids[0])
            default:
                var set = SlotSet(capacity: Int(nextTokenID))
                for id in ids { set.insert(id) }
                return .many(set)
            }
        }
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

        func admits(_ columns: SlotColumns, _ slot: Int32) -> Bool {
            let at = Int(slot)
            return admits(
                status: columns.status[at],
                category: columns.category[at],
                condition: columns.condition[at],
                price: columns.price[at],
                createdAt: columns.createdAt[at]
            )
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
        if sort == .distance, let near = query.query.filter.near, let bands = cellBands(near),
            walksCells(query, bands, size: size)
        {
            return bandWalk(query, bands: bands, size: size)
        }
        if sort != .distance, sort != .relevance || query.terms.isEmpty, let near = query.query.filter.near,
            let bands = cellBands(near), readsCells(query, bands, size: size)
        {
            return bandWalk(query, bands: bands, size: size)
        }
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
                return relevancePage(set, query, size: size)
            }
            if needsEveryMatch {
                var hits: [ListingSearchEngine.Hit] = []
                for slot in set {
                    if let entry = slots[Int(slot)], let found = hit(entry) { hits.append(found) }
                }
                return ListingSearchEngine.page(hits, query, size: size)
            }
            if Double(count) * costs.walkStepsPerCollected < walked {
                return collect(set, query, size: size, checkWords: !keywordsExact && !query.terms.isEmpty, hit: hit)
            }
        } else if needsEveryMatch {
            if sort == .relevance { return relevancePage(0..<Int32(slots.count), query, size: size) }
            return ListingSearchEngine.page(slots.compactMap { $0.flatMap(hit) }, query, size: size)
        }
        return walk(query, size: size, narrowing: narrowing)
    }

    /// Whether a search in distance order walks the circle's cells (``bandWalk(_:bands:size:)``) rather than
    /// check every listing of its smallest set and sort them: it does unless a seller is named, a tag keeps
    /// fewer than ``ListingSearchEngine/fewCandidates`` listings (its postings are read, which SQLite cannot
    /// do for a tag, so it walks), or `ListingSearchEngine.walksCells` says the keyword matches (estimated
    /// from the terms' counts, as if independent) are fewer than the walk would step through (the rule the
    /// SQLite store follows).
    private func walksCells(
        _ query: CompiledListingQuery,
        _ bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        size: Int
    ) -> Bool {
        if let walks = costs.walksCells { return walks }
        guard query.query.filter.sellerID == nil else { return false }
        let few = ListingSearchEngine.fewCandidates
        for tag in query.tags where (tagged[tag]?.count ?? 0) < few { return false }
        guard !query.terms.isEmpty else { return true }
        let total = Double(max(1, entries.count))
        var matches = total
        for (position, term) in query.terms.enumerated() {
            let prefix = position == query.terms.count - 1
            let count = prefix ? words.count(prefix: term, limit: Int(total)) : words.count(term)
            matches *= min(Double(count), total) / total
        }
        let inCircle = bands.reduce(0) { sum, band in band.cells.reduce(sum) { $0 + (byCell[$1]?.count ?? 0) } }
        return ListingSearchEngine.walksCells(
            matches: matches,
            inCircle: Double(inCircle),
            total: total,
            size: size,
            selectivity: ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false)
        )
    }

    /// Whether a search in a circle in another order than distance reads the circle's cells
    /// (``bandWalk(_:bands:size:)``: newest first until the page is full, or every listing of them for price
    /// and title) rather than narrow by sets and walk the order: when the circle's listings (`bands`' cells'
    /// counts) cost less to read than the order's walk would step through, about `(size + 1) · listings /
    /// (circle's listings · filter selectivity)` (the circle's listings for newest first, capped at what
    /// `size + 1` per cell would read). Without keywords, tags or a seller (their sets narrow better).
    private func readsCells(
        _ query: CompiledListingQuery,
        _ bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        size: Int
    ) -> Bool {
        if let walks = costs.walksCells { return walks }
        guard query.terms.isEmpty, query.tags.isEmpty, query.query.filter.sellerID == nil else { return false }
        let total = Double(max(1, entries.count))
        let inCircle = Double(bands.reduce(0) { sum, band in band.cells.reduce(sum) { $0 + (byCell[$1]?.count ?? 0) } })
        let selectivity = ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false)
        let walked = min(total, Double(size + 1) * total / max(inCircle * selectivity, 1))
        return inCircle * costs.walkStepsPerCollected < walked
    }

    /// The cells whose centres are in the circle, by band of shown distance (``SkiffDomain/GridCircle/bands(_:)``),
    /// found among the box's cells or the occupied cells, whichever are fewer; `nil` when the circle's box
    /// wraps around the antimeridian or a pole.
    private func cellBands(_ near: GeoCircle) -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        let grid = ListingSearchEngine.grid(near)
        guard let box = grid.boxCells else { return nil }
        let boxCount = box.reduce(0) { $0 + $1.columns.count }
        guard boxCount <= byCell.count else { return grid.bands(byCell.keys) }
        return grid.bands(
            box.lazy.flatMap { row in
                row.columns.lazy.map { ApproximateLocation.Cell(row: row.row, column: $0) }
            }.filter { byCell[$0] != nil }
        )
    }

    /// A page of a search in a circle from the circle's grid cells (`bands`: ``cellBands(_:)``): everyone but
    /// the searcher sees a listing at its cell's centre, at that distance rounded
    /// (``SkiffDomain/ApproximateLocation``), so distance order is band by band of the cells whose centres are
    /// in the circle, newest first within a band; another order reads the cells as one band (newest first
    /// until the page is full; price and title: every listing of them, which the page sorts). Each band's cells are merged newest first from the cursor
    /// (down to `postedSince`), and the walk stops once `size + 1` listings passed. The searcher's own
    /// listings, measured to their exact points, are checked apart (each of them) and merged in by
    /// `ListingSearchEngine.page`.
    ///
    /// Bounded by: the box's cells or the occupied cells, whichever are fewer; the listings stepped until
    /// `size + 1` pass; and the searcher's own listings.
    private func bandWalk(
        _ query: CompiledListingQuery,
        bands: [(distance: Double, cells: [ApproximateLocation.Cell])],
        size: Int
    ) -> Page<ListingSearchHit> {
        let viewer = query.query.viewerID
        let filter = KeyFilter(query)
        func hit(_ entry: Entry) -> ListingSearchEngine.Hit? {
            guard filter.admits(entry) else { return nil }
            return ListingSearchEngine.hit(entry.listing, query, tokens: entry.tokens, titleKey: entry.titleKey)
        }
        var hits: [ListingSearchEngine.Hit] = []
        if let viewer {
            for slot in bySeller[viewer] ?? [] {
                if let entry = slots[Int(slot)], let found = hit(entry) { hits.append(found) }
            }
        }
        let cursor = query.cursor
        let sort = query.query.sort
        let start = cursor.map { OrderKey(price: 0, title: "", createdAt: $0.c, id: $0.i) }
        // Another order reads the cells as one band, newest first from the cursor, or for price and title
        // every listing of them (the page sorts).
        let walked = sort == .distance || bands.isEmpty ? bands : [(distance: 0, cells: bands.flatMap(\.cells))]
        let limit = sort == .distance || sort == .newest ? size : .max
        var others = 0
        for band in walked {
            if sort == .distance, let distance = cursor?.d, band.distance < distance { continue }
            let from =
                sort == .newest || (sort == .distance && cursor?.d == band.distance) ? start : nil
            var merge = SortedKeysMerge<OrderKey>()
            for cell in band.cells {
                guard let list = byCell[cell] else { continue }
                merge.add(list, from: from.map { list.position(of: $0, after: true) } ?? list.start)
            }
            while others <= limit, let key = merge.next(), key.createdAt >= filter.since {
                guard let entry = slots[Int(key.slot)], entry.listing.sellerID != viewer, let found = hit(entry)
                else { continue }
                hits.append(found)
                others += 1
            }
            if others > size { break }
        }
        return ListingSearchEngine.page(hits, query, size: size)
    }

    /// A page in relevance order: each candidate the key filters admit is scored from its weighted tokens
    /// (no copy of the listing, no text), the scored ones after the cursor are put in order (score, then
    /// newest, then id, as ``ListingSearchEngine`` orders), and only the first are looked at in full.
    private func relevancePage(
        _ candidates: some Sequence<Int32>,
        _ query: CompiledListingQuery,
        size: Int
    ) -> Page<ListingSearchHit> {
        let filter = KeyFilter(query)
        // Plain values to sort (no reference counting per comparison); ids break the rare equal times.
        typealias Scored = (score: Int, createdAt: Int64, id: OrderKeyID)
        func id(_ slot: Int32) -> String { slots[Int(slot)]?.key.id ?? "" }
        func precedes(_ a: Scored, _ b: Scored) -> Bool {
            if a.score != b.score { return a.score > b.score }
            if a.createdAt != b.createdAt { return a.createdAt > b.createdAt }
            return Self.idPrecedes(a.id, b.id, ids: id)
        }
        let cursor = query.cursor.map { (score: $0.r ?? 0, key: Self.key($0)) }
        let terms = termTokens(query.terms)
        var best = BestValues<Scored>(limit: Self.keptCandidates(query, size: size), by: precedes)
        for slot in candidates {
            guard columns.isLive(slot), filter.admits(columns, slot), let score = columns.score(slot, terms)
            else { continue }
            let createdAt = columns.createdAt[Int(slot)]
            if let cursor {
                let after: Bool
                if cursor.score != score {
                    after = cursor.score > score
                } else if cursor.key.createdAt != createdAt {
                    after = cursor.key.createdAt > createdAt
                } else {
                    after = id(slot).utf8.lexicographicallyPrecedes(cursor.key.id.utf8)
                }
                if !after { continue }
            }
            best.offer((score, createdAt, (columns.idPrefix[Int(slot)], slot)))
        }
        let scored = best.ordered()
        var hits: [ListingSearchEngine.Hit] = []
        for (score, _, id) in scored {
            guard
                let entry = slots[Int(id.slot)],
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
        OrderKey(
            price: cursor.p ?? 0,
            title: cursor.t ?? "",
            createdAt: cursor.c,
            id: cursor.i,
            idPrefix: idPrefix(cursor.i)
        )
    }

    /// See ``OrderKey/idPrefix``.
    static func idPrefix(_ id: String) -> UInt64 {
        var prefix: UInt64 = 0
        var count = 0
        for byte in id.utf8.prefix(8) {
            prefix = prefix << 8 | UInt64(byte)
            count += 1
        }
        return count == 0 ? 0 : prefix << UInt64(8 * (8 - count))
    }

    /// Whether, between two listings posted at the same time, `a` comes first: ids descending, by their
    /// prefixes when those differ.
    static func idPrecedes(_ a: OrderKeyID, _ b: OrderKeyID, ids: (Int32) -> String) -> Bool {
        if a.prefix != b.prefix { return a.prefix > b.prefix }
        return ids(b.slot).utf8.lexicographicallyPrecedes(ids(a.slot).utf8)
    }

    /// An id by its prefix and the listing's slot (the full id is read only when prefixes tie).
    typealias OrderKeyID = (prefix: UInt64, slot: Int32)

    /// How many candidates a page must keep in order: `size + 1`, or all of them when a filter the key
    /// does not carry (made on campus, tags, seller, circle) may still refuse one.
    static func keptCandidates(_ query: CompiledListingQuery, size: Int) -> Int {
        let filter = query.query.filter
        let keyDecides =
            filter.madeOnCampus == nil && query.tags.isEmpty && filter.sellerID == nil && filter.near == nil
        return keyDecides ? size + 1 : .max
    }

    /// A page from a set of candidates in an order their keys define: of the candidates the keys' filters
    /// and the words admit, the first by key (``BestValues``, ``keptCandidates(_:size:)``) are looked at in full
    /// until the page is full, so a listing that cannot be on the page is never copied.
    private func collect(
        _ set: SlotSet,
        _ query: CompiledListingQuery,
        size: Int,
        checkWords: Bool,
        hit: (Entry) -> ListingSearchEngine.Hit?
    ) -> Page<ListingSearchHit> {
        let sort = query.query.sort
        let filter = KeyFilter(query)
        // Candidates are ranked by plain numbers (no reference counting per comparison): the order's
        // primary key (the price, negated for dearest first; nothing for newest first), then newest first,
        // then ids descending for the rare equal times. Title order compares the title keys themselves.
        typealias Ranked = (primary: Int64, createdAt: Int64, id: OrderKeyID)
        func primary(price: Int64) -> Int64 {
            switch sort {
            case .priceAscending: price
            case .priceDescending: -price
            default: 0
            }
        }
        func id(_ slot: Int32) -> String { slots[Int(slot)]?.key.id ?? "" }
        func precedes(_ a: Ranked, _ b: Ranked) -> Bool {
            if a.primary != b.primary { return a.primary < b.primary }
            if sort == .title, let left = slots[Int(a.id.slot)], let right = slots[Int(b.id.slot)],
                left.key.title != right.key.title
            {
                return left.key.title.utf8.lexicographicallyPrecedes(right.key.title.utf8)
            }
            if a.createdAt != b.createdAt { return a.createdAt > b.createdAt }
            return Self.idPrecedes(a.id, b.id, ids: id)
        }
        let after = query.cursor.map(Self.key)
        func isAfterCursor(_ slot: Int32, _ ranked: Ranked) -> Bool {
            guard let after else { return true }
            let cursorPrimary = primary(price: after.price)
            if cursorPrimary != ranked.primary { return cursorPrimary < ranked.primary }
            if sort == .title, let entry = slots[Int(slot)], after.title != entry.key.title {
                return after.title.utf8.lexicographicallyPrecedes(entry.key.title.utf8)
            }
            if after.createdAt != ranked.createdAt { return after.createdAt > ranked.createdAt }
            return id(slot).utf8.lexicographicallyPrecedes(after.id.utf8)
        }
        // Words the set did not match are checked here, so that the full check cannot refuse a kept one
        // for them.
        let terms = checkWords ? termTokens(query.terms) : []
        var best = BestValues<Ranked>(limit: Self.keptCandidates(query, size: size), by: precedes)
        for slot in set {
            guard columns.isLive(slot), filter.admits(columns, slot) else { continue }
            let at = Int(slot)
            let candidate = (primary(price: columns.price[at]), columns.createdAt[at], (columns.idPrefix[at], slot))
            guard isAfterCursor(slot, candidate) else { continue }
            if checkWords, columns.score(slot, terms) == nil { continue }
            best.offer(candidate)
        }
        var hits: [ListingSearchEngine.Hit] = []
        for candidate in best.ordered() {
            guard let entry = slots[Int(candidate.id.slot)], let found = hit(entry) else { continue }
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
        let terms = checkWords ? termTokens(query.terms) : []
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
                    if checkWords, columns.score(slot, terms) == nil { continue }
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
    /// Whether a search in a circle walks the circle's grid cells: `nil` chooses (see
    /// `ListingIndex.walksCells` and `ListingIndex.readsCells`), `false` never does (every candidate is checked
    /// and sorted, or the order walked), `true` always does (relevance with words excepted).
    package var walksCells: Bool? = nil

    /// The costs measured on this code.
    package static let measured = ListingSearchCosts()
    /// Builds every set and always collects, never walking a circle's cells (tests: the collecting path on
    /// any data, and the reference a walk is checked against).
    package static let alwaysCollect = ListingSearchCosts(
        postingsPerWordCheck: .infinity,
        walkStepsPerCollected: 0,
        walksCells: false
    )
    /// Builds no set unless every match is needed, and always walks, a circle's cells too in distance order
    /// (tests: the walking path).
    package static let alwaysWalk = ListingSearchCosts(
        postingsPerWordCheck: 0,
        walkStepsPerCollected: .infinity,
        walksCells: true
    )
}
