public import Foundation
public import SkiffDomain

/// Persistence for the Bids service: one method per use case, each one atomic transaction.
///
/// Every backend (``InMemoryBidsStore``, the SQLite store, the PostgreSQL store) must behave exactly alike;
/// the shared conformance suite in `Tests/SkiffStorageTests` proves it. The rules themselves are in
/// ``BidLifecycle``, which every backend calls inside its transaction, so only loading and saving differ.
///
/// ## Implementation requirements
/// - Each method is atomic, and concurrent calls behave as if they ran one after another. Races are
///   settled here: of concurrent acceptances on one listing at most one claim succeeds; no listing ever
///   has two sales.
/// - Mutations record their notification events (``BidEvent``) in the same transaction, numbered per
///   user without gaps, and return them in ``Recorded``.
/// - Failures are thrown as ``SkiffDomain/DomainError`` with the messages in ``BidsStoreError``.
/// - Dates are kept at millisecond precision.
public protocol BidsStore: Sendable {
    // MARK: Bids

    /// Places a bid; see ``BidLifecycle/place(_:requestMatch:liveBid:liveBidClaimed:listingSold:now:)``.
    ///
    /// A retry with the bidder's earlier `requestID` returns the earlier bid and records nothing.
    func placeBid(_ bid: NewBid, now: Date) async throws -> Recorded<BidPlacement>

    /// The bid with this id, or `nil`.
    func bid(id: String) async throws -> Bid?

    /// The bid the bidder placed with this request id, or `nil`.
    func bid(bidderID: String, requestID: String) async throws -> Bid?

    /// The bidder withdraws a live bid; withdrawing a withdrawn bid again changes nothing.
    func withdrawBid(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid>

    /// The seller rejects a live bid.
    func rejectBid(id: String, sellerID: String, reason: String, now: Date) async throws -> Recorded<Bid>

    /// The seller counters a live bid with a higher amount.
    func counterBid(id: String, sellerID: String, amountCents: Int64, now: Date) async throws -> Recorded<Bid>

    /// The bidder declines the counter-offer: the bid is PENDING again.
    func declineCounter(id: String, bidderID: String, now: Date) async throws -> Recorded<Bid>

    /// A listing left the market outside the bid flow: its live bids are REJECTED with `reason` and each
    /// bidder is notified; see ``BidLifecycle/close(liveBids:claimedBidID:listingSold:reason:now:)``.
    /// Closing again rejects nothing more. The listing stays closed: a bid placed on it afterwards (one
    /// that raced the close) fails like a bid on a sold listing.
    ///
    /// - Returns: The bids rejected, ordered by id, with their events.
    func closeListing(listingID: String, reason: String, now: Date) async throws -> Recorded<[Bid]>

    // MARK: Acceptance

    /// Reserves a listing's acceptance for one bid: the first step of accepting.
    ///
    /// While the claim is held (until completed, released, or ``BidLifecycle/claimLifetime`` passes),
    /// every other acceptance on the listing and every change to the claimed bid fails with ABORTED.
    func claimAcceptance(
        bidID: String,
        callerID: String,
        kind: AcceptanceKind,
        now: Date
    ) async throws
        -> AcceptanceClaim

    /// Gives a claim up (the listing could not be marked sold). Releasing a claim twice is harmless.
    func releaseAcceptance(_ claim: AcceptanceClaim) async throws

    /// Completes a claimed acceptance: the bid is ACCEPTED, the listing's other live bids SUPERSEDED,
    /// and the sale created, atomically.
    func completeAcceptance(
        _ claim: AcceptanceClaim,
        sale: SaleDraft,
        now: Date
    ) async throws
        -> Recorded<Acceptance>

    // MARK: Sales

    /// The sale with this id, or `nil`.
    func sale(id: String) async throws -> Sale?

    /// Sets a sale's conversation if it has none yet.
    ///
    /// - Returns: The sale (with the conversation that was already set, if any).
    func setConversation(saleID: String, conversationID: String) async throws -> Sale

    /// A party confirms the hand-off, picking `place` (or keeping the sale's); the second confirmation
    /// completes the sale. Confirming twice is harmless. The rules are
    /// ``BidLifecycle/confirmHandoff(_:userID:place:now:)``.
    func confirmHandoff(
        saleID: String,
        userID: String,
        place: HandoffPlace?,
        now: Date
    ) async throws -> Recorded<HandoffConfirmation>

    // MARK: Lists

    /// A listing's bids in every state, highest amount first, then oldest, then by id.
    func listingBids(listingID: String, page: PageRequest) async throws -> Page<Bid>

    /// The number of a listing's live bids and their highest amount.
    func liveBidSummary(listingID: String) async throws -> LiveBidSummary

    /// A bidder's bids in the given states (all when empty), newest first (ties by id, descending).
    func bids(bidderID: String, states: Set<BidState>, page: PageRequest) async throws -> Page<Bid>

    /// The sales with this buyer, newest first (ties by id, descending).
    func purchases(buyerID: String, page: PageRequest) async throws -> Page<Sale>

    /// The sales with this seller, newest first (ties by id, descending).
    func sales(sellerID: String, page: PageRequest) async throws -> Page<Sale>

    // MARK: Events

    /// A user's events with a sequence number above `afterSequence`, oldest first, at most `limit`.
    func events(userID: String, afterSequence: Int64, limit: Int) async throws -> [BidEvent]

    /// Events of every user recorded at or after `date`, oldest first (then by user and sequence), at
    /// most `limit`: what the feed relay publishes again after a crash between a commit and its
    /// publication.
    func events(recordedSince date: Date, limit: Int) async throws -> [BidEvent]
}

/// The result of placing a bid.
public struct BidPlacement: Hashable, Sendable {
    /// The new bid (or, for a retry, the bid placed the first time).
    public var bid: Bid
    /// The bidder's earlier live bid that the new one replaced (now WITHDRAWN).
    public var replaced: Bid?
    /// Whether this was a retry with a known request id (nothing changed).
    public var isRetry: Bool

    public init(bid: Bid, replaced: Bid? = nil, isRetry: Bool = false) {
        self.bid = bid
        self.replaced = replaced
        self.isRetry = isRetry
    }
}

/// Who accepts: the seller a PENDING bid, or the bidder a counter-offer.
public enum AcceptanceKind: String, Hashable, Sendable, Codable {
    /// AcceptBid: the seller accepts at the bid's amount.
    case bid
    /// AcceptCounter: the bidder accepts at the counter amount.
    case counter
}

/// A reservation of a listing's acceptance for one bid.
public struct AcceptanceClaim: Hashable, Sendable {
    /// The bid as it was when claimed.
    public var bid: Bid
    /// Who accepts.
    public var kind: AcceptanceKind
    /// When the claim was made.
    public var claimedAt: Date

    public init(bid: Bid, kind: AcceptanceKind, claimedAt: Date) {
        self.bid = bid
        self.kind = kind
        self.claimedAt = claimedAt
    }

    /// The amount the sale is made at.
    public var amountCents: Int64 { kind == .bid ? bid.amountCents : bid.counterAmountCents }
}

/// A completed acceptance.
public struct Acceptance: Hashable, Sendable {
    /// The bid, ACCEPTED.
    public var bid: Bid
    /// The new sale, PENDING_HANDOFF.
    public var sale: Sale
    /// The listing's other bids that were live and are now SUPERSEDED.
    public var superseded: [Bid]

    public init(bid: Bid, sale: Sale, superseded: [Bid]) {
        self.bid = bid
        self.sale = sale
        self.superseded = superseded
    }
}

/// The result of confirming a hand-off.
public struct HandoffConfirmation: Hashable, Sendable {
    /// The sale after the confirmation.
    public var sale: Sale
    /// Whether this confirmation completed the sale (so it happens exactly once per sale).
    public var completedNow: Bool

    public init(sale: Sale, completedNow: Bool) {
        self.sale = sale
        self.completedNow = completedNow
    }
}

/// How many live bids a listing has, and the highest.
public struct LiveBidSummary: Hashable, Sendable {
    /// The number of PENDING or COUNTERED bids.
    public var count: Int
    /// The highest amount among them in cents; 0 when there are none.
    public var highestAmountCents: Int64

    public init(count: Int, highestAmountCents: Int64) {
        self.count = count
        self.highestAmountCents = highestAmountCents
    }
}
