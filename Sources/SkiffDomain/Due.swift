/// A key due at a time, ordered by the time alone: an entry of an in-memory store's expiry heap.
package struct Due<Key: Sendable, Time: Comparable & Sendable>: Comparable, Sendable {
    package var at: Time
    package var key: Key

    package init(at: Time, key: Key) {
        self.at = at
        self.key = key
    }

    package static func < (lhs: Due, rhs: Due) -> Bool { lhs.at < rhs.at }
    package static func == (lhs: Due, rhs: Due) -> Bool { lhs.at == rhs.at }
}
