public import SkiffDomain

/// What Listings asks of Bids; the Bids service provides it (in process, or through its typed client).
///
/// Listings calls it to refuse turning bidding off while bids are pending, and to have pending bids
/// rejected when a listing is withdrawn or marked sold outside the app.
public protocol ListingBids: Sendable {
    /// Whether the listing has bids waiting for the seller's answer.
    func hasPendingBids(listingID: String) async throws -> Bool

    /// The listing left the market (`sold` or `withdrawn`): reject its pending bids.
    func listingClosed(listingID: String, status: ListingStatus) async throws
}

/// No bids: for a server that runs Listings without Bids.
public struct NoListingBids: ListingBids {
    public init() {}
    public func hasPendingBids(listingID: String) async throws -> Bool { false }
    public func listingClosed(listingID: String, status: ListingStatus) async throws {}
}

/// Settings of the Listings service.
public struct ListingsConfiguration: Hashable, Sendable {
    /// How long change events are kept for resuming watches (7 days).
    public var changeRetention: Duration = .seconds(7 * 24 * 3600)
    /// The most undelivered changes one watcher may have before it is cut off.
    public var watcherBufferSize = 256
    /// How long an uploaded image no listing uses is kept (24 hours); housekeeping deletes it after.
    public var unattachedImageLifetime: Duration = .seconds(24 * 3600)
    /// The size of DownloadImage chunks (64 KiB).
    public var downloadChunkSize = 64 * 1024
    /// The most saved listings per user.
    public var maximumSavedListings = ListingRules.maximumSavedListings
    /// Listings one user may post (CreateListing); `nil` for no limit. Default: 60 per hour.
    public var createListingLimit: RateLimit? = RateLimit(60, per: .seconds(3600))
    /// Images one user may upload (UploadImage); `nil` for no limit. Default: 180 per hour (three per
    /// listing posted).
    public var uploadImageLimit: RateLimit? = RateLimit(180, per: .seconds(3600))
    /// Listings one user may save (SaveListing); `nil` for no limit. Default: 300 per hour.
    public var saveListingLimit: RateLimit? = RateLimit(300, per: .seconds(3600))
    /// Comments and replies one user may post (AddComment); `nil` for no limit. Default: 30 per 10
    /// minutes.
    public var addCommentLimit: RateLimit? = RateLimit(30, per: .seconds(600))

    /// Multiplies every per-user rate limit by `factor`; 0 turns them all off (load tests).
    public mutating func scaleRateLimits(by factor: Double) {
        createListingLimit = createListingLimit?.scaled(by: factor)
        uploadImageLimit = uploadImageLimit?.scaled(by: factor)
        saveListingLimit = saveListingLimit?.scaled(by: factor)
        addCommentLimit = addCommentLimit?.scaled(by: factor)
    }

    public init() {}

    /// The defaults.
    public static var defaults: ListingsConfiguration { ListingsConfiguration() }
}
