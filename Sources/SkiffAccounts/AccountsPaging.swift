package import SkiffDomain

/// Keyset cursors and ordering helpers shared by every ``AccountsStore`` backend, so that they page, order
/// and match identically.
package enum AccountsPaging {
    static let searchKind = "accounts.searchUsers"
    static let ratingsKind = "accounts.ratings"

    /// The position after an account in a user search: the query it belongs to, then the sort key.
    package struct SearchCursor: Codable, Hashable, Sendable {
        /// The query's search key (a token is only valid for the same query).
        package var q: String
        /// The last account's name key.
        package var n: String
        /// The last account's id.
        package var i: String
    }

    /// The position after a rating in a seller's ratings, newest first.
    package struct RatingsCursor: Codable, Hashable, Sendable {
        /// The seller (a token is only valid for the same seller).
        package var s: String
        /// The last rating's `createdAt`, in milliseconds since 1970.
        package var t: Int64
        /// The last rating's public id (``Rating/ratingID``).
        package var i: String
    }

    /// Decodes the cursor of a user-search page request, or `nil` for the first page.
    package static func searchCursor(_ page: PageRequest, queryKey: String) throws(DomainError) -> SearchCursor? {
        try PageToken.cursor(of: page, as: SearchCursor.self, kind: searchKind) { $0.q == queryKey }
    }

    /// Decodes the cursor of a ratings page request, or `nil` for the first page.
    package static func ratingsCursor(_ page: PageRequest, sellerID: String) throws(DomainError) -> RatingsCursor? {
        try PageToken.cursor(of: page, as: RatingsCursor.self, kind: ratingsKind) { $0.s == sellerID }
    }

    /// Builds a user-search page from up to `size + 1` accounts fetched in order.
    package static func searchPage(_ fetched: [Account], size: Int, queryKey: String) -> Page<Account> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                SearchCursor(q: queryKey, n: Account.searchKey(last.displayName), i: last.id),
                kind: searchKind
            )
        }
    }

    /// Builds a ratings page from up to `size + 1` ratings fetched in order.
    package static func ratingsPage(_ fetched: [Rating], size: Int, sellerID: String) -> Page<Rating> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                RatingsCursor(s: sellerID, t: last.createdAt.millisecondsSince1970, i: last.ratingID),
                kind: ratingsKind
            )
        }
    }

    /// Orders strings by their UTF-8 bytes, as SQLite's `BINARY` collation does.
    package static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Whether `needle`'s UTF-8 bytes occur in `haystack`'s, as SQLite's `instr` on text does.
    package static func bytesContain(_ haystack: String, _ needle: String) -> Bool {
        let hay = Array(haystack.utf8)
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty else { return true }
        guard pattern.count <= hay.count else { return false }
        for start in 0...(hay.count - pattern.count) where hay[start] == pattern[0] {
            if hay[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
        }
        return false
    }
}
