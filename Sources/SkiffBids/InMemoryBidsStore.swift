public import Foundation
public import SkiffDomain
import Synchronization

/// A ``BidsStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one `Mutex`, and every method runs in a single critical section without
/// suspending, so each use case is atomic exactly as a database transaction would be.
public final class InMemoryBidsStore: BidsStore {
    struct ClaimRow: Hashable {
        var bidID: String
        var kind: AcceptanceKind
        var claimedAt: Date
    }

    struct State {
        /// Bids by id (write with ``put(_:)-(Bid)``, which keeps the indexes below in step) …
        private(set) var bids: [String: Bid] = [:]
        /// … and their ids per listing and per bidder (neither changes once a bid exists).
        private(set) var bidsByListing: [String: [String]] = [:]
        private(set) var bidsByBidder: [String: [String]] = [:]
        var bidByRequest: [String: String] = [:]
        /// Sales by id (write with ``put(_:)-(Sale)``) and their ids per buyer and per seller.
        private(set) var sales: [String: Sale] = [:]
        private(set) var salesByUser: [String: [String]] = [:]
        var saleByListing: [String: String] = [:]
        var claims: [String: ClaimRow] = [:]
        var events: [String: [BidEvent]] = [:]
        /// Listings closed outside the bid flow (``BidsStore/closeListing(listingID:reason:now:)``).
        var closedListings: Set<String> = []

        static func requestKey(_ bidderID: String, _ requestID: String) -> String { bidderID + "\n" + requestID }

        /// The claim on a listing unless it has expired.
        func liveClaim(_ listingID: String, now: Date) -> ClaimRow? {
            guard let claim = claims[listingID],
                claim.claimedAt.addingTimeInterval(BidLifecycle.claimLifetime) > now
            else { return nil }
            return claim
        }

        func isClaimed(_ bid: Bid, now: Date) -> Bool { liveClaim(bid.listingID, now: now)?.bidID == bid.id }

        func liveBids(listingID: String) -> [Bid] {
            bids(listingID: listingID).filter(\.state.isLive)
        }

        /// Every bid on a listing.
        func bids(listingID: String) -> [Bid] { (bidsByListing[listingID] ?? []).compactMap { bids[$0] } }

        /// Stores a bid, indexing a new one.
        mutating func put(_ bid: Bid) {
            if bids.updateValue(bid, forKey: bid.id) == nil {
                bidsByListing[bid.listingID, default: []].append(bid.id)
                bidsByBidder[bid.bidderID, default: []].append(bid.id)
            }
        }

        /// Stores a sale, indexing a new one under its buyer and its seller.
        mutating func put(_ sale: Sale) {
            if sales.updateValue(sale, forKey: sale.id) == nil {
                salesByUser[sale.buyerID, default: []].append(sale.id)
                if sale.sellerID != sale.buyerID { salesByUser[sale.sellerID, default: []].append(sale.id) }
            }
        }

        mutating func record(_ drafts: [BidEventDraft], now: Date) -> [BidEvent] {
            drafts.map { draft in
                let sequence = (events[draft.userID]?.last?.sequence ?? 0) + 1
                let event = draft.numbered(sequence, at: now)
                events[draft.userID, default: []].append(event)
                return event
            }
        }

        func bid(_ id: String) throws(DomainError) -> Bid {
            guard let bid = bids[id] else { throw BidsStoreError.bidNotFound }
            return bid
        }
    }

    let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    // MARK: Bids

    public func placeBid(_ new: NewBid, now: Date) async throws -> Recorded<BidPlacement> {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Recorded<BidPlacement> in
            let match = new.requestID.flatMap { state.bidByRequest[State.requestKey(new.bidderID, $0)] }
            let live = state.liveBids(listingID: new.listingID).first { $0.bidderID == new.bidderID }
            let decision = try BidLifecycle.place(
                new,
                requestMatch: match.flatMap { state.bids[$0] },
                liveBid: live,
                liveBidClaimed: live.map { state.isClaimed($0, now: now) } ?? false,
                listingSold: state.saleByListing[new.listingID] != nil || state.closedListings.contains(new.listingID),
                now: now
            )
            switch decision {
            case .retry(let bid):
                return Recorded(BidPlacement(bid: bid, isRetry: true), events: [])
            case .placed(let bid, let replaced, let drafts):
                guard state.bids[bid.id] == nil else { throw BidsStoreError.bidIDTaken }
                state.put(bid)
                if let requestID = bid.requestID {
                    state.bidByRequest[State.requestKey(bid.bidderID, requestID)] = bid.id
                }
                if let replaced { state.put(replaced) }
                return Recorded(BidPlacement(bid: bid, replaced: replaced), events: state.record(drafts, now: now))
            }
        }
    }

    public func bid(id: String) async throws -> Bid? {
        state.withLock { $0.bids[id] }
    }

    public func bid(bidderID: String, requestID: String) async throws -> Bid? {
        state.withLock { state in state.bidByRequest[State.requestKey(bidderID, requestID)].flatMap { state.bids[$0] } }
    }

    public func withdrawBid(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid> {
        try change(id, now: now) { bid, claimed throws(DomainError) in
            try BidLifecycle.withdraw(bid, callerID: bidderID, claimed: claimed, now: now)
        }
    }

    public func rejectBid(id: String, sellerID: String, reason: String, now: Date) async throws -> Recorded<Bid> {
        try change(id, now: now) { bid, claimed throws(DomainError) in
            try BidLifecycle.reject(bid, callerID: sellerID, reason: reason, claimed: claimed, now: now)
        }
    }

    public func counterBid(id: String, sellerID: String, amountCents: Int64, now: Date) async throws -> Recorded<Bid> {
        try change(id, now: now) { bid, claimed throws(DomainError) in
            try BidLifecycle.counter(bid, callerID: sellerID, amountCents: amountCents, claimed: claimed, now: now)
        }
    }

    public func declineCounter(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid> {
        try change(id, now: now) { bid, claimed throws(DomainError) in
            try BidLifecycle.declineCounter(bid, callerID: bidderID, claimed: claimed, now: now)
        }
    }

    /// Loads a bid, decides a change with `decide` (`nil`: nothing to change) and saves it, atomically.
    private func change(
        _ id: String,
        now: Date,
        _ decide: (Bid, Bool) throws(DomainError) -> BidLifecycle.Change?
    ) throws(DomainError) -> Recorded<Bid> {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Recorded<Bid> in
            let bid = try state.bid(id)
            guard let change = try decide(bid, state.isClaimed(bid, now: now)) else { return Recorded(bid, events: []) }
            state.put(change.bid)
            return Recorded(change.bid, events: state.record(change.events, now: now))
        }
    }

    public func closeListing(listingID: String, reason: String, now: Date) async throws -> Recorded<[Bid]> {
        let now = now.roundedToMilliseconds
        return state.withLock { state in
            let changes = BidLifecycle.close(
                liveBids: state.liveBids(listingID: listingID),
                claimedBidID: state.liveClaim(listingID, now: now)?.bidID,
                listingSold: state.saleByListing[listingID] != nil,
                reason: reason,
                now: now
            )
            state.closedListings.insert(listingID)
            for change in changes { state.put(change.bid) }
            return Recorded(changes.map(\.bid), events: state.record(changes.flatMap(\.events), now: now))
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
        return try state.withLock { (state) throws(DomainError) -> AcceptanceClaim in
            let bid = try state.bid(bidID)
            let claim = try BidLifecycle.claim(
                bid,
                callerID: callerID,
                kind: kind,
                otherClaim: state.liveClaim(bid.listingID, now: now) != nil,
                listingSold: state.saleByListing[bid.listingID] != nil,
                now: now
            )
            state.claims[bid.listingID] = ClaimRow(bidID: bid.id, kind: kind, claimedAt: claim.claimedAt)
            return claim
        }
    }

    public func releaseAcceptance(_ claim: AcceptanceClaim) async throws {
        state.withLock { state in
            let row = ClaimRow(bidID: claim.bid.id, kind: claim.kind, claimedAt: claim.claimedAt)
            if state.claims[claim.bid.listingID] == row { state.claims[claim.bid.listingID] = nil }
        }
    }

    public func completeAcceptance(
        _ claim: AcceptanceClaim,
        sale draft: SaleDraft,
        now: Date
    ) async throws -> Recorded<Acceptance> {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Recorded<Acceptance> in
            let listingID = claim.bid.listingID
            let current = try state.bid(claim.bid.id)
            let (acceptance, drafts) = try BidLifecycle.complete(
                claim,
                current: current,
                claimHeld: state.claims[listingID].map { $0.bidID == claim.bid.id },
                listingSold: state.saleByListing[listingID] != nil,
                otherLiveBids: state.liveBids(listingID: listingID),
                sale: draft,
                now: now
            )
            guard state.sales[acceptance.sale.id] == nil else { throw BidsStoreError.saleIDTaken }
            state.claims[listingID] = nil
            state.put(acceptance.bid)
            for bid in acceptance.superseded { state.put(bid) }
            state.put(acceptance.sale)
            state.saleByListing[listingID] = acceptance.sale.id
            return Recorded(acceptance, events: state.record(drafts, now: now))
        }
    }

    // MARK: Sales

    public func sale(id: String) async throws -> Sale? {
        state.withLock { $0.sales[id] }
    }

    public func setConversation(saleID: String, conversationID: String) async throws -> Sale {
        try state.withLock { (state) throws(DomainError) -> Sale in
            guard var sale = state.sales[saleID] else { throw BidsStoreError.saleNotFound }
            if sale.conversationID.isEmpty {
                sale.conversationID = conversationID
                state.put(sale)
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
        return try state.withLock { (state) throws(DomainError) -> Recorded<HandoffConfirmation> in
            guard let sale = state.sales[saleID] else { throw BidsStoreError.saleNotFound }
            let (confirmation, drafts) = try BidLifecycle.confirmHandoff(sale, userID: userID, place: place, now: now)
            state.put(confirmation.sale)
            return Recorded(confirmation, events: state.record(drafts, now: now))
        }
    }

    // MARK: Lists

    public func listingBids(listingID: String, page: PageRequest) async throws -> Page<Bid> {
        let cursor = try BidsPaging.listingCursor(page, listingID: listingID)
        let fetched = state.withLock { state in
            state.bids(listingID: listingID)
                .filter { cursor.map($0.isAfter) ?? true }
                .sorted(by: BidsPaging.listingOrder)
                .prefix(page.size + 1)
        }
        return BidsPaging.listingPage(Array(fetched), size: page.size, listingID: listingID)
    }

    public func liveBidSummary(listingID: String) async throws -> LiveBidSummary {
        state.withLock { state in
            let live = state.liveBids(listingID: listingID)
            return LiveBidSummary(count: live.count, highestAmountCents: live.map(\.amountCents).max() ?? 0)
        }
    }

    public func bids(bidderID: String, states: Set<BidState>, page: PageRequest) async throws -> Page<Bid> {
        let owner = BidsPaging.myBidsOwner(bidderID: bidderID, states: states)
        let cursor = try BidsPaging.newestCursor(page, kind: BidsPaging.myBidsKind, owner: owner)
        let fetched = state.withLock { state in
            (state.bidsByBidder[bidderID] ?? []).compactMap { state.bids[$0] }
                .filter { bid in
                    (states.isEmpty || states.contains(bid.state))
                        && (cursor.map { BidsPaging.isAfter(bid.createdAt.millisecondsSince1970, bid.id, $0) } ?? true)
                }
                .sorted {
                    BidsPaging.newestOrder(
                        $0.createdAt.millisecondsSince1970,
                        $0.id,
                        $1.createdAt.millisecondsSince1970,
                        $1.id
                    )
                }
                .prefix(page.size + 1)
        }
        return BidsPaging.bidsPage(Array(fetched), size: page.size, owner: owner)
    }

    public func purchases(buyerID: String, page: PageRequest) async throws -> Page<Sale> {
        try salesPage(kind: BidsPaging.purchasesKind, owner: buyerID, page: page) { $0.buyerID == buyerID }
    }

    public func sales(sellerID: String, page: PageRequest) async throws -> Page<Sale> {
        try salesPage(kind: BidsPaging.salesKind, owner: sellerID, page: page) { $0.sellerID == sellerID }
    }

    private func salesPage(
        kind: String,
        owner: String,
        page: PageRequest,
        _ include: (Sale) -> Bool
    ) throws(DomainError) -> Page<Sale> {
        let cursor = try BidsPaging.newestCursor(page, kind: kind, owner: owner)
        let fetched = state.withLock { state in
            (state.salesByUser[owner] ?? []).compactMap { state.sales[$0] }
                .filter { sale in
                    include(sale)
                        && (cursor.map { BidsPaging.isAfter(sale.createdAt.millisecondsSince1970, sale.id, $0) } ?? true)
                }
                .sorted {
                    BidsPaging.newestOrder(
                        $0.createdAt.millisecondsSince1970,
                        $0.id,
                        $1.createdAt.millisecondsSince1970,
                        $1.id
                    )
                }
                .prefix(page.size + 1)
        }
        return BidsPaging.salesPage(Array(fetched), size: page.size, kind: kind, owner: owner)
    }

    // MARK: Events

    public func events(userID: String, afterSequence: Int64, limit: Int) async throws -> [BidEvent] {
        state.withLock { state in
            // A user's events are numbered 1, 2, 3, … in order: find the first after `afterSequence` by halving.
            let events = state.events[userID] ?? []
            var (low, high) = (0, events.count)
            while low < high {
                let middle = (low + high) / 2
                if events[middle].sequence > afterSequence { high = middle } else { low = middle + 1 }
            }
            return Array(events[low...].prefix(max(limit, 0)))
        }
    }

    public func events(recordedSince date: Date, limit: Int) async throws -> [BidEvent] {
        state.withLock { state in
            let recent = state.events.values.joined().filter { $0.createdAt >= date }
            let sorted = recent.sorted {
                ($0.createdAt, $0.userID, $0.sequence) < ($1.createdAt, $1.userID, $1.sequence)
            }
            return Array(sorted.prefix(max(limit, 0)))
        }
    }
}

extension Bid {
    fileprivate func isAfter(_ cursor: BidsPaging.ListingCursor) -> Bool { BidsPaging.isAfter(self, cursor) }
}
