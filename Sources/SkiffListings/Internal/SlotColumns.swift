/// The in-memory listing index's per-listing data that searches read for every candidate, in flat
/// arrays by slot: the order keys' filters and each listing's weighted token ids.
///
/// Scoring a candidate through its ``ListingIndex/Entry`` followed three pointers (the entry, its token
/// ids, its weights), each a likely cache miss; a search in relevance order for a one-letter prefix scores
/// tens of thousands of listings, and those misses were most of its time. Here a candidate's data is a
/// few array reads, and the token pairs of all listings share one arena (compacted when half of it is
/// left by removed listings).
struct SlotColumns: Sendable {
    private(set) var price: [Int64] = []
    private(set) var createdAt: [Int64] = []
    private(set) var idPrefix: [UInt64] = []
    private(set) var status: [ListingStatus] = []
    private(set) var category: [ListingCategory] = []
    private(set) var condition: [ListingCondition] = []
    /// Where a slot's (token id, weight) pairs start in ``tokens``; -1 for a free slot.
    private var tokenStart: [Int] = []
    private var tokenCount: [Int] = []
    /// Token ids and weights, interleaved: id, weight, id, weight, …
    private var tokens: [Int32] = []
    /// Arena entries no slot points at any more.
    private var garbage = 0

    /// Whether the slot holds a listing.
    func isLive(_ slot: Int32) -> Bool {
        Int(slot) < tokenStart.count && tokenStart[Int(slot)] >= 0
    }

    /// Records a listing's data at its slot: its order key, and its distinct tokens by id, each with its
    /// weight in ``SearchText/score(of:terms:)`` (3 per title occurrence, 2 per tag occurrence, 1 per
    /// description occurrence), so that matching and scoring compare numbers, never the text.
    mutating func put(_ key: ListingIndex.OrderKey, weighted: [(id: Int32, weight: Int32)]) {
        let at = Int(key.slot)
        if at >= tokenStart.count {
            let more = at + 1 - tokenStart.count
            price.append(contentsOf: repeatElement(0, count: more))
            createdAt.append(contentsOf: repeatElement(0, count: more))
            idPrefix.append(contentsOf: repeatElement(0, count: more))
            status.append(contentsOf: repeatElement(.withdrawn, count: more))
            category.append(contentsOf: repeatElement(.other, count: more))
            condition.append(contentsOf: repeatElement(.new, count: more))
            tokenStart.append(contentsOf: repeatElement(-1, count: more))
            tokenCount.append(contentsOf: repeatElement(0, count: more))
        }
        if tokenStart[at] >= 0 { remove(key.slot) }
        price[at] = key.price
        createdAt[at] = key.createdAt
        idPrefix[at] = key.idPrefix
        status[at] = key.status
        category[at] = key.category
        condition[at] = key.condition
        tokenStart[at] = tokens.count
        tokenCount[at] = weighted.count
        for (id, weight) in weighted {
            tokens.append(id)
            tokens.append(weight)
        }
    }

    /// Frees a slot.
    mutating func remove(_ slot: Int32) {
        let at = Int(slot)
        guard at < tokenStart.count, tokenStart[at] >= 0 else { return }
        garbage += 2 * tokenCount[at]
        tokenStart[at] = -1
        tokenCount[at] = 0
        if garbage > 4096 && garbage * 2 > tokens.count { compact() }
    }

    private mutating func compact() {
        var packed: [Int32] = []
        packed.reserveCapacity(tokens.count - garbage)
        for at in tokenStart.indices where tokenStart[at] >= 0 {
            let start = tokenStart[at]
            tokenStart[at] = packed.count
            packed.append(contentsOf: tokens[start..<start + 2 * tokenCount[at]])
        }
        tokens = packed
        garbage = 0
    }

    /// ``SearchText/score(of:terms:)`` of the listing at a live slot when every term matches one of its
    /// tokens, else `nil` (``SearchText/matches(tokens:terms:)`` and the score in one pass over numbers).
    func score(_ slot: Int32, _ terms: [ListingIndex.TermTokens]) -> Int? {
        let start = tokenStart[Int(slot)]
        let end = start + 2 * tokenCount[Int(slot)]
        return tokens.withUnsafeBufferPointer { pairs -> Int? in
            var total = 0
            for term in terms {
                var score = 0
                switch term {
                case .none: return nil
                case .one(let id):
                    for at in stride(from: start, to: end, by: 2) where pairs[at] == id {
                        score = Int(pairs[at + 1])
                        break
                    }
                case .many(let ids):
                    for at in stride(from: start, to: end, by: 2) where ids.contains(pairs[at]) {
                        score += Int(pairs[at + 1])
                    }
                }
                if score == 0 { return nil }
                total += score
            }
            return total
        }
    }
}
