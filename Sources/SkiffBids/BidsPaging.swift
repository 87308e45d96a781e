package import SkiffDomain

/// Keyset cursors and orderings shared by every ``BidsStore`` backend, so that they page and order
/// identically. Strings compare by UTF-8 bytes, as SQLite's `BINARY` collation does.
package enum BidsPaging {
    package static let listingBidsKind = "bids.listingBids"
    package static let myBidsKind = "bids.myBids"
    package static let purchasesKind = "bids.purchases"
    package static let salesKind = "bids.sales"

    /// The position after a bid in a listing's bids: amount descending, then oldest, then id.
    package struct ListingCursor: Codable, Hashable, Sendable {
        /// The listing (a token is only valid for it).
        package var l: String
        /// The last bid's amount.
        package var a: Int64
        /// The last bid's `createdAt` in milliseconds.
        package var t: Int64
        /// The last bid's id.
        package var i: String
    }

    /// The position after an item in a newest-first list (a user's bids, purchases or sales).
    package struct NewestCursor: Codable, Hashable, Sendable {
        /// The owner and filter the token belongs to.
        package var o: String
        /// The last item's `createdAt` in milliseconds.
        package var t: Int64
        /// The last item's id.
        package var i: String
    }

    /// Decodes a listing-bids cursor, or `nil` for the first page.
    package static func listingCursor(_ page: PageRequest, listingID: String) throws(DomainError) -> ListingCursor? {
        try PageToken.cursor(of: page, as: ListingCursor.self, kind: listingBidsKind) { $0.l == listingID }
    }

    /// Decodes a newest-first cursor of the given list and owner, or `nil` for the first page.
    package static func newestCursor(
        _ page: PageRequest,
        kind: String,
        owner: String
    ) throws(DomainError)
        -> NewestCursor?
    {
        try PageToken.cursor(of: page, as: NewestCursor.self, kind: kind) { $0.o == owner }
    }

    /// The owner key of a bidder's bids filtered by states (order-independent).
    package static func myBidsOwner(bidderID: String, states: Set<BidState>) -> String {
        ([bidderID] + states.map(\.rawValue).sorted()).joined(separator: ",")
    }

    /// Whether `bid` sorts before `other` in a listing's bids.
    package static func listingOrder(_ bid: Bid, _ other: Bid) -> Bool {
        if bid.amountCents != other.amountCents { return bid.amountCents > other.amountCents }
        let (left, right) = (bid.createdAt.millisecondsSince1970, other.createdAt.millisecondsSince1970)
        if left != right { return left < right }
        return precedes(bid.id, other.id)
    }

    /// Whether `bid` comes after the cursor in a listing's bids.
    package static func isAfter(_ bid: Bid, _ cursor: ListingCursor) -> Bool {
        if bid.amountCents != cursor.a { return bid.amountCents < cursor.a }
        let time = bid.createdAt.millisecondsSince1970
        if time != cursor.t { return time > cursor.t }
        return precedes(cursor.i, bid.id)
    }

    /// Whether (time, id) sorts before (otherTime, otherID) newest first.
    package static func newestOrder(_ time: Int64, _ id: String, _ otherTime: Int64, _ otherID: String) -> Bool {
        time == otherTime ? precedes(otherID, id) : time > otherTime
    }

    /// Whether (time, id) comes after the cursor in a newest-first list.
    package static func isAfter(_ time: Int64, _ id: String, _ cursor: NewestCursor) -> Bool {
        time < cursor.t || (time == cursor.t && precedes(id, cursor.i))
    }

    /// Builds a listing-bids page from up to `size + 1` bids fetched in order.
    package static func listingPage(_ fetched: [Bid], size: Int, listingID: String) -> Page<Bid> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                ListingCursor(l: listingID, a: last.amountCents, t: last.createdAt.millisecondsSince1970, i: last.id),
                kind: listingBidsKind
            )
        }
    }

    /// Builds a newest-first page of bids.
    package static func bidsPage(_ fetched: [Bid], size: Int, owner: String) -> Page<Bid> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(
                NewestCursor(o: owner, t: last.createdAt.millisecondsSince1970, i: last.id),
                kind: myBidsKind
            )
        }
    }

    /// Builds a newest-first page of sales.
    package static func salesPage(_ fetched: [Sale], size: Int, kind: String, owner: String) -> Page<Sale> {
        Page(fetched: fetched, size: size) { last in
            PageToken.encode(NewestCursor(o: owner, t: last.createdAt.millisecondsSince1970, i: last.id), kind: kind)
        }
    }

    /// Orders strings by their UTF-8 bytes.
    package static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
