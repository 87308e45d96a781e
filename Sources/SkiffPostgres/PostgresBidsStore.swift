public import Foundation
import PostgresNIO
public import SkiffBids
import SkiffDomain

/// The PostgreSQL ``SkiffBids/BidsStore``.
///
/// Each mutation is one SERIALIZABLE transaction (``PostgresStorage/write(_:)``): it loads what
/// ``SkiffBids/BidLifecycle`` needs, lets it decide and saves the result with its events, as the SQLite
/// and in-memory stores do, so every backend decides alike. Several servers may share the database: of
/// two transactions that act on what the other changes (two acceptances of one listing, a bid racing
/// the sale, two events numbered alike), PostgreSQL aborts one, which runs again and then sees the
/// other's write — so a listing is sold at most once and each user's events are numbered without gaps.
/// The schema backs this up: one sale per listing, one live bid per bidder and listing. Reads are one
/// snapshot each; every list is a keyset walk of an index, limited to the page.
///
/// Get one from ``PostgresStorage/bidsStore()``.
public struct PostgresBidsStore: BidsStore {
    let storage: PostgresStorage

    init(storage: PostgresStorage) {
        self.storage = storage
    }

    // MARK: Bids

    public func placeBid(_ new: NewBid, now: Date) async throws -> Recorded<BidPlacement> {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            var match: Bid?
            if let requestID = new.requestID {
                match = try await bid(db, bidderID: new.bidderID, requestID: requestID)
            }
            let live = try await PostgresBidRows.bids(
                db.run(
                    """
                    SELECT \(unescaped: PostgresBidRows.columns) FROM bid
                    WHERE listing_id = \(new.listingID) AND bidder_id = \(new.bidderID)
                        AND state IN ('pending', 'countered')
                    """,
                    storage
                )
            ).first
            var liveClaimed = false
            if let live { liveClaimed = try await isClaimed(db, live, now: now) }
            let decision = try BidLifecycle.place(
                new,
                requestMatch: match,
                liveBid: live,
                liveBidClaimed: liveClaimed,
                listingSold: try await listingSoldOrClosed(db, new.listingID),
                now: now
            )
            switch decision {
            case .retry(let bid):
                return Recorded(BidPlacement(bid: bid, isRetry: true), events: [])
            case .placed(let bid, let replaced, let drafts):
                guard try await !db.exists("SELECT 1 FROM bid WHERE id = \(bid.id)", storage) else {
                    throw BidsStoreError.bidIDTaken
                }
                if let replaced { try await db.run(PostgresBidRows.update([replaced]), storage) }
                guard try await db.exists(PostgresBidRows.insert(bid), storage) else { throw Self.conflict }
                let events = try await record(db, drafts, now: now)
                return Recorded(BidPlacement(bid: bid, replaced: replaced), events: events)
            }
        }
    }

    public func bid(id: String) async throws -> Bid? {
        try await storage.read { db in try await bid(db, id: id) }
    }

    public func bid(bidderID: String, requestID: String) async throws -> Bid? {
        try await storage.read { db in try await bid(db, bidderID: bidderID, requestID: requestID) }
    }

    public func withdrawBid(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid> {
        try await change(id, now: now) { bid, claimed, now in
            try BidLifecycle.withdraw(bid, callerID: bidderID, claimed: claimed, now: now)
        }
    }

    public func rejectBid(id: String, sellerID: String, reason: String, now: Date) async throws -> Recorded<Bid> {
        try await change(id, now: now) { bid, claimed, now in
            try BidLifecycle.reject(bid, callerID: sellerID, reason: reason, claimed: claimed, now: now)
        }
    }

    public func counterBid(id: String, sellerID: String, amountCents: Int64, now: Date) async throws -> Recorded<Bid> {
        try await change(id, now: now) { bid, claimed, now in
            try BidLifecycle.counter(bid, callerID: sellerID, amountCents: amountCents, claimed: claimed, now: now)
        }
    }

    public func declineCounter(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid> {
        try await change(id, now: now) { bid, claimed, now in
            try BidLifecycle.declineCounter(bid, callerID: bidderID, claimed: claimed, now: now)
        }
    }

    /// Loads a bid, decides a change with `decide` (`nil`: nothing to change) and saves it, in one
    /// transaction.
    private func change(
        _ id: String,
        now: Date,
        _ decide: @escaping @Sendable (Bid, Bool, Date) throws -> BidLifecycle.Change?
    ) async throws -> Recorded<Bid> {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            guard let bid = try await bid(db, id: id) else { throw BidsStoreError.bidNotFound }
            guard let change = try decide(bid, try await isClaimed(db, bid, now: now), now) else {
                return Recorded(bid, events: [])
            }
            try await db.run(PostgresBidRows.update([change.bid]), storage)
            return Recorded(change.bid, events: try await record(db, change.events, now: now))
        }
    }

    public func closeListing(listingID: String, reason: String, now: Date) async throws -> Recorded<[Bid]> {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            let changes = BidLifecycle.close(
                liveBids: try await liveBids(db, listingID),
                claimedBidID: try await liveClaim(db, listingID, now: now)?.bidID,
                listingSold: try await listingSold(db, listingID),
                reason: reason,
                now: now
            )
            try await db.run(
                """
                INSERT INTO closed_listing (listing_id, closed_at) VALUES (\(listingID), \(now.millisecondsSince1970))
                ON CONFLICT (listing_id) DO NOTHING
                """,
                storage
            )
            if !changes.isEmpty { try await db.run(PostgresBidRows.update(changes.map(\.bid)), storage) }
            return Recorded(changes.map(\.bid), events: try await record(db, changes.flatMap(\.events), now: now))
        }
    }

    // MARK: Acceptance

    public func claimAcceptance(
        bidID: String,
        callerID: String,
        kind: AcceptanceKind,
        now: Date
    ) async throws -> AcceptanceClaim {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            guard let bid = try await bid(db, id: bidID) else { throw BidsStoreError.bidNotFound }
            let claim = try BidLifecycle.claim(
                bid,
                callerID: callerID,
                kind: kind,
                otherClaim: try await liveClaim(db, bid.listingID, now: now) != nil,
                listingSold: try await listingSold(db, bid.listingID),
                now: now
            )
            // Replaces an expired claim; a claim another transaction inserted meanwhile aborts this one.
            try await db.run(
                """
                INSERT INTO acceptance_claim (listing_id, bid_id, kind, claimed_at)
                VALUES (\(bid.listingID), \(bid.id), \(kind.rawValue), \(claim.claimedAt.millisecondsSince1970))
                ON CONFLICT (listing_id) DO UPDATE
                SET bid_id = excluded.bid_id, kind = excluded.kind, claimed_at = excluded.claimed_at
                """,
                storage
            )
            return claim
        }
    }

    public func releaseAcceptance(_ claim: AcceptanceClaim) async throws {
        try await storage.write { db in
            try await db.run(
                """
                DELETE FROM acceptance_claim
                WHERE listing_id = \(claim.bid.listingID) AND bid_id = \(claim.bid.id)
                    AND kind = \(claim.kind.rawValue) AND claimed_at = \(claim.claimedAt.millisecondsSince1970)
                """,
                storage
            )
        }
    }

    public func completeAcceptance(
        _ claim: AcceptanceClaim,
        sale draft: SaleDraft,
        now: Date
    ) async throws -> Recorded<Acceptance> {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            let listingID = claim.bid.listingID
            guard let current = try await bid(db, id: claim.bid.id) else { throw BidsStoreError.bidNotFound }
            let stored = try await self.claim(db, listingID)
            let (acceptance, drafts) = try BidLifecycle.complete(
                claim,
                current: current,
                claimHeld: stored.map { $0.bidID == claim.bid.id },
                listingSold: try await listingSold(db, listingID),
                otherLiveBids: try await liveBids(db, listingID),
                sale: draft,
                now: now
            )
            guard try await !db.exists("SELECT 1 FROM sale WHERE id = \(acceptance.sale.id)", storage) else {
                throw BidsStoreError.saleIDTaken
            }
            try await db.run("DELETE FROM acceptance_claim WHERE listing_id = \(listingID)", storage)
            try await db.run(PostgresBidRows.update(acceptance.superseded + [acceptance.bid]), storage)
            guard try await db.exists(PostgresSaleRows.insert(acceptance.sale), storage) else {
                throw Self.conflict
            }
            return Recorded(acceptance, events: try await record(db, drafts, now: now))
        }
    }

    // MARK: Sales

    public func sale(id: String) async throws -> Sale? {
        try await storage.read { db in try await sale(db, id: id) }
    }

    public func setConversation(saleID: String, conversationID: String) async throws -> Sale {
        try await storage.write { db in
            guard var sale = try await sale(db, id: saleID) else { throw BidsStoreError.saleNotFound }
            if sale.conversationID.isEmpty {
                sale.conversationID = conversationID
                try await db.run(PostgresSaleRows.update(sale), storage)
            }
            return sale
        }
    }

    public func confirmHandoff(
        saleID: String,
        userID: String,
        place: HandoffPlace?,
        now: Date
    ) async throws -> Recorded<HandoffConfirmation> {
        let now = now.roundedToMilliseconds
        return try await storage.write { db in
            guard let sale = try await sale(db, id: saleID) else { throw BidsStoreError.saleNotFound }
            let (confirmation, drafts) = try BidLifecycle.confirmHandoff(sale, userID: userID, place: place, now: now)
            if confirmation.sale != sale { try await db.run(PostgresSaleRows.update(confirmation.sale), storage) }
            return Recorded(confirmation, events: try await record(db, drafts, now: now))
        }
    }
}

extension PostgresStorage {
    /// The Bids service's store on this database.
    public func bidsStore() -> PostgresBidsStore {
        PostgresBidsStore(storage: self)
    }
}
