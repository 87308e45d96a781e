public import Foundation
import GRDB
public import SkiffBids
import SkiffDomain

/// The SQLite ``SkiffBids/BidsStore``.
///
/// Each use case is one `pool.write { }` transaction (or one `pool.read { }` snapshot) on GRDB's own
/// queues. Every mutation loads what ``SkiffBids/BidLifecycle`` needs, lets it decide, and saves the
/// result with its events inside the same transaction; writes are serialized by the single writer
/// connection, so concurrent acceptances and bids are settled exactly as in
/// ``SkiffBids/InMemoryBidsStore``. The schema backs this up: one sale per listing (`UNIQUE`), one live
/// bid per bidder and listing (a partial unique index).
///
/// Get one from ``SQLiteDatabase/bidsStore()``.
public struct SQLiteBidsStore: BidsStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    // MARK: Bids

    public func placeBid(_ new: NewBid, now: Date) async throws -> Recorded<BidPlacement> {
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            let match = try new.requestID.flatMap { try Self.bid(db, bidderID: new.bidderID, requestID: $0) }
            let live = try BidRecord.fetchOne(
                db,
                sql: "SELECT * FROM bid WHERE listingID = ? AND bidderID = ? AND state IN ('pending', 'countered')",
                arguments: [new.listingID, new.bidderID]
            )?.bid
            let decision = try BidLifecycle.place(
                new,
                requestMatch: match,
                liveBid: live,
                liveBidClaimed: try live.map { try Self.isClaimed(db, $0, now: now) } ?? false,
                listingSold: try Self.listingSold(db, new.listingID) || Self.listingClosed(db, new.listingID),
                now: now
            )
            switch decision {
            case .retry(let bid):
                return Recorded(BidPlacement(bid: bid, isRetry: true), events: [])
            case .placed(let bid, let replaced, let drafts):
                guard try !BidRecord.exists(db, key: bid.id) else { throw BidsStoreError.bidIDTaken }
                if let replaced { try BidRecord(replaced).update(db) }
                try BidRecord(bid).insert(db)
                let events = try Self.record(db, drafts, now: now)
                return Recorded(BidPlacement(bid: bid, replaced: replaced), events: events)
            }
        }
    }

    public func bid(id: String) async throws -> Bid? {
        try await pool.domainRead { db in try BidRecord.fetchOne(db, key: id)?.bid }
    }

    public func bid(bidderID: String, requestID: String) async throws -> Bid? {
        try await pool.domainRead { db in try Self.bid(db, bidderID: bidderID, requestID: requestID) }
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
        return try await pool.domainWrite { db in
            guard let bid = try BidRecord.fetchOne(db, key: id)?.bid else { throw BidsStoreError.bidNotFound }
            guard let change = try decide(bid, try Self.isClaimed(db, bid, now: now), now) else {
                return Recorded(bid, events: [])
            }
            try BidRecord(change.bid).update(db)
            return Recorded(change.bid, events: try Self.record(db, change.events, now: now))
        }
    }

    public func closeListing(listingID: String, reason: String, now: Date) async throws -> Recorded<[Bid]> {
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            let changes = BidLifecycle.close(
                liveBids: try Self.liveBids(db, listingID),
                claimedBidID: try Self.liveClaim(db, listingID, now: now)?.bidID,
                listingSold: try Self.listingSold(db, listingID),
                reason: reason,
                now: now
            )
            try db.executeCached(
                sql: "INSERT OR IGNORE INTO closedListing (listingID, closedAt) VALUES (?, ?)",
                arguments: [listingID, now.millisecondsSince1970]
            )
            for change in changes { try BidRecord(change.bid).update(db) }
            return Recorded(changes.map(\.bid), events: try Self.record(db, changes.flatMap(\.events), now: now))
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
        return try await pool.domainWrite { db in
            guard let bid = try BidRecord.fetchOne(db, key: bidID)?.bid else { throw BidsStoreError.bidNotFound }
            let claim = try BidLifecycle.claim(
                bid,
                callerID: callerID,
                kind: kind,
                otherClaim: try Self.liveClaim(db, bid.listingID, now: now) != nil,
                listingSold: try Self.listingSold(db, bid.listingID),
                now: now
            )
            try AcceptanceClaimRecord(
                listingID: bid.listingID,
                bidID: bid.id,
                kind: kind.rawValue,
                claimedAt: claim.claimedAt.millisecondsSince1970
            ).save(db)
            return claim
        }
    }

    public func releaseAcceptance(_ claim: AcceptanceClaim) async throws {
        try await pool.domainWrite { db in
            try db.executeCached(
                sql: "DELETE FROM acceptanceClaim WHERE listingID = ? AND bidID = ? AND kind = ? AND claimedAt = ?",
                arguments: [
                    claim.bid.listingID, claim.bid.id, claim.kind.rawValue, claim.claimedAt.millisecondsSince1970,
                ]
            )
        }
    }

    public func completeAcceptance(
        _ claim: AcceptanceClaim,
        sale draft: SaleDraft,
        now: Date
    ) async throws -> Recorded<Acceptance> {
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            let listingID = claim.bid.listingID
            guard let current = try BidRecord.fetchOne(db, key: claim.bid.id)?.bid else {
                throw BidsStoreError.bidNotFound
            }
            let stored = try AcceptanceClaimRecord.fetchOne(db, key: listingID)
            let (acceptance, drafts) = try BidLifecycle.complete(
                claim,
                current: current,
                claimHeld: stored.map { $0.bidID == claim.bid.id },
                listingSold: try Self.listingSold(db, listingID),
                otherLiveBids: try Self.liveBids(db, listingID),
                sale: draft,
                now: now
            )
            guard try !SaleRecord.exists(db, key: acceptance.sale.id) else { throw BidsStoreError.saleIDTaken }
            try db.executeCached(sql: "DELETE FROM acceptanceClaim WHERE listingID = ?", arguments: [listingID])
            for bid in acceptance.superseded { try BidRecord(bid).update(db) }
            try BidRecord(acceptance.bid).update(db)
            try SaleRecord(acceptance.sale).insert(db)
            return Recorded(acceptance, events: try Self.record(db, drafts, now: now))
        }
    }

    // MARK: Sales

    public func sale(id: String) async throws -> Sale? {
        try await pool.domainRead { db in try SaleRecord.fetchOne(db, key: id)?.sale }
    }

    public func setConversation(saleID: String, conversationID: String) async throws -> Sale {
        try await pool.domainWrite { db in
            try db.executeCached(
                sql: "UPDATE sale SET conversationID = ? WHERE id = ? AND conversationID = ''",
                arguments: [conversationID, saleID]
            )
            guard let sale = try SaleRecord.fetchOne(db, key: saleID)?.sale else { throw BidsStoreError.saleNotFound }
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
        return try await pool.domainWrite { db in
            guard let sale = try SaleRecord.fetchOne(db, key: saleID)?.sale else { throw BidsStoreError.saleNotFound }
            let (confirmation, drafts) = try BidLifecycle.confirmHandoff(sale, userID: userID, place: place, now: now)
            if confirmation.sale != sale { try SaleRecord(confirmation.sale).update(db) }
            return Recorded(confirmation, events: try Self.record(db, drafts, now: now))
        }
    }

    // MARK: Helpers

    static func bid(_ db: Database, bidderID: String, requestID: String) throws -> Bid? {
        try BidRecord.fetchOne(
            db,
            sql: "SELECT * FROM bid WHERE bidderID = ? AND requestID = ?",
            arguments: [bidderID, requestID]
        )?.bid
    }

    static func listingSold(_ db: Database, _ listingID: String) throws -> Bool {
        try SaleRecord.filter(Column("listingID") == listingID).fetchCount(db) > 0
    }

    static func listingClosed(_ db: Database, _ listingID: String) throws -> Bool {
        try Bool(exists: db, "SELECT 1 FROM closedListing WHERE listingID = ?", [listingID])
    }

    static func liveBids(_ db: Database, _ listingID: String) throws -> [Bid] {
        try BidRecord.fetchAll(
            db,
            sql: "SELECT * FROM bid WHERE listingID = ? AND state IN ('pending', 'countered')",
            arguments: [listingID]
        ).map(\.bid)
    }

    /// The claim on a listing unless it has expired.
    static func liveClaim(_ db: Database, _ listingID: String, now: Date) throws -> AcceptanceClaimRecord? {
        let oldest = now.millisecondsSince1970 - Int64(BidLifecycle.claimLifetime * 1000)
        return try AcceptanceClaimRecord.fetchOne(
            db,
            sql: "SELECT * FROM acceptanceClaim WHERE listingID = ? AND claimedAt > ?",
            arguments: [listingID, oldest]
        )
    }

    static func isClaimed(_ db: Database, _ bid: Bid, now: Date) throws -> Bool {
        try liveClaim(db, bid.listingID, now: now)?.bidID == bid.id
    }

    /// Numbers and inserts events: each user's next sequence number follows their last.
    static func record(_ db: Database, _ drafts: [BidEventDraft], now: Date) throws -> [BidEvent] {
        try drafts.map { draft in
            let last = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT MAX(sequence) FROM bidEvent WHERE userID = ?"),
                arguments: [draft.userID]
            )
            let event = draft.numbered((last ?? 0) + 1, at: now)
            try BidEventRecord(event).insert(db)
            return event
        }
    }
}
