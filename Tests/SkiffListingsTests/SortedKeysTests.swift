import Foundation
import SkiffDomain
import Testing

/// The chunked sorted index under the in-memory stores, against a plain sorted array.
@Suite("Sorted keys")
struct SortedKeysTests {
    struct Key: Equatable, Sendable {
        var value: Int
        var id: Int
    }

    @Test("Random inserts and removes keep the order of a sorted array, across chunk splits and merges")
    func matchesSortedArray() {
        var random = SystemRandomNumberGenerator()
        let order: @Sendable (Key, Key) -> Bool = { $0.value != $1.value ? $0.value < $1.value : $0.id > $1.id }
        var keys = SortedKeys<Key>(by: order)
        var reference: [Key] = []
        var nextID = 0
        for step in 0..<9_000 {
            if step % 3 == 2, !reference.isEmpty {
                let victim = reference.randomElement(using: &random)!
                #expect(keys.remove(victim) { $0.id == victim.id })
                reference.removeAll { $0.id == victim.id }
            } else {
                let key = Key(value: Int.random(in: 0..<300, using: &random), id: nextID)
                nextID += 1
                keys.insert(key)
                reference.append(key)
            }
        }
        reference.sort(by: order)
        var walked: [Key] = []
        keys.walk(from: keys.start) { key in
            walked.append(key)
            return true
        }
        #expect(walked == reference)
        #expect(keys.count == reference.count)
        #expect(reference.count > SortedKeys<Key>.chunkCapacity * 4, "the test spans many chunks")

        // Positions: the first key not before a probe, and the first after it, as in the array.
        for _ in 0..<200 {
            let probe = Key(
                value: Int.random(in: -1...301, using: &random),
                id: Int.random(in: 0..<nextID, using: &random)
            )
            for after in [false, true] {
                let expected = reference.firstIndex { after ? order(probe, $0) : !order($0, probe) }
                var found: Key?
                keys.walk(from: keys.position(of: probe, after: after)) { key in
                    found = key
                    return false
                }
                #expect(found == expected.map { reference[$0] })
            }
        }
        // Removing a key that is not there changes nothing.
        #expect(!keys.remove(Key(value: 5, id: -1)) { $0.id == -1 })
        #expect(keys.count == reference.count)
    }

    @Test("A merge of several sets gives their keys in order, equal keys together, from any positions")
    func mergeMatchesSortedArray() {
        var random = SystemRandomNumberGenerator()
        let order: @Sendable (Key, Key) -> Bool = { $0.value != $1.value ? $0.value > $1.value : $0.id < $1.id }
        for _ in 0..<20 {
            var sets: [SortedKeys<Key>] = []
            for _ in 0..<Int.random(in: 0...9, using: &random) {
                var set = SortedKeys<Key>(by: order)
                // Ids shared between sets: the same key may be in several of them.
                for _ in 0..<Int.random(in: 0...1_500, using: &random) {
                    set.insert(
                        Key(value: Int.random(in: 0..<200, using: &random), id: Int.random(in: 0..<40, using: &random))
                    )
                }
                sets.append(set)
            }
            let from = Key(value: Int.random(in: 0..<200, using: &random), id: 20)
            var merge = SortedKeysMerge<Key>()
            var reference: [Key] = []
            for set in sets {
                let position = set.position(of: from, after: true)
                merge.add(set, from: position)
                set.walk(from: position) { key in
                    reference.append(key)
                    return true
                }
            }
            var merged: [Key] = []
            while let key = merge.next() { merged.append(key) }
            #expect(merged.count == reference.count)
            for (a, b) in zip(merged, merged.dropFirst()) { #expect(!order(b, a)) }
            #expect(
                merged.sorted { ($0.value, $0.id) < ($1.value, $1.id) }
                    == reference.sorted { ($0.value, $0.id) < ($1.value, $1.id) }
            )
            #expect(merged.allSatisfy { order(from, $0) })
        }
    }
}
