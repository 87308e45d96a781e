import Foundation
import SkiffDomain

/// The in-memory store's indexes of lost-and-found items: what SQLite's indexes and FTS5 table are to the
/// SQLite store. Items newest first (``SkiffDomain/SortedKeys``):
/// - all of them, and by category;
/// - by token and category (`TokenLists`): keyword search;
/// - by the grid cell of their point (``SkiffDomain/ApproximateLocation``): circles;
/// - by reporter: "my items", and the searcher's own items in a circle;
/// and open items by kind, category and keyword, latest to occur first, for matching (`MatchCandidateLists`).
///
/// A search walks, newest first from its cursor, the smallest of the sets of lists that hold every item it
/// can find — its rarest keyword's lists in its categories, the cells whose centres are in its circle
/// (everyone else's distance is measured to the centre), or its categories' lists — checking each item
/// until the page is full. Distance order walks the circle's cells band by band of shown distance, or,
/// when the rarest keyword's items are fewer, checks those and sorts them. The searcher's own items,
/// measured to their exact points, are checked apart and merged in. `LostFoundSearchEngine.hit` decides
/// every item, so results equal SQLite's.
struct LostFoundIndex: Sendable {
    /// An item's place in a newest-first list, with the item (`nil` in keys that only look a place up).
    struct NewestKey: Sendable {
        var createdAt: Int64
        var id: String
        var entry: Entry?
    }

    /// A stored item with its ``LostFoundSearchEngine/tokens(_:)``: an object, so reading one while walking
    /// an index costs one reference count, not one per string the item holds.
    final class Entry: Sendable {
        let item: LostFoundItem
        let tokens: [String]

        init(_ item: LostFoundItem) {
            self.item = item
            self.tokens = LostFoundSearchEngine.tokens(item)
        }
    }

    private var entries: [String: Entry] = [:]

    /// The item stored with an id.
    subscript(item id: String) -> LostFoundItem? { entries[id]?.item }
    private var words = TokenLists()
    private var newest = SortedKeys<NewestKey>(by: Self.newestFirst)
    private var byCategory: [LostFoundCategory: SortedKeys<NewestKey>] = [:]
    /// Items with a point, by the grid cell that holds it.
    private var byCell: [ApproximateLocation.Cell: SortedKeys<NewestKey>] = [:]
    /// Each reporter's items, newest first: "my items" pages walk only the reporter's own.
    private var byReporter: [String: SortedKeys<NewestKey>] = [:]
    /// Each reporter's items with a point, by cell: a searcher's own items in a circle.
    private var byReporterCell: [String: [ApproximateLocation.Cell: SortedKeys<NewestKey>]] = [:]
    /// Open items by kind, category and keyword, latest to occur first: a report's match candidates.
    private var matching = MatchCandidateLists()

    @Sendable static func newestFirst(_ a: NewestKey, _ b: NewestKey) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : b.id.utf8.lexicographicallyPrecedes(a.id.utf8)
    }

    private static var emptyList: SortedKeys<NewestKey> { SortedKeys(by: newestFirst) }

    private static func key(_ item: LostFoundItem, _ entry: Entry? = nil) -> NewestKey {
        NewestKey(createdAt: item.createdAt.millisecondsSince1970, id: item.id, entry: entry)
    }

    private static func cell(_ item: LostFoundItem) -> ApproximateLocation.Cell? {
        item.point.flatMap { ApproximateLocation.cell(latitude: $0.latitude, longitude: $0.longitude) }
    }

    /// Stores and indexes an item, replacing what was indexed for it before.
    mutating func put(_ item: LostFoundItem) {
        if let oldEntry = entries[item.id] {
            let old = oldEntry.item
            guard old != item else { return }
            let key = Self.key(old)
            words.remove(key, tokens: Set(oldEntry.tokens), category: old.category)
            newest.remove(key) { $0.id == old.id }
            Self.remove(key, from: &byCategory, at: old.category)
            if let cell = Self.cell(old) { Self.remove(key, from: &byCell, at: cell) }
            Self.remove(key, from: &byReporter, at: old.reporterID)
            if let cell = Self.cell(old) {
                Self.remove(key, from: &byReporterCell[old.reporterID, default: [:]], at: cell)
                if byReporterCell[old.reporterID]?.isEmpty == true { byReporterCell[old.reporterID] = nil }
            }
            matching.remove(old)
        }
        let entry = Entry(item)
        let key = Self.key(item, entry)
        entries[item.id] = entry
        words.insert(key, tokens: Set(entry.tokens), category: item.category)
        newest.insert(key)
        byCategory[item.category, default: Self.emptyList].insert(key)
        if let cell = Self.cell(item) { byCell[cell, default: Self.emptyList].insert(key) }
        byReporter[item.reporterID, default: Self.emptyList].insert(key)
        if let cell = Self.cell(item) {
            byReporterCell[item.reporterID, default: [:]][cell, default: Self.emptyList].insert(key)
        }
        matching.insert(item)
    }

    private static func remove<Group: Hashable>(
        _ key: NewestKey,
        from lists: inout [Group: SortedKeys<NewestKey>],
        at group: Group
    ) {
        lists[group]?.remove(key) { $0.id == key.id }
        if lists[group]?.count == 0 { lists[group] = nil }
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
            if let item = key.entry?.item, statuses.isEmpty || statuses.contains(item.status) {
                result.append(item)
            }
            return result.count < limit
        }
        return result
    }

    /// The items that can match `item` (a superset of its matches), with their keyword counts: those
    /// sharing one of its keywords, of the other kind, still open, in the same category, by someone else,
    /// in the time window, without a point or in the distance box; the latest `maximumCandidates` of them,
    /// as SQLite's.
    func matchCandidates(for item: LostFoundItem, matcher: LostFoundMatcher) -> [LostFoundMatcher.Candidate] {
        matching.candidates(for: item, matcher: matcher) { entries[$0]?.item }
    }

    /// One page of search results, as `LostFoundSearchEngine` defines them.
    func search(_ query: CompiledLostFoundQuery, size: Int) -> Page<LostFoundSearchHit> {
        let filter = query.query.filter
        let viewer = query.query.viewerID
        func hit(_ entry: Entry) -> LostFoundSearchEngine.Hit? {
            LostFoundSearchEngine.hit(entry.item, query, tokens: entry.tokens)
        }
        // The sets of lists that hold every item the search can find; it walks the smallest.
        var drivers: [(lists: [SortedKeys<NewestKey>], count: Int)] = []
        if filter.categories.isEmpty {
            drivers.append(([newest], newest.count))
        } else {
            let lists = filter.categories.compactMap { byCategory[$0] }
            drivers.append((lists, lists.reduce(0) { $0 + $1.count }))
        }
        // About how many items match the keywords and categories (each word taken as independent).
        var matching = Double(drivers[0].count)
        if !query.terms.isEmpty {
            // Counted no further than the categories' size: a larger set is never walked.
            let rarest = words.rarest(query.terms, categories: filter.categories, limit: drivers[0].count)
            let base = Double(max(drivers[0].count, 1))
            matching = rarest.others.reduce(Double(rarest.count)) { $0 * Double($1) / base }
            drivers.append((rarest.lists, rarest.count))
        }
        let byDistance = query.query.sort == .distance && filter.near != nil
        let smallest = drivers.min { $0.count < $1.count }!
        // The circle's cells (not the searcher's own items, which are walked apart); `nil` when the box
        // wraps around the antimeridian or a pole, or when the smallest set is so small that checking it
        // whole costs less than finding the cells.
        let circle =
            smallest.count <= 4 * (size + 1) ? nil : filter.near.flatMap { cells(in: $0, byDistance: byDistance) }
        let circleCount = circle?.reduce(0) { $0 + $1.lists.reduce(0) { $0 + $1.count } } ?? .max
        let start = query.cursor.map { NewestKey(createdAt: $0.c, id: $0.i) }

        if byDistance,
            circle == nil
                || smallest.count
                    <= Self.walkEstimate(circleCount, matching: matching, of: entries.count, size: size)
        {
            // Checking every item of the smallest set and sorting the hits costs less than walking the
            // circle's bands until the page is full (or there are no bands to walk: see `circle`).
            var hits: [LostFoundSearchEngine.Hit] = []
            for list in smallest.lists {
                list.walk(from: list.start) { key in
                    if let entry = key.entry, let hit = hit(entry) { hits.append(hit) }
                    return true
                }
            }
            // A prefix's tokens' lists may share items: each hit once.
            var seen: Set<String> = []
            hits.removeAll { !seen.insert($0.item.id).inserted }
            return LostFoundSearchEngine.page(hits, query, size: size)
        }
        guard let circle, byDistance || circleCount < smallest.count else {
            // Newest first through the smallest set, each item's distance (if any) checked one by one.
            var hits: [LostFoundSearchEngine.Hit] = []
            walk(smallest.lists, from: start) { entry in
                if let hit = hit(entry) { hits.append(hit) }
                return hits.count <= size
            }
            return LostFoundSearchEngine.page(ordered: hits, query, size: size)
        }
        // The searcher's own items are measured to their exact points: checked apart, merged in by `page`.
        var hits = viewer.map { ownHits($0, in: filter.near!, query, size: size) } ?? []
        // Everyone else's, from the cells whose centres are in the circle (their items' measured distance),
        // newest first; for distance order, band by band of shown distance.
        var others = 0
        for band in circle {
            if byDistance, let after = query.cursor?.d, band.distance < after { continue }
            let from = !byDistance || query.cursor?.d == band.distance ? start : nil
            walk(band.lists, from: from) { entry in
                guard entry.item.reporterID != viewer, let hit = hit(entry) else { return true }
                hits.append(hit)
                others += 1
                return others <= size
            }
            if others > size { break }
        }
        return LostFoundSearchEngine.page(hits, query, size: size)
    }

    /// The page's candidates among the searcher's own items in a circle, measured to their exact points:
    /// newest first, the first `size + 1` after the cursor; nearest first, every item of the cells that
    /// may hold one of the `size + 1` nearest after the cursor. An exact point is at most
    /// ``SkiffDomain/ApproximateLocation/maximumShiftKm`` from its cell's centre, which bounds the cells
    /// read.
    private func ownHits(
        _ viewer: String,
        in circle: LostFoundCircle,
        _ query: CompiledLostFoundQuery,
        size: Int
    ) -> [LostFoundSearchEngine.Hit] {
        guard let cells = byReporterCell[viewer] else { return [] }
        let margin = ApproximateLocation.maximumShiftKm + 1e-6
        let grid = LostFoundSearchEngine.grid(circle)
        // The cells that may hold a point in the circle, with the least distance one of their points can have.
        let near = cells.compactMap { cell, list -> (least: Double, list: SortedKeys<NewestKey>)? in
            let km = grid.distanceKm(to: cell)
            return km - margin <= circle.radiusKm ? (km - margin, list) : nil
        }
        var hits: [LostFoundSearchEngine.Hit] = []
        func check(_ entry: Entry) {
            guard let hit = LostFoundSearchEngine.hit(entry.item, query, tokens: entry.tokens) else { return }
            hits.append(hit)
        }
        guard query.query.sort == .distance else {
            walk(near.map(\.list), from: query.cursor.map { NewestKey(createdAt: $0.c, id: $0.i) }) { entry in
                check(entry)
                return hits.count <= size
            }
            return hits
        }
        // Nearest cells first, until the next cell's nearest possible point is farther than the
        // `size + 1`-th nearest hit after the cursor.
        var distances: [Double] = []
        for cell in near.sorted(by: { $0.least < $1.least }) {
            if distances.count > size {
                distances.sort()
                if cell.least > distances[size] { break }
            }
            let before = hits.count
            cell.list.walk(from: cell.list.start) { key in
                if let entry = key.entry { check(entry) }
                return true
            }
            for hit in hits[before...] {
                let key = LostFoundSearchEngine.cursor(of: hit, query)
                if let after = query.cursor, !LostFoundSearchEngine.precedes(after, key) { continue }
                distances.append(hit.distanceKm ?? 0)
            }
        }
        return hits
    }

    /// About how many items a walk through `walked` items finds a page of `size` in, when `matching` of
    /// all `total` items pass the search's other filters (taken as independent): at most all of them.
    private static func walkEstimate(_ walked: Int, matching: Double, of total: Int, size: Int) -> Int {
        guard walked > 0 else { return 0 }
        let estimate = Double(size + 1) * Double(total) / max(matching, 1)
        return estimate < Double(walked) ? Int(estimate) : walked
    }

    /// Calls `body` with each item in `lists`, merged newest first, from after `start` (from the
    /// first without one), once each, until it returns `false`.
    private func walk(_ lists: [SortedKeys<NewestKey>], from start: NewestKey?, _ body: (Entry) -> Bool) {
        if lists.count == 1 {
            let list = lists[0]
            list.walk(from: start.map { list.position(of: $0, after: true) } ?? list.start) { key in
                key.entry.map(body) ?? true
            }
            return
        }
        var merge = SortedKeysMerge<NewestKey>()
        for list in lists { merge.add(list, from: start.map { list.position(of: $0, after: true) } ?? list.start) }
        var previous: String?
        while let key = merge.next() {
            // An item holding several tokens of a prefix is in several lists: the same key, one after another.
            guard key.id != previous else { continue }
            previous = key.id
            if let entry = key.entry, !body(entry) { return }
        }
    }

    /// The lists of the cells whose centres are inside the circle: one group of them all, or for distance
    /// order one group per shown distance, nearest first. Visits the cells the circle's box covers or the
    /// cells holding items, whichever are fewer.
    private func cells(
        in circle: LostFoundCircle,
        byDistance: Bool
    ) -> [(distance: Double, lists: [SortedKeys<NewestKey>])] {
        let grid = LostFoundSearchEngine.grid(circle)
        let box = grid.boxCells
        let boxCount = box?.reduce(0) { $0 + $1.columns.count } ?? .max
        let bands: [(distance: Double, cells: [ApproximateLocation.Cell])]
        if let box, boxCount <= byCell.count {
            bands = grid.bands(
                box.lazy.flatMap { row in
                    row.columns.lazy.map { ApproximateLocation.Cell(row: row.row, column: $0) }
                }.filter { byCell[$0] != nil }
            )
        } else {
            bands = grid.bands(byCell.keys)
        }
        let grouped = bands.map { (distance: $0.distance, lists: $0.cells.compactMap { byCell[$0] }) }
        guard !byDistance else { return grouped }
        return grouped.isEmpty ? [] : [(distance: 0, lists: grouped.flatMap(\.lists))]
    }
}
