/// A sorted multiset of keys in chunks of bounded size: the in-memory stores' ordered index.
///
/// Inserting or removing costs a binary search over the chunks plus a move inside one chunk (at most
/// ``chunkCapacity`` elements), so it stays cheap at a million keys, unlike one sorted array whose every
/// insert moves half of it. Walking in order from a position costs the keys walked.
///
/// `areInIncreasingOrder` defines the order (a strict weak ordering); equal keys may repeat.
package struct SortedKeys<Key>: Sendable where Key: Sendable {
    /// Whether checking and sorting `count` candidates costs less than walking an order index of `total`
    /// keys, where a page of `pageSize` takes about `(pageSize + 1) · total / count` steps: the rule every
    /// in-memory search uses to choose between the two.
    package static func collectingIsCheaper(_ count: Int, pageSize: Int, total: Int) -> Bool {
        count * count < (pageSize + 1) * max(total, 1)
    }

    /// The most keys one chunk holds before it splits.
    package static var chunkCapacity: Int { 512 }

    private var chunks: [[Key]] = []
    private let areInIncreasingOrder: @Sendable (Key, Key) -> Bool
    /// The number of keys.
    package private(set) var count = 0

    /// Creates an empty set ordered by `areInIncreasingOrder`.
    package init(by areInIncreasingOrder: @escaping @Sendable (Key, Key) -> Bool) {
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    /// A position: a chunk and an offset in it.
    package struct Position: Hashable, Sendable, Comparable {
        package var chunk: Int
        package var offset: Int

        package static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.chunk, lhs.offset) < (rhs.chunk, rhs.offset)
        }
    }

    /// The first position whose key is not before `key` (`after == false`), or is after it (`after == true`).
    package func position(of key: Key, after: Bool = false) -> Position {
        // The first chunk whose last key is not before (or is after) the key.
        func goesAfter(_ element: Key) -> Bool {
            after ? !areInIncreasingOrder(key, element) : areInIncreasingOrder(element, key)
        }
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if goesAfter(chunks[middle][chunks[middle].count - 1]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return Position(chunk: chunks.count, offset: 0) }
        let chunk = chunks[low]
        var first = 0
        var last = chunk.count
        while first < last {
            let middle = (first + last) / 2
            if goesAfter(chunk[middle]) { first = middle + 1 } else { last = middle }
        }
        return Position(chunk: low, offset: first)
    }

    /// Whether `a` comes before `b` in this set's order.
    package func precedes(_ a: Key, _ b: Key) -> Bool { areInIncreasingOrder(a, b) }

    /// The position of the first key.
    package var start: Position { Position(chunk: 0, offset: 0) }

    /// Inserts a key after any equal keys.
    package mutating func insert(_ key: Key) {
        count += 1
        guard !chunks.isEmpty else {
            chunks.append([key])
            return
        }
        var position = position(of: key, after: true)
        if position.chunk == chunks.count {
            position = Position(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].count)
        }
        chunks[position.chunk].insert(key, at: position.offset)
        if chunks[position.chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[position.chunk][(Self.chunkCapacity / 2)...])
            chunks[position.chunk].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: position.chunk + 1)
        }
    }

    /// Removes one key equal to `key` for which `matches` holds; returns whether one was found.
    @discardableResult
    package mutating func remove(_ key: Key, where matches: (Key) -> Bool) -> Bool {
        var position = position(of: key)
        while position.chunk < chunks.count {
            let element = chunks[position.chunk][position.offset]
            if areInIncreasingOrder(key, element) { return false }  // past the equal keys
            if matches(element) {
                chunks[position.chunk].remove(at: position.offset)
                if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
                count -= 1
                return true
            }
            position = next(position)
        }
        return false
    }

    /// The key at a valid position.
    package subscript(position: Position) -> Key { chunks[position.chunk][position.offset] }

    /// Whether the position is past the last key.
    package func isEnd(_ position: Position) -> Bool { position.chunk >= chunks.count }

    /// The position after a valid one.
    package func next(_ position: Position) -> Position {
        var result = position
        result.offset += 1
        if result.offset >= chunks[result.chunk].count {
            result.chunk += 1
            result.offset = 0
        }
        return result
    }

    /// The keys, chunk by chunk, in order (a ``Position`` is a chunk and an offset in it): for hot loops
    /// that walk keys of a concrete type in place, which a call of ``walk(from:_:)`` per key, generic
    /// across modules, cannot do without copying each key.
    package var orderedChunks: [[Key]] { chunks }

    /// Calls `body` with each key from `position` in order until it returns `false`.
    package func walk(from position: Position, _ body: (Key) -> Bool) {
        var chunk = position.chunk
        var offset = position.offset
        while chunk < chunks.count {
            // Borrow each key in place: no copy (and no retain of what it holds) per key walked.
            let finished = chunks[chunk].withUnsafeBufferPointer { keys in
                while offset < keys.count {
                    if !body(keys[offset]) { return true }
                    offset += 1
                }
                return false
            }
            if finished { return }
            chunk += 1
            offset = 0
        }
    }
}

/// A k-way merge of several ``SortedKeys`` that share one order, each from a position: their keys in that
/// order, one at a time, at a cost of `log k` per key (a binary heap of the lists' heads). Equal keys of
/// different lists come out one after another.
package struct SortedKeysMerge<Key>: Sendable where Key: Sendable {
    private struct Head: Sendable {
        var key: Key
        var list: Int
        var position: SortedKeys<Key>.Position
    }

    private var lists: [SortedKeys<Key>] = []
    private var heap: [Head] = []

    /// Creates an empty merge.
    package init() {}

    /// Adds a list, to be read from `position`.
    package mutating func add(_ list: SortedKeys<Key>, from position: SortedKeys<Key>.Position) {
        lists.append(list)
        push(list: lists.count - 1, position)
    }

    /// The next key without taking it, or `nil` when every list is read to its end.
    package var peek: Key? { heap.first?.key }

    /// Takes the next key, or `nil` when every list is read to its end.
    package mutating func next() -> Key? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown()
        }
        push(list: top.list, lists[top.list].next(top.position))
        return top.key
    }

    private func precedes(_ a: Head, _ b: Head) -> Bool { lists[a.list].precedes(a.key, b.key) }

    private mutating func push(list: Int, _ position: SortedKeys<Key>.Position) {
        guard !lists[list].isEnd(position) else { return }
        heap.append(Head(key: lists[list][position], list: list, position: position))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown() {
        var parent = 0
        while true {
            var best = parent
            let left = 2 * parent + 1
            if left < heap.count, precedes(heap[left], heap[best]) { best = left }
            if left + 1 < heap.count, precedes(heap[left + 1], heap[best]) { best = left + 1 }
            guard best != parent else { return }
            heap.swapAt(parent, best)
            parent = best
        }
    }
}
