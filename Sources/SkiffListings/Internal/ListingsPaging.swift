import Foundation
package import SkiffDomain

/// Keyset cursors for the seller's and the saved lists, shared by every ``ListingsStore`` backend.
package enum ListingsPaging {
    static let sellerKind = "listings.mine"
    static let savedKind = "listings.saved"

    /// The position after a listing in a seller's list (newest first, then id descending).
    package struct SellerCursor: Codable, Hashable, Sendable {
        /// The seller and statuses (a token is only valid for the same list).
        package var s: String
        package var c: Int64
        package var i: String
    }

    /// The position after a saved listing (most recently saved first, then listing id descending).
    package struct SavedCursor: Codable, Hashable, Sendable {
        package var u: String
        package var t: Int64
        package var i: String
    }

    package static func sellerScope(_ sellerID: String, _ statuses: Set<ListingStatus>) -> String {
        sellerID + "|" + statuses.map(\.rawValue).sorted().joined(separator: ",")
    }

    package static func sellerCursor(
        _ page: PageRequest,
        sellerID: String,
        statuses: Set<ListingStatus>
    ) throws(DomainError) -> SellerCursor? {
        try PageToken.cursor(of: page, as: SellerCursor.self, kind: sellerKind) {
            $0.s == sellerScope(sellerID, statuses)
        }
    }

    package static func savedCursor(_ page: PageRequest, userID: String) throws(DomainError) -> SavedCursor? {
        try PageToken.cursor(of: page, as: SavedCursor.self, kind: savedKind) { $0.u == userID }
    }

    /// Builds a seller page from up to `size + 1` listings fetched in order.
    package static func sellerPage(
        _ fetched: [Listing],
        size: Int,
        sellerID: String,
        statuses: Set<ListingStatus>
    ) -> Page<Listing> {
        Page(fetched: fetched, size: size) { last in
            let cursor = SellerCursor(
                s: sellerScope(sellerID, statuses),
                c: last.createdAt.millisecondsSince1970,
                i: last.id
            )
            return PageToken.encode(cursor, kind: sellerKind)
        }
    }

    /// Builds a saved page from up to `size + 1` saved listings fetched in order.
    package static func savedPage(_ fetched: [SavedListing], size: Int, userID: String) -> Page<SavedListing> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                SavedCursor(u: userID, t: last.savedAt.millisecondsSince1970, i: last.listing.id),
                kind: savedKind
            )
        }
    }

    static let commentsKind = "listings.comments"

    /// The position after a comment in a listing's comments (oldest first, then id ascending).
    package struct CommentCursor: Codable, Hashable, Sendable {
        /// The listing (a token is only valid for the same listing).
        package var l: String
        package var t: Int64
        package var i: String
    }

    package static func commentCursor(_ page: PageRequest, listingID: String) throws(DomainError) -> CommentCursor? {
        try PageToken.cursor(of: page, as: CommentCursor.self, kind: commentsKind) { $0.l == listingID }
    }

    /// Builds a comments page from up to `size + 1` comments fetched oldest first.
    package static func commentPage(_ fetched: [ListingComment], size: Int, listingID: String) -> Page<ListingComment> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                CommentCursor(l: listingID, t: last.createdAt.millisecondsSince1970, i: last.id),
                kind: commentsKind
            )
        }
    }

    /// Whether a comment comes after the cursor (oldest first, then id ascending in byte order).
    package static func isAfter(_ comment: ListingComment, _ cursor: CommentCursor) -> Bool {
        let time = comment.createdAt.millisecondsSince1970
        return time > cursor.t || (time == cursor.t && cursor.i.utf8.lexicographicallyPrecedes(comment.id.utf8))
    }

    /// Newest first, then id descending (byte order, as SQLite's BINARY collation).
    package static func newestFirst(_ a: Listing, _ b: Listing) -> Bool {
        let (left, right) = (a.createdAt.millisecondsSince1970, b.createdAt.millisecondsSince1970)
        return left == right ? b.id.utf8.lexicographicallyPrecedes(a.id.utf8) : left > right
    }

    /// Whether a listing comes after the seller cursor.
    package static func isAfter(_ listing: Listing, _ cursor: SellerCursor) -> Bool {
        let time = listing.createdAt.millisecondsSince1970
        return time < cursor.c || (time == cursor.c && listing.id.utf8.lexicographicallyPrecedes(cursor.i.utf8))
    }
}
