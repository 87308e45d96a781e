public import Foundation

/// A circle on Earth, for distance filtering.
public struct LostFoundCircle: Codable, Hashable, Sendable {
    public var center: LostFoundPoint
    public var radiusKm: Double

    public init(center: LostFoundPoint, radiusKm: Double) {
        self.center = center
        self.radiusKm = radiusKm
    }
}

/// The order of search results. Ties are broken by newest report first, then id descending.
public enum LostFoundSort: String, CaseIterable, Codable, Hashable, Sendable {
    /// Most recently reported first (the default).
    case newest
    /// Nearest first; needs ``LostFoundFilter/near``.
    case distance
}

/// Search filters; all must hold. Empty sets and `nil` do not filter.
public struct LostFoundFilter: Codable, Hashable, Sendable {
    /// The statuses to include; empty means `lost` and `found` (not returned).
    public var statuses: Set<LostFoundStatus> = []
    public var categories: Set<LostFoundCategory> = []
    /// Only items in this building, compared by ``LostFoundRules/buildingKey(_:)``.
    public var building: String?
    /// Only items with a point inside this circle.
    public var near: LostFoundCircle?

    public init() {}

    /// The statuses searched (lost and found when none are given).
    public var effectiveStatuses: Set<LostFoundStatus> { statuses.isEmpty ? [.lost, .found] : statuses }
}

/// A search: keywords, filters, order, and who is looking.
public struct LostFoundQuery: Hashable, Sendable {
    /// The keywords (validated, at most 200 characters); matched against title and description.
    public var text: String
    public var filter: LostFoundFilter
    public var sort: LostFoundSort
    /// The signed-in user searching, or `nil` for a guest. Distances to this user's own items are exact;
    /// to anyone else's they are approximate (``SkiffDomain/ApproximateLocation``).
    public var viewerID: String?

    public init(
        text: String = "",
        filter: LostFoundFilter = LostFoundFilter(),
        sort: LostFoundSort = .newest,
        viewerID: String? = nil
    ) {
        self.text = text
        self.filter = filter
        self.sort = sort
        self.viewerID = viewerID
    }
}

/// One search result.
public struct LostFoundSearchHit: Hashable, Sendable {
    public var item: LostFoundItem
    /// The distance from the filter's centre, when the search had one.
    public var distanceKm: Double?

    public init(item: LostFoundItem, distanceKm: Double?) {
        self.item = item
        self.distanceKm = distanceKm
    }
}

/// One recorded match, seen from one of its two items.
public struct LostFoundMatchHit: Hashable, Sendable {
    /// The other item of the pair, as it is now.
    public var candidate: LostFoundItem
    public var score: Double
    public var distanceKm: Double?
    public var matchedAt: Date

    public init(candidate: LostFoundItem, score: Double, distanceKm: Double?, matchedAt: Date) {
        self.candidate = candidate
        self.score = score
        self.distanceKm = distanceKm
        self.matchedAt = matchedAt
    }
}

/// One of a reporter's own items, with how many matches are recorded for it.
public struct LostFoundOwnItem: Hashable, Sendable {
    public var item: LostFoundItem
    /// The matches recorded for the item (what ``LostFoundStore/matches(itemID:page:)`` lists).
    public var matchCount: Int

    public init(item: LostFoundItem, matchCount: Int) {
        self.item = item
        self.matchCount = matchCount
    }
}

/// What reporting an item stored: the item and the matches recorded with it.
public struct LostFoundReport: Hashable, Sendable {
    public var item: LostFoundItem
    /// The matches recorded for the new item, best first (see ``LostFoundMatcher``).
    public var matches: [LostFoundMatch]

    public init(item: LostFoundItem, matches: [LostFoundMatch]) {
        self.item = item
        self.matches = matches
    }
}
