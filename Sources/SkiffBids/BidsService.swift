public import Foundation
public import Logging
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
public import SkiffFeed
import SwiftProtobuf

/// The Bids service: bids, counter-offers, acceptance, hand-off and receipts.
///
/// The rules are in ``BidLifecycle`` (run by the store inside its transactions) and here; storage goes
/// through ``BidsStore``; listings, conversations and payment handles through small collaborator
/// protocols implemented over the other services' typed clients. Wire types are converted at this edge
/// only. Every event a store records is published to the users' feeds (``FeedPublisher``, the Chat
/// service) after its transaction commits, and again by ``republishEvents(since:batchSize:)``.
public struct BidsService: Skiff_Bids_V1_Bids.ServiceProtocol {
    /// The largest amount a bid or counter-offer may have, in cents.
    public static let maximumAmountCents: Int64 = 100_000_000
    /// The longest rejection reason, in characters.
    public static let reasonMaximumLength = 500
    /// The longest request id, in characters.
    public static let requestIDMaximumLength = 128
    /// The longest listing id accepted before looking it up, in characters.
    public static let listingIDMaximumLength = 128
    /// How long after completion the buyer may rate the seller (14 days, as Accounts enforces).
    public static let ratingWindow: TimeInterval = 14 * 24 * 3600

    let store: any BidsStore
    let listings: any ListingDirectory
    let conversations: any ConversationOpener
    let paymentHandles: any PaymentHandleDirectory
    let feed: any FeedPublisher
    let time: any TimeSource
    let onSaleCompleted: @Sendable (Sale) async throws -> Void
    let logger: Logger
    let placeBidLimiter: UserRateLimiter
    let handoffPlaceLimiter: UserRateLimiter
    /// The configured hand-off places, in order, and by id.
    let handoffPlaces: [HandoffPlace]
    let handoffPlacesByID: [String: HandoffPlace]

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - store: Where bids, sales and events are kept.
    ///   - listings: Reads listings and marks them sold.
    ///   - conversations: Opens the buyer–seller conversation at acceptance.
    ///   - paymentHandles: The sellers' payment handles, shown on sales.
    ///   - feed: Where recorded events are published for users' live feeds (the Chat service).
    ///   - time: The clock.
    ///   - onSaleCompleted: Called once per sale, when it completes (e.g. to count the seller's items
    ///     sold). Its failure is logged, not returned: the sale is completed either way.
    ///   - logger: For failures that do not fail the call.
    ///   - configuration: Rate limits and hand-off places.
    public init(
        store: any BidsStore,
        listings: any ListingDirectory,
        conversations: any ConversationOpener,
        paymentHandles: any PaymentHandleDirectory = NoPaymentHandles(),
        feed: any FeedPublisher = NoFeed(),
        time: any TimeSource = SystemTimeSource(),
        onSaleCompleted: @escaping @Sendable (Sale) async throws -> Void = { _ in },
        logger: Logger = Logger(label: "skiff.bids"),
        configuration: BidsConfiguration = .defaults
    ) {
        self.store = store
        self.listings = listings
        self.conversations = conversations
        self.paymentHandles = paymentHandles
        self.feed = feed
        self.time = time
        self.onSaleCompleted = onSaleCompleted
        self.logger = logger
        self.placeBidLimiter = UserRateLimiter(configuration.placeBidLimit, what: "bids placed")
        self.handoffPlaceLimiter = UserRateLimiter(configuration.handoffPlaceLimit, what: "hand-off places picked")
        self.handoffPlaces = configuration.handoffPlaces
        self.handoffPlacesByID = Dictionary(
            configuration.handoffPlaces.map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// Hands events the store recorded to the users' feeds. The feed is best effort here: the events stay in the Bids store, and publishing is idempotent per user
    /// and sequence, so a failure is logged, not returned.
    func announce(_ events: [BidEvent]) async {
        guard !events.isEmpty else { return }
        do {
            try await feed.publish(events.map(\.feedNotification))
        } catch {
            logger.warning(
                "Could not publish bid events to the feed",
                metadata: ["events": "\(events.count)", "error": "\(LogText.bounded(error))"]
            )
        }
    }

    /// Publishes to the feed, again, every event recorded since `date` — the relay that makes feed
    /// delivery at-least-once: an event committed just before a crash (or a failed publication) is
    /// published on the next run. The feed ignores what it already has (idempotency keys).
    ///
    /// - Returns: The number of events published.
    public func republishEvents(since date: Date, batchSize: Int = 500) async throws -> Int {
        let events = try await store.events(recordedSince: date, limit: 100_000)
        var start = events.startIndex
        while start < events.endIndex {
            let end = min(start + batchSize, events.endIndex)
            try await feed.publish(events[start..<end].map(\.feedNotification))
            start = end
        }
        return events.count
    }

    // MARK: Bidding

    public func placeBid(
        request: Skiff_Bids_V1_PlaceBidRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_PlaceBidResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let listingID = try Self.requireListingID(request.listingID)
        guard request.amountCents <= Self.maximumAmountCents else {
            throw DomainError(.invalidArgument, "amount_cents must be at most \(Self.maximumAmountCents).")
        }
        guard request.requestID.count <= Self.requestIDMaximumLength else {
            throw DomainError(.invalidArgument, "request_id must be at most \(Self.requestIDMaximumLength) characters.")
        }
        let requestID = request.requestID.isEmpty ? nil : request.requestID
        // A retry answers with the first bid even if the listing has changed since.
        if let requestID, let earlier = try await store.bid(bidderID: user.id, requestID: requestID) {
            guard earlier.listingID == listingID, earlier.amountCents == request.amountCents else {
                throw BidsStoreError.requestIDReused
            }
            // The impact is the listing's, whatever it became (a withdrawn one is still shown to services).
            // The retry answers even when Listings cannot be read: then without the impact.
            let listing = try? await listings.listing(id: listingID)
            return .with {
                $0.bid = earlier.proto
                if let listing = listing ?? nil {
                    $0.sustainabilityImpact = SustainabilityImpact.estimate(for: listing.category)
                        .proto(title: listing.title)
                }
            }
        }
        // Counted after the retry check: a retry of a placed bid costs nothing.
        try placeBidLimiter.acquire(userID: user.id, now: time.now())
        let listing = try await requireListing(listingID)
        guard listing.sellerID != user.id else { throw BidsStoreError.ownListing }
        guard listing.status == .active else { throw BidsStoreError.listingSold }
        guard listing.biddingEnabled else {
            throw DomainError(.failedPrecondition, "The seller does not take bids on this listing.")
        }
        let recorded = try await store.placeBid(
            NewBid(
                id: EntityID.make(.bid),
                listingID: listingID,
                sellerID: listing.sellerID,
                bidderID: user.id,
                amountCents: request.amountCents,
                askingPriceCents: listing.priceCents,
                requestID: requestID
            ),
            now: time.now()
        )
        await announce(recorded.events)
        return .with {
            $0.bid = recorded.value.bid.proto
            $0.sustainabilityImpact = SustainabilityImpact.estimate(for: listing.category).proto(title: listing.title)
        }
    }

    public func withdrawBid(
        request: Skiff_Bids_V1_WithdrawBidRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_WithdrawBidResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let recorded = try await store.withdrawBid(
            id: try Self.requireBidID(request.bidID),
            bidderID: user.id,
            now: time.now()
        )
        await announce(recorded.events)
        return .with { $0.bid = recorded.value.proto }
    }

    public func rejectBid(
        request: Skiff_Bids_V1_RejectBidRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_RejectBidResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let bidID = try Self.requireBidID(request.bidID)
        let reason = request.reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard reason.count <= Self.reasonMaximumLength else {
            throw DomainError(.invalidArgument, "reason must be at most \(Self.reasonMaximumLength) characters.")
        }
        let recorded = try await store.rejectBid(id: bidID, sellerID: user.id, reason: reason, now: time.now())
        await announce(recorded.events)
        return .with { $0.bid = recorded.value.proto }
    }

    public func counterBid(
        request: Skiff_Bids_V1_CounterBidRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_CounterBidResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let bidID = try Self.requireBidID(request.bidID)
        guard request.amountCents <= Self.maximumAmountCents else {
            throw DomainError(.invalidArgument, "amount_cents must be at most \(Self.maximumAmountCents).")
        }
        guard let bid = try await store.bid(id: bidID) else { throw BidsStoreError.bidNotFound }
        guard bid.sellerID == user.id else { throw BidsStoreError.notYourListing }
        if bid.state.isLive {
            let listing = try await listings.listing(id: bid.listingID)
            guard listing?.status == .active else { throw BidsStoreError.listingSold }
        }
        let recorded = try await store.counterBid(
            id: bidID,
            sellerID: user.id,
            amountCents: request.amountCents,
            now: time.now()
        )
        await announce(recorded.events)
        return .with { $0.bid = recorded.value.proto }
    }

    public func declineCounter(
        request: Skiff_Bids_V1_DeclineCounterRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_DeclineCounterResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let recorded = try await store.declineCounter(
            id: try Self.requireBidID(request.bidID),
            bidderID: user.id,
            now: time.now()
        )
        await announce(recorded.events)
        return .with { $0.bid = recorded.value.proto }
    }

    // MARK: Validation helpers

    static func requireBidID(_ id: String) throws(DomainError) -> String {
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "bid_id is empty.") }
        return id
    }

    static func requireListingID(_ id: String) throws(DomainError) -> String {
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        guard id.count <= listingIDMaximumLength else {
            throw DomainError(.notFound, "No listing has this id.")
        }
        return id
    }

    func requireListing(_ id: String) async throws -> ListingSnapshot {
        guard let listing = try await listings.listing(id: id) else {
            throw DomainError(.notFound, "No listing has the id \"\(id)\".")
        }
        return listing
    }
}
