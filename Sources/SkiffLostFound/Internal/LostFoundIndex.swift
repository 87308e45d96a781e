import Foundation
import SkiffDomain

/// The in-memory store's indexes of lost-and-found items: what SQLite's indexes and FTS5 table are to the
/// SQLite store.
///
/// - an ``SkiffDomain/InvertedIndex`` of title and description tokens: keyword search, and the matcher's
///   "shares a keyword" filter;
/// - a ``SkiffDomain/GridIndex`` of points;
/// - the items newest first (``SkiffDomain/SortedKeys``), walked from a cursor;
/// - each item's match keys, and all matches by time.
///
/// Search narrows the candidates with the inverted and grid indexes, then checks and sorts them when they
/// are few (always for distance order), or walks the newest-first index from the cursor checking each
/// item until the page is full. `LostFoundSearchEngine.hit` decides every item, so results equal SQLite's.
struct LostFoundIndex: Sendable {
    struct NewestKey: Sendable {
        var createdAt: Int64
        var id: String
    }

    private(set) var items: [String: LostFoundItem] = [:]
    private var words = InvertedIndex<String>()
    private var grid = GridIndex<String>()
    private var newest = SortedKeys<NewestKey>(by: Self.newestFirst)
    /// Each reporter's items, newest first: "my items" pages walk only the reporter's own.
    private var byReporter: [String: SortedKeys<NewestKey>] = [:]

    @Sendable private static func newestFirst(_ a: NewestKey, _ b: NewestKey) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : b.id.utf8.lexicographicallyPrecedes(a.id.utf8)
    }

    private static func tokens(_ item: LostFoundItem) -> Set<String> {
        Set(TextSearch.tokens(item.title) + TextSearch.tokens(item.fields.description))
    }

    private static func key(_ item: LostFoundItem) -> NewestKey {
        NewestKey(createdAt: item.createdAt.millisecondsSince1970, id: item.id)
    }

    /// Stores and indexes an item, replacing what was indexed for it before.
    mutating func put(_ item: LostFoundItem) {
        if let old = items[item.id] {
            guard old != item else { return }
            words.remove(old.id, tokens: Self.tokens(old))
            if let point = old.point { grid.remove(old.id, latitude: point.latitude, longitude: point.longitude) }
            newest.remove(Self.key(old)) { $0.id == old.id }
            byReporter[old.reporterID]?.remove(Self.key(old)) { $0.id == old.id }
        }
        items[item.id] = item
        words.insert(item.id, tokens: Self.tokens(item))
        if let point = item.point { grid.insert(item.id, latitude: point.latitude, longitude: point.longitude) }
        newest.insert(Self.key(item))
        byReporter[item.reporterID, default: SortedKeys(by: Self.newestFirst)].insert(Self.key(item))
    }

    /// Up to `limit` of a reporter's items in `statuses` (all when empty), newest first, after `cursor`.
    func items(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        after cursor: (createdAt: Int64, id: String)?,
        limit: Int
    ) -> [LostFoundItem] {
        guard let keys = byReporter[reporterID] else { return [] }
        let start =
            cursor.map { keys.position(of: NewestKey(createdAt: $0.createdAt, id: $0.id), after: true) }
            ?? keys.start
        var result: [LostFoundItem] = []
        keys.walk(from: start) { key in
            if let item = items[key.id], statuses.isEmpty || statuses.contains(item.status) { result.append(item) }
            return result.count < limit
        }
        return result
    }

    /// The items that can match `item` (a superset of its matches): those sharing one of its keywords,
    /// of the other kind, still open, in the same category, by someone else.
    func matchCandidates(for item: LostFoundItem, matcher: LostFoundMatcher) -> [LostFoundItem] {
        var ids: Set<String> = []
        for keyword in LostFoundMatcher.keywords(item.fields) { ids.formUnion(words.documents(keyword)) }
        let occurred = item.occurredAt.millisecondsSince1970
        let window = matcher.candidateWindowMilliseconds
        let box = matcher.candidateBox(item)
        // The same candidates as SQLite's: open, other kind, same category, someone else's, in the window,
        // without a point or in the box; the latest `maximumCandidates` of them.
        let candidates = ids.compactMap { id -> LostFoundItem? in
            guard let candidate = items[id], candidate.kind == item.kind.opposite,
                candidate.status == candidate.kind.openStatus, candidate.category == item.category,
                candidate.reporterID != item.reporterID,
                abs(candidate.occurredAt.millisecondsSince1970 - occurred) <= window
            else { return nil }
            if let box, let point = candidate.point {
                guard box.latitude.contains(point.latitude), box.longitude?.contains(point.longitude) ?? true else {
                    return nil
                }
            }
            return candidate
        }
        guard candidates.count > matcher.maximumCandidates else { return candidates }
        return Array(candidates.sorted(by: LostFoundMatcher.takenBefore).prefix(matcher.maximumCandidates))
    }

    /// One page of search results, as `LostFoundSearchEngine` defines them.
    func search(_ query: CompiledLostFoundQuery, size: Int) -> Page<LostFoundSearchHit> {
        // Build a candidate set only when it is small (see `ListingIndex.isFew`), or every match is needed.
        let total = max(items.count, 1)
        func isFew(_ count: Int) -> Bool {
            SortedKeys<NewestKey>.collectingIsCheaper(count, pageSize: size, total: total)
        }
        let byDistance = query.query.sort == .distance && query.query.filter.near != nil
        var sets: [Set<String>] = []
        if !query.terms.isEmpty {
            let limit = Int(Double((size + 1) * total).squareRoot()) + 1
            if byDistance || isFew(words.estimatedCount(matching: query.terms, limit: limit)) {
                sets.append(words.documents(matching: query.terms))
            }
        }
        if let near = query.query.filter.near {
            let box = LostFoundSearchEngine.boundingBox(near)
            if let count = grid.count(latitude: box.latitude, longitude: box.longitude), byDistance || isFew(count),
                let cells = grid.documents(latitude: box.latitude, longitude: box.longitude)
            {
                sets.append(cells)
            }
        }
        sets.sort { $0.count < $1.count }
        var candidates = sets.first
        for set in sets.dropFirst() { candidates?.formIntersection(set) }
        if byDistance || candidates.map({ isFew($0.count) }) == true {
            let ids = candidates.map(Array.init) ?? Array(items.keys)
            let hits = ids.compactMap { items[$0].flatMap { LostFoundSearchEngine.hit($0, query) } }
            return LostFoundSearchEngine.page(hits, query, size: size)
        }
        var start = newest.start
        if let cursor = query.cursor {
            start = newest.position(of: NewestKey(createdAt: cursor.c, id: cursor.i), after: true)
        }
        var hits: [LostFoundSearchEngine.Hit] = []
        newest.walk(from: start) { key in
            if let candidates, !candidates.contains(key.id) { return true }
            if let item = items[key.id], let hit = LostFoundSearchEngine.hit(item, query) { hits.append(hit) }
            return hits.count <= size
        }
        return LostFoundSearchEngine.page(ordered: hits, query, size: size)
    }
}
