import Foundation
package import SkiffDomain

/// Keyset cursors for BucketList's lists (comments, bucket lists, entries, follows), shared by every
/// ``BucketListStore`` backend.
///
/// Every list is ordered by a millisecond time and then an id (byte order, as SQLite's BINARY collation),
/// ascending or descending; a token carries the scope (whose list it is) and the last key returned.
package enum BucketListPaging {
    /// One kind of list and its direction.
    package struct Kind: Sendable {
        package let name: String
        package let ascending: Bool

        package static let comments = Kind(name: "bucketlist.comments", ascending: true)
        package static let lists = Kind(name: "bucketlist.lists", ascending: true)
        /// A list's entries in the order they were added: the key is the entry's position (the
        /// order of adding; the id never ties). Tokens of the earlier order by time are refused.
        package static let entries = Kind(name: "bucketlist.entries.v2", ascending: true)
        package static let followers = Kind(name: "bucketlist.followers", ascending: false)
        package static let following = Kind(name: "bucketlist.following", ascending: false)
    }

    /// The position after an item.
    package struct Cursor: Codable, Hashable, Sendable {
        /// The scope (e.g. the activity or user the list belongs to).
        package var s: String
        /// Time in milliseconds since 1970 (a position, for entries).
        package var t: Int64
        /// Id.
        package var i: String
    }

    /// Decodes a page token for this kind and scope; `nil` for the first page.
    package static func cursor(_ page: PageRequest, _ kind: Kind, scope: String) throws(DomainError) -> Cursor? {
        try PageToken.cursor(of: page, as: Cursor.self, kind: kind.name) { $0.s == scope }
    }

    /// Whether key `a` comes before key `b` in the kind's order.
    package static func precedes(_ a: (Int64, String), _ b: (Int64, String), _ kind: Kind) -> Bool {
        if a.0 != b.0 { return kind.ascending ? a.0 < b.0 : a.0 > b.0 }
        return kind.ascending
            ? a.1.utf8.lexicographicallyPrecedes(b.1.utf8) : b.1.utf8.lexicographicallyPrecedes(a.1.utf8)
    }

    /// Whether an item with `key` comes after the cursor (always true without one).
    package static func isAfter(_ key: (Int64, String), _ cursor: Cursor?, _ kind: Kind) -> Bool {
        guard let cursor else { return true }
        return precedes((cursor.t, cursor.i), key, kind)
    }

    /// Sorts, cuts after the cursor and pages items in memory.
    package static func page<Item>(
        _ items: [Item],
        _ kind: Kind,
        scope: String,
        page: PageRequest,
        key: (Item) -> (Int64, String)
    ) throws(DomainError) -> Page<Item> {
        let cursor = try cursor(page, kind, scope: scope)
        let sorted = items.filter { isAfter(key($0), cursor, kind) }.sorted { precedes(key($0), key($1), kind) }
        return makePage(Array(sorted.prefix(page.size + 1)), kind, scope: scope, size: page.size, key: key)
    }

    /// Builds a page from up to `size + 1` items already in order and after the cursor.
    package static func makePage<Item>(
        _ fetched: [Item],
        _ kind: Kind,
        scope: String,
        size: Int,
        key: (Item) -> (Int64, String)
    ) -> Page<Item> {
        Page(fetched: fetched, size: size) { item in
            let last = key(item)
            return PageToken.encode(Cursor(s: scope, t: last.0, i: last.1), kind: kind.name)
        }
    }
}
