/// A set of the in-memory listing index's slot numbers as a bitset: one bit per slot, so that building
/// it from postings, intersecting two and testing a listing on a walk each cost a few instructions per
/// element, with no hashing.
struct SlotSet: Sequence {
    private var words: [UInt64]

    /// An empty set able to hold slots `0..<capacity`.
    init(capacity: Int) {
        words = Array(repeating: 0, count: (capacity + 63) / 64)
    }

    /// The set of `slots`, each below `capacity`.
    init(_ slots: Set<Int32>, capacity: Int) {
        self.init(capacity: capacity)
        for slot in slots { insert(slot) }
    }

    /// Adds a slot, growing the set when the slot is past its capacity.
    mutating func insert(_ slot: Int32) {
        let word = Int(slot) >> 6
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
        words[word] |= 1 << UInt64(slot & 63)
    }

    mutating func remove(_ slot: Int32) {
        let word = Int(slot) >> 6
        if word < words.count { words[word] &= ~(1 << UInt64(slot & 63)) }
    }

    func contains(_ slot: Int32) -> Bool {
        let word = Int(slot) >> 6
        return word < words.count && words[word] & (1 << UInt64(slot & 63)) != 0
    }

    /// Keeps only the slots also in `other`.
    mutating func formIntersection(_ other: SlotSet) {
        for index in words.indices { words[index] &= index < other.words.count ? other.words[index] : 0 }
    }

    /// Adds every slot of `other` (word by word: a dense set costs its capacity / 64 steps, not its count).
    mutating func formUnion(_ other: SlotSet) {
        if other.words.count > words.count {
            words.append(contentsOf: repeatElement(0, count: other.words.count - words.count))
        }
        for index in other.words.indices { words[index] |= other.words[index] }
    }

    /// The number of slots in the set.
    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// The slots in increasing order.
    struct Iterator: IteratorProtocol {
        fileprivate let words: [UInt64]
        fileprivate var index = 0
        fileprivate var rest: UInt64 = 0

        mutating func next() -> Int32? {
            while rest == 0 {
                guard index < words.count else { return nil }
                rest = words[index]
                index += 1
            }
            let slot = Int32((index - 1) << 6 | rest.trailingZeroBitCount)
            rest &= rest - 1
            return slot
        }
    }

    func makeIterator() -> Iterator { Iterator(words: words) }
}
