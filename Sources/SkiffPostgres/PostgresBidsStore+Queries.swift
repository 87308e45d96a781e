public import Foundation
import PostgresNIO
public import SkiffBids
public import SkiffDomain

// The list and event reads of the PostgreSQL bids store: keyset paging in the order `BidsPaging`
// defines, each page one walk of an index that stops after the page (a row comparison against the
// cursor is the index condition; the first page starts from a position before every row).
extension PostgresBidsStore {
    public func listingBids(listingID: String, page: PageRequest) async throws -> Page<Bid> {
        let cursor = try BidsPaging.listingCursor(page, listingID: listingID)
        // Ordered by (-amount, createdAt, id) ascending, as the index `bid_listing_id_order` is;
        // amounts are positive, so `Int64.min` comes before every bid.
        let after = (cursor.map { -$0.a } ?? .min, cursor?.t ?? .min, cursor?.i ?? "")
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            try await PostgresBidRows.bids(
                db.run(
                    """
                    SELECT \(unescaped: PostgresBidRows.columns) FROM bid
                    WHERE listing_id = \(listingID) AND (-amount_cents, created_at, id) > (\(after.0), \(after.1), \(after.2))
                    ORDER BY -amount_cents, created_at, id
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
        return BidsPaging.listingPage(fetched, size: page.size, listingID: listingID)
    }

    public func liveBidSummary(listingID: String) async throws -> LiveBidSummary {
        try await storage.read { db in
            let rows = try await db.run(
                """
                SELECT count(*), COALESCE(max(amount_cents), 0) FROM bid
                WHERE listing_id = \(listingID) AND state IN ('pending', 'countered')
                """,
                storage
            )
            for try await (count, highest) in rows.decode((Int, Int64).self) {
                return LiveBidSummary(count: count, highestAmountCents: highest)
            }
            return LiveBidSummary(count: 0, highestAmountCents: 0)
        }
    }

    public func bids(bidderID: String, states: Set<BidState>, page: PageRequest) async throws -> Page<Bid> {
        let owner = BidsPaging.myBidsOwner(bidderID: bidderID, states: states)
        let cursor = try BidsPaging.newestCursor(page, kind: BidsPaging.myBidsKind, owner: owner)
        let (time, id) = (cursor?.t ?? .max, cursor?.i ?? "")
        let limit = page.size + 1
        // One walk of `bid_bidder_id_state_created_at_id` per state (every state when none is given),
        // each stopping after a page; the walks are merged and cut to the page.
        let stateNames = (states.isEmpty ? Set(BidState.allCases) : states).map(\.rawValue).sorted()
        let fetched = try await storage.read { db in
            try await PostgresBidRows.bids(
                db.run(
                    """
                    SELECT b.* FROM unnest(\(stateNames)::text[]) AS s(state)
                    CROSS JOIN LATERAL (
                        SELECT \(unescaped: PostgresBidRows.columns) FROM bid
                        WHERE bidder_id = \(bidderID) AND bid.state = s.state AND (created_at, id) < (\(time), \(id))
                        ORDER BY created_at DESC, id DESC
                        LIMIT \(limit)
                    ) AS b
                    ORDER BY b.created_at DESC, b.id DESC
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
        return BidsPaging.bidsPage(fetched, size: page.size, owner: owner)
    }

    public func purchases(buyerID: String, page: PageRequest) async throws -> Page<Sale> {
        try await salesPage(column: "buyer_id", kind: BidsPaging.purchasesKind, owner: buyerID, page: page)
    }

    public func sales(sellerID: String, page: PageRequest) async throws -> Page<Sale> {
        try await salesPage(column: "seller_id", kind: BidsPaging.salesKind, owner: sellerID, page: page)
    }

    /// A newest-first page of the sales whose `column` (`buyer_id` or `seller_id`) is `owner`.
    private func salesPage(column: String, kind: String, owner: String, page: PageRequest) async throws -> Page<Sale> {
        let cursor = try BidsPaging.newestCursor(page, kind: kind, owner: owner)
        let (time, id) = (cursor?.t ?? .max, cursor?.i ?? "")
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            try await PostgresSaleRows.sales(
                db.run(
                    """
                    SELECT \(unescaped: PostgresSaleRows.columns) FROM sale
                    WHERE \(unescaped: column) = \(owner) AND (created_at, id) < (\(time), \(id))
                    ORDER BY created_at DESC, id DESC
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
        return BidsPaging.salesPage(fetched, size: page.size, kind: kind, owner: owner)
    }

    public func events(userID: String, afterSequence: Int64, limit: Int) async throws -> [BidEvent] {
        let limit = max(limit, 0)
        return try await storage.read { db in
            try await PostgresBidEventRows.events(
                db.run(
                    """
                    SELECT \(unescaped: PostgresBidEventRows.columns) FROM bid_event
                    WHERE user_id = \(userID) AND sequence > \(afterSequence)
                    ORDER BY sequence
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
    }

    public func events(recordedSince date: Date, limit: Int) async throws -> [BidEvent] {
        let limit = max(limit, 0)
        return try await storage.read { db in
            try await PostgresBidEventRows.events(
                db.run(
                    """
                    SELECT \(unescaped: PostgresBidEventRows.columns) FROM bid_event
                    WHERE created_at >= \(date.millisecondsSince1970)
                    ORDER BY created_at, user_id, sequence
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
    }
}
