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

    mutating func insert(_ slot: Int32) {
        words[Int(slot) >> 6] |= 1 << UInt64(slot & 63)
    }

    func contains(_ slot: Int32) -> Bool {
        words[Int(slot) >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    /// Keeps only the slots also in `other` (of the same capacity).
    mutating func formIntersection(_ other: SlotSet) {
        for index in words.indices { words[index] &= other.words[index] }
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
