public import Foundation
public import Logging
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
public import SkiffFeed
import SwiftProtobuf

/// The Listings service: posting, editing and closing listings, search, images, saved items and live
/// change events.
///
/// Domain rules live in ``ListingRules``; storage goes through ``ListingsStore``; live delivery through the
/// ``ChangeBroadcaster`` this service owns; the wire types are converted at this edge only. Guests may read
/// (GetListing, SearchListings, DownloadImage); every write needs a signed-in user.
public struct ListingsService: Skiff_Listings_V1_Listings.ServiceProtocol {
    let store: any ListingsStore
    let bids: any ListingBids
    let feed: any FeedPublisher
    let time: any TimeSource
    let configuration: ListingsConfiguration
    let logger: Logger
    /// The live change feed (exposed for tests and for other in-process services).
    public let broadcaster: ChangeBroadcaster
    let limits: WriteLimits

    /// The per-user rate limits of the configuration.
    struct WriteLimits: Sendable {
        let createListing: UserRateLimiter
        let uploadImage: UserRateLimiter
        let saveListing: UserRateLimiter
        let addComment: UserRateLimiter

        init(_ configuration: ListingsConfiguration) {
            createListing = UserRateLimiter(configuration.createListingLimit, what: "listings posted")
            uploadImage = UserRateLimiter(configuration.uploadImageLimit, what: "images uploaded")
            saveListing = UserRateLimiter(configuration.saveListingLimit, what: "listings saved")
            addComment = UserRateLimiter(configuration.addCommentLimit, what: "comments posted")
        }
    }

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - store: Where listings, images, saved items and change events live.
    ///   - bids: What Listings asks of Bids (pending bids); ``NoListingBids`` without Bids.
    ///   - feed: Where changes to saved listings are published for the savers' live feeds (Chat).
    ///   - time: The clock.
    ///   - configuration: Limits and retention.
    ///   - logger: For failures that do not fail the call.
    public init(
        store: any ListingsStore,
        bids: any ListingBids = NoListingBids(),
        feed: any FeedPublisher = NoFeed(),
        time: any TimeSource = SystemTimeSource(),
        configuration: ListingsConfiguration = .defaults,
        logger: Logger = Logger(label: "skiff.listings")
    ) {
        self.store = store
        self.bids = bids
        self.feed = feed
        self.time = time
        self.configuration = configuration
        self.logger = logger
        self.broadcaster = ChangeBroadcaster(bufferSize: configuration.watcherBufferSize)
        self.limits = WriteLimits(configuration)
    }

    // MARK: Listings

    public func createListing(
        request: Skiff_Listings_V1_CreateListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_CreateListingResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        guard request.hasListing else {
            throw DomainError(.invalidArgument, "listing is missing: send the new listing's fields.")
        }
        let fields = try ListingRules.validate(try ListingFields(proto: request.listing))
        let requestID = request.requestID.trimmingCharacters(in: .whitespaces)
        guard requestID.utf8.count <= 128 else {
            throw DomainError(.invalidArgument, "request_id is too long: use at most 128 characters (e.g. a UUID).")
        }
        try limits.createListing.acquire(userID: user.id, now: time.now())
        let listing = Listing(id: EntityID.make(.listing), sellerID: user.id, fields: fields, createdAt: time.now())
        let created = try await store.createListing(listing, requestID: requestID.isEmpty ? nil : requestID)
        return .with { $0.listing = created.proto(viewerID: user.id) }
    }

    public func getListing(
        request: Skiff_Listings_V1_GetListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_GetListingResponse {
        try ListingsRequestBounds.check(request)
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let viewer = context.user?.id
        let isService = context.user?.isService == true
        guard let listing = try await store.listing(id: request.listingID),
            listing.status != .withdrawn || listing.sellerID == viewer || isService
        else { throw Self.notFound(request.listingID) }
        // Other Skiff services (Bids) see what the seller sees.
        return .with {
            $0.listing = listing.proto(viewerID: isService ? listing.sellerID : viewer)
            $0.sustainabilityImpact = Self.sustainabilityImpact(listing)
        }
    }

    public func updateListing(
        request: Skiff_Listings_V1_UpdateListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_UpdateListingResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        let id = request.listing.listingID
        guard !id.isEmpty else {
            throw DomainError(.invalidArgument, "listing.listing_id is empty: name the listing to change.")
        }
        let changes = try ListingRules.validate(try Self.changes(request))
        if changes.biddingEnabled == false, let current = try await store.listing(id: id),
            current.sellerID == user.id, current.status == .active, current.biddingEnabled,
            try await bids.hasPendingBids(listingID: id)
        {
            throw DomainError(
                .failedPrecondition,
                "Bidding cannot be turned off while bids are pending: accept or reject them first."
            )
        }
        let update = try await store.updateListing(id: id, sellerID: user.id, changes: changes, now: time.now())
        if let event = update.event { await publish(event) }
        return .with { $0.listing = update.listing.proto(viewerID: user.id) }
    }

    static let updatablePaths =
        "title, description, price_cents, category, condition, size, tags, made_on_campus, bidding_enabled, "
        + "anonymous, location, image_ids"

    /// The changes named by the request's mask (not yet validated).
    static func changes(_ request: Skiff_Listings_V1_UpdateListingRequest) throws(DomainError) -> ListingChanges {
        let paths = request.updateMask.paths
        guard !paths.isEmpty else {
            throw DomainError(.invalidArgument, "update_mask is empty: name the fields to change (\(updatablePaths)).")
        }
        let proto = request.listing
        var changes = ListingChanges()
        for path in paths {
            switch path {
            case "title": changes.title = proto.title
            case "description": changes.description = proto.description_p
            case "price_cents": changes.priceCents = proto.priceCents
            case "category": changes.category = try ListingCategory(proto: proto.category, field: "listing.category")
            case "condition":
                changes.condition = try ListingCondition(proto: proto.condition, field: "listing.condition")
            case "size": changes.size = proto.size
            case "tags": changes.tags = proto.tags
            case "made_on_campus": changes.madeOnCampus = proto.madeOnCampus
            case "bidding_enabled": changes.biddingEnabled = proto.biddingEnabled
            case "anonymous": changes.anonymous = proto.anonymous
            case "location": changes.location = ListingLocation(proto: proto.location)
            case "image_ids": changes.imageIDs = proto.imageIds
            default:
                throw DomainError(
                    .invalidArgument,
                    "update_mask path \"\(path)\" cannot be changed; allowed: \(updatablePaths)."
                )
            }
        }
        return changes
    }

    public func withdrawListing(
        request: Skiff_Listings_V1_WithdrawListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_WithdrawListingResponse {
        try ListingsRequestBounds.check(request)
        let listing = try await close(request.listingID, to: .withdrawn, context: context)
        return .with { $0.listing = listing }
    }

    public func markSold(
        request: Skiff_Listings_V1_MarkSoldRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_MarkSoldResponse {
        try ListingsRequestBounds.check(request)
        if context.user?.isService == true {
            // Bids marks a listing sold when the seller accepts a bid: exactly once, from active.
            guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
            let transition = try await store.setStatus(id: request.listingID, to: .sold, by: .system, now: time.now())
            guard let event = transition.event else {
                throw DomainError(.failedPrecondition, "The listing is no longer for sale.")
            }
            // No `bids.listingClosed` here: the caller is Bids accepting a bid, and its acceptance
            // settles the listing's other bids (SUPERSEDED) in the same transaction as the sale.
            await publish(event)
            return .with { $0.listing = transition.listing.proto(viewerID: transition.listing.sellerID) }
        }
        let listing = try await close(request.listingID, to: .sold, context: context)
        return .with { $0.listing = listing }
    }

    private func close(
        _ id: String,
        to status: ListingStatus,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_Listing {
        let user = try context.requireUser()
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let transition = try await store.setStatus(id: id, to: status, by: .seller(user.id), now: time.now())
        if let event = transition.event {
            // The listing is closed whatever happens next; Bids' clean-up and delivery are best effort here
            // (watchers that miss a change get it from the store when they resume).
            try? await bids.listingClosed(listingID: id, status: status)
            await publish(event)
        }
        return transition.listing.proto(viewerID: user.id)
    }

    /// Hands a committed change to the live watchers of the users who saved the listing.
    func publish(_ event: ListingChangeEvent) async {
        guard let savers = try? await store.savers(listingID: event.listingID), !savers.isEmpty else { return }
        broadcaster.publish(event, to: savers)
        let notifications = Self.feedNotifications(for: event, savers: savers)
        do {
            try await feed.publish(notifications)
        } catch {
            logger.warning(
                "Could not publish a listing change to the feed",
                metadata: ["listing": "\(event.listingID)", "error": "\(LogText.bounded(error))"]
            )
        }
    }

    /// A change as notifications for the savers' feeds (Chat), keyed by the change's sequence so
    /// that publishing it again delivers nothing twice.
    static func feedNotifications(for event: ListingChangeEvent, savers: [String]) -> [FeedNotification] {
        savers.map { userID in
            FeedNotification(
                userID: userID,
                idempotencyKey: "listings:\(event.sequence)",
                kind: .listing(
                    .init(
                        kind: event.kind.rawValue,
                        listingID: event.listingID,
                        title: event.title,
                        newPriceCents: event.newPriceCents,
                        oldPriceCents: event.oldPriceCents
                    )
                ),
                occurredAt: event.changedAt
            )
        }
    }

    /// Publishes to the savers' feeds, again, every change made since `date` — the relay that makes
    /// feed delivery at-least-once (a change committed just before a crash, or whose publication
    /// failed, is published on the next run; the feed ignores what it already has). Changes go to
    /// the listing's savers as of now.
    ///
    /// - Returns: The number of changes published.
    public func republishChanges(since date: Date) async throws -> Int {
        let changes = try await store.changes(since: date, limit: 100_000)
        for event in changes {
            let savers = try await store.savers(listingID: event.listingID)
            guard !savers.isEmpty else { continue }
            try await feed.publish(Self.feedNotifications(for: event, savers: savers))
        }
        return changes.count
    }

    static func notFound(_ id: String) -> DomainError {
        DomainError(.notFound, "No listing has the id \"\(id)\".")
    }
}
