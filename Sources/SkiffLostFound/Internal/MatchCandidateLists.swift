import SkiffDomain

/// The in-memory store's index for matching a new report: every open item in a list per (kind, category,
/// keyword), latest `occurredAt` first (ties: the greater id), and each open item's keywords as sorted
/// numbers.
///
/// A report's candidates (``LostFoundMatcher``: open items of the other kind in its category sharing one
/// of its keywords, within the time window, by someone else, in the distance box; the latest
/// `maximumCandidates`) are the first ones of its keywords' lists merged in that order from the end of
/// the window. So a report reads about `maximumCandidates` entries per keyword it has, however many items
/// are stored, and counts shared keywords by merging two short arrays of numbers instead of tokenizing
/// both items' text for each pair.
struct MatchCandidateLists: Sendable {
    /// An item's place in a list.
    struct Key: Sendable {
        var occurredAt: Int64
        var id: String
    }

    private struct ListKey: Hashable, Sendable {
        var kind: LostFoundKind
        var category: LostFoundCategory
        var keyword: Int32
    }

    /// Keyword numbers; a keyword keeps its number once it has one.
    private var vocabulary: [String: Int32] = [:]
    private var lists: [ListKey: SortedKeys<Key>] = [:]
    /// Each open item's keyword numbers, sorted.
    private var keywords: [String: [Int32]] = [:]

    /// Latest first, then the greater id: ``LostFoundMatcher/takenBefore(_:_:)``.
    @Sendable private static func latestFirst(_ a: Key, _ b: Key) -> Bool {
        a.occurredAt != b.occurredAt ? a.occurredAt > b.occurredAt : b.id.utf8.lexicographicallyPrecedes(a.id.utf8)
    }

    private static func key(_ item: LostFoundItem) -> Key {
        Key(occurredAt: item.occurredAt.millisecondsSince1970, id: item.id)
    }

    /// Adds a stored item; only open items are candidates, so others are left out.
    mutating func insert(_ item: LostFoundItem) {
        guard item.status == item.kind.openStatus else { return }
        var numbers: [Int32] = []
        for word in LostFoundMatcher.keywords(item.fields) {
            let number: Int32
            if let known = vocabulary[word] {
                number = known
            } else {
                number = Int32(vocabulary.count)
                vocabulary[word] = number
            }
            numbers.append(number)
            lists[ListKey(kind: item.kind, category: item.category, keyword: number), default: Self.emptyList]
                .insert(Self.key(item))
        }
        keywords[item.id] = numbers.sorted()
    }

    private static var emptyList: SortedKeys<Key> { SortedKeys(by: latestFirst) }

    /// Removes an item as it was added (``insert(_:)``).
    mutating func remove(_ item: LostFoundItem) {
        guard let numbers = keywords.removeValue(forKey: item.id) else { return }
        let key = Self.key(item)
        for number in numbers {
            let listKey = ListKey(kind: item.kind, category: item.category, keyword: number)
            lists[listKey]?.remove(key) { $0.id == item.id }
            if lists[listKey]?.count == 0 { lists[listKey] = nil }
        }
    }

    /// The candidates of a new `item` (`stored` reads a stored item by id), latest first, with their
    /// keyword counts.
    func candidates(
        for item: LostFoundItem,
        matcher: LostFoundMatcher,
        stored: (String) -> LostFoundItem?
    ) -> [LostFoundMatcher.Candidate] {
        let words = LostFoundMatcher.keywords(item.fields)
        let own = words.compactMap { vocabulary[$0] }.sorted()
        let occurred = item.occurredAt.millisecondsSince1970
        let window = matcher.candidateWindowMilliseconds
        let earliest = occurred - window
        let box = matcher.candidateBox(item)
        // The lists merged; the same item's entries come out one after another.
        var merge = SortedKeysMerge<Key>()
        let first = Key(occurredAt: occurred + window + 1, id: "")
        for number in own {
            guard let list = lists[ListKey(kind: item.kind.opposite, category: item.category, keyword: number)] else {
                continue
            }
            merge.add(list, from: list.position(of: first, after: true))
        }
        var result: [LostFoundMatcher.Candidate] = []
        var previous: String?
        while result.count < matcher.maximumCandidates, let key = merge.next(), key.occurredAt >= earliest {
            guard key.id != previous else { continue }
            previous = key.id
            guard let candidate = stored(key.id), candidate.reporterID != item.reporterID else { continue }
            if let box, let point = candidate.point {
                guard box.latitude.contains(point.latitude), box.longitude?.contains(point.longitude) ?? true else {
                    continue
                }
            }
            let shared = Self.sharedCount(own, keywords[key.id] ?? [])
            let all = words.count + (keywords[key.id]?.count ?? 0) - shared
            result.append(LostFoundMatcher.Candidate(item: candidate, sharedKeywords: shared, allKeywords: all))
        }
        return result
    }

    /// The numbers two sorted arrays of distinct numbers share.
    private static func sharedCount(_ a: [Int32], _ b: [Int32]) -> Int {
        var i = 0
        var j = 0
        var shared = 0
        while i < a.count, j < b.count {
            if a[i] == b[j] {
                shared += 1
                i += 1
                j += 1
            } else if a[i] < b[j] {
                i += 1
            } else {
                j += 1
            }
        }
        return shared
    }
}
