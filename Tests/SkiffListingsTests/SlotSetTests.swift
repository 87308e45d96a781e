import Testing

@testable import SkiffListings

/// The bitset in-memory listing searches narrow their listings to, against `Set<Int32>`.
@Suite("Slot set")
struct SlotSetTests {
    @Test("Insert, contains, intersection, count and iteration agree with a Set")
    func agreesWithSet() {
        var random = SystemRandomNumberGenerator()
        for capacity in [1, 63, 64, 65, 200, 4_097] {
            let a = Set((0..<capacity / 2).map { _ in Int32.random(in: 0..<Int32(capacity), using: &random) })
            let b = Set((0..<capacity / 2).map { _ in Int32.random(in: 0..<Int32(capacity), using: &random) })
            var set = SlotSet(a, capacity: capacity)
            #expect(set.count == a.count)
            #expect(Array(set) == a.sorted(), "iterates in increasing order, each slot once")
            for slot in 0..<Int32(capacity) { #expect(set.contains(slot) == a.contains(slot)) }
            set.formIntersection(SlotSet(b, capacity: capacity))
            #expect(Array(set) == a.intersection(b).sorted())
            #expect(set.count == a.intersection(b).count)
        }
        #expect(Array(SlotSet(capacity: 0)).isEmpty)
        var last = SlotSet(capacity: 128)
        last.insert(127)
        last.insert(0)
        #expect(Array(last) == [0, 127])
    }

    @Test("Id prefixes order ids as their bytes do, wherever they differ")
    func idPrefixes() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("ab0_é\u{0}zZ")
        func id() -> String {
            String((0..<Int.random(in: 0...10, using: &random)).map { _ in alphabet.randomElement()! })
        }
        for _ in 0..<2_000 {
            let a = id()
            let b = id()
            let (pa, pb) = (ListingIndex.idPrefix(a), ListingIndex.idPrefix(b))
            if pa != pb { #expect((pa < pb) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) vs \(b)") }
            if a == b { #expect(pa == pb) }
        }
    }
}
