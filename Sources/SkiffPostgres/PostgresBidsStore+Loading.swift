import Foundation
import PostgresNIO
import SkiffBids
import SkiffDomain

// What the Bids store's transactions load, and how they number and record events. Every lookup is
// answered by a primary key or one of the unique indexes of `PostgresSchema.bidsMigrations`.
extension PostgresBidsStore {
    /// The claim stored for a listing (expired or not).
    struct StoredClaim: Sendable {
        var bidID: String
        var claimedAt: Int64
    }

    /// Thrown when an insert meets a row that this transaction's own checks did not see, which only a
    /// concurrent write can cause (and PostgreSQL then aborts the transaction itself first).
    static let conflict = DomainError(.aborted, "The database is busy. Try again.")

    func bid(_ db: PostgresConnection, id: String) async throws -> Bid? {
        try await PostgresBidRows.bids(
            db.run("SELECT \(unescaped: PostgresBidRows.columns) FROM bid WHERE id = \(id)", storage)
        ).first
    }

    func bid(_ db: PostgresConnection, bidderID: String, requestID: String) async throws -> Bid? {
        try await PostgresBidRows.bids(
            db.run(
                """
                SELECT \(unescaped: PostgresBidRows.columns) FROM bid
                WHERE bidder_id = \(bidderID) AND request_id = \(requestID)
                """,
                storage
            )
        ).first
    }

    func sale(_ db: PostgresConnection, id: String) async throws -> Sale? {
        try await PostgresSaleRows.sales(
            db.run("SELECT \(unescaped: PostgresSaleRows.columns) FROM sale WHERE id = \(id)", storage)
        ).first
    }

    /// A listing's PENDING or COUNTERED bids.
    func liveBids(_ db: PostgresConnection, _ listingID: String) async throws -> [Bid] {
        try await PostgresBidRows.bids(
            db.run(
                """
                SELECT \(unescaped: PostgresBidRows.columns) FROM bid
                WHERE listing_id = \(listingID) AND state IN ('pending', 'countered')
                """,
                storage
            )
        )
    }

    func listingSold(_ db: PostgresConnection, _ listingID: String) async throws -> Bool {
        try await db.exists("SELECT 1 FROM sale WHERE listing_id = \(listingID)", storage)
    }

    /// Whether the listing has a sale or was closed outside the bid flow (what refuses a new bid).
    func listingSoldOrClosed(_ db: PostgresConnection, _ listingID: String) async throws -> Bool {
        try await db.exists(
            """
            SELECT 1 WHERE EXISTS (SELECT 1 FROM sale WHERE listing_id = \(listingID))
                OR EXISTS (SELECT 1 FROM closed_listing WHERE listing_id = \(listingID))
            """,
            storage
        )
    }

    /// The claim stored for a listing, expired or not.
    func claim(_ db: PostgresConnection, _ listingID: String) async throws -> StoredClaim? {
        let rows = try await db.run(
            "SELECT bid_id, claimed_at FROM acceptance_claim WHERE listing_id = \(listingID)",
            storage
        )
        for try await (bidID, claimedAt) in rows.decode((String, Int64).self) {
            return StoredClaim(bidID: bidID, claimedAt: claimedAt)
        }
        return nil
    }

    /// The claim on a listing unless it has expired.
    func liveClaim(_ db: PostgresConnection, _ listingID: String, now: Date) async throws -> StoredClaim? {
        let oldest = now.millisecondsSince1970 - Int64(BidLifecycle.claimLifetime * 1000)
        guard let claim = try await claim(db, listingID), claim.claimedAt > oldest else { return nil }
        return claim
    }

    func isClaimed(_ db: PostgresConnection, _ bid: Bid, now: Date) async throws -> Bool {
        try await liveClaim(db, bid.listingID, now: now)?.bidID == bid.id
    }

    /// Numbers and inserts events: each user's next sequence number follows their last.
    func record(_ db: PostgresConnection, _ drafts: [BidEventDraft], now: Date) async throws -> [BidEvent] {
        guard !drafts.isEmpty else { return [] }
        var users: [String] = []
        for draft in drafts where !users.contains(draft.userID) { users.append(draft.userID) }
        var last: [String: Int64] = [:]
        let rows = try await db.run(
            """
            SELECT u.id, COALESCE((SELECT sequence FROM bid_event WHERE user_id = u.id ORDER BY sequence DESC LIMIT 1), 0)
            FROM unnest(\(users)::text[]) AS u(id)
            """,
            storage
        )
        for try await (user, sequence) in rows.decode((String, Int64).self) { last[user] = sequence }
        let events = drafts.map { draft in
            let sequence = (last[draft.userID] ?? 0) + 1
            last[draft.userID] = sequence
            return draft.numbered(sequence, at: now)
        }
        var inserted = 0
        for try await _ in try await db.run(PostgresBidEventRows.insert(events), storage) { inserted += 1 }
        guard inserted == events.count else { throw Self.conflict }
        return events
    }
}
