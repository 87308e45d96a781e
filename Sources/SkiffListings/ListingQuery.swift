public import Foundation

/// The order of search results. Every order ends with newest first, then id descending, so paging is stable.
public enum ListingSort: String, CaseIterable, Codable, Hashable, Sendable {
    /// Most recently posted first (the default).
    case newest
    /// Cheapest first.
    case priceAscending = "price_asc"
    /// Most expensive first.
    case priceDescending = "price_desc"
    /// By title, A to Z, compared on ``SearchText/sortKey(_:)``.
    case title
    /// Best keyword match first (``SearchText/score(of:query:)``); needs a query with a word.
    case relevance
    /// Nearest first; needs ``ListingFilter/near``.
    case distance
}

/// A circle on Earth, for distance filtering.
public struct GeoCircle: Codable, Hashable, Sendable {
    public var center: GeoPoint
    public var radiusKm: Double

    public init(center: GeoPoint, radiusKm: Double) {
        self.center = center
        self.radiusKm = radiusKm
    }
}

/// Search filters; all must hold. Empty sets and `nil` do not filter.
public struct ListingFilter: Codable, Hashable, Sendable {
    public var categories: Set<ListingCategory> = []
    public var conditions: Set<ListingCondition> = []
    public var minPriceCents: Int64?
    public var maxPriceCents: Int64?
    /// Every one of these (normalized) tags must be on the listing.
    public var tags: [String] = []
    public var madeOnCampus: Bool?
    /// Only this seller's listings; anonymous ones match only when the viewer is this seller.
    public var sellerID: String?
    /// The statuses to include; empty means active only.
    public var statuses: Set<ListingStatus> = []
    /// Only listings posted at or after this instant (from `posted_within_days`).
    public var postedSince: Date?
    /// Only listings with a point inside this circle.
    public var near: GeoCircle?

    public init() {}

    /// The statuses searched (active when none are given).
    public var effectiveStatuses: Set<ListingStatus> { statuses.isEmpty ? [.active] : statuses }
}

/// A search: keywords, filters, order, and who is looking.
public struct ListingQuery: Hashable, Sendable {
    /// The keywords (validated, at most 200 characters).
    public var text: String
    public var filter: ListingFilter
    public var sort: ListingSort
    /// The signed-in user searching, or `nil` for a guest (decides whether anonymous listings match
    /// a seller filter).
    public var viewerID: String?
    /// What page tokens are tied to, in place of the instant-dependent ``ListingFilter/postedSince``
    /// (`posted_within_days`), so that a token stays valid while time passes.
    public var postedWithinDays: Int

    public init(
        text: String = "",
        filter: ListingFilter = ListingFilter(),
        sort: ListingSort = .newest,
        viewerID: String? = nil,
        postedWithinDays: Int = 0
    ) {
        self.text = text
        self.filter = filter
        self.sort = sort
        self.viewerID = viewerID
        self.postedWithinDays = postedWithinDays
    }
}

/// One search result.
public struct ListingSearchHit: Hashable, Sendable {
    public var listing: Listing
    /// The distance from the filter's centre, when the search had one.
    public var distanceKm: Double?

    public init(listing: Listing, distanceKm: Double?) {
        self.listing = listing
        self.distanceKm = distanceKm
    }
}
