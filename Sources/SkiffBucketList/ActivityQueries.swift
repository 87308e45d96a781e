public import Foundation

/// The order of nearby results.
public enum NearbySort: String, CaseIterable, Codable, Hashable, Sendable {
    /// Nearest first, then by id.
    case distance
    /// Highest net votes first, then nearest, then by id.
    case popularity
}

/// A nearby search: activities within `radiusKm` of `center` (validated by ``BucketListRules``).
public struct NearbyQuery: Hashable, Sendable {
    /// The point to search around.
    public var center: Coordinate
    /// The radius in kilometres.
    public var radiusKm: Double
    /// The order of results.
    public var sort: NearbySort

    /// Creates a nearby search.
    public init(center: Coordinate, radiusKm: Double, sort: NearbySort = .distance) {
        self.center = center
        self.radiusKm = radiusKm
        self.sort = sort
    }
}

/// A nearby result: the activity and its distance from the center.
public struct NearbyHit: Hashable, Sendable {
    /// The activity as it is now.
    public var activity: Activity
    /// The great-circle distance from the center, in kilometres.
    public var distanceKm: Double

    /// Creates a result.
    public init(activity: Activity, distanceKm: Double) {
        self.activity = activity
        self.distanceKm = distanceKm
    }
}

/// A trending query: votes cast since `since`, scored at `now` (see ``TrendingScore``).
public struct TrendingQuery: Hashable, Sendable {
    /// Only activities within `radiusKm` of this point; `nil` for everywhere.
    public var center: Coordinate?
    /// The radius around `center`, in kilometres (ignored without a center).
    public var radiusKm: Double
    /// The start of the window: older votes do not count.
    public var since: Date
    /// The moment the scores are computed at.
    public var now: Date
    /// The most results.
    public var limit: Int

    /// Creates a trending query.
    public init(center: Coordinate?, radiusKm: Double, since: Date, now: Date, limit: Int) {
        self.center = center
        self.radiusKm = radiusKm
        self.since = since
        self.now = now
        self.limit = limit
    }
}

/// A trending result.
public struct TrendingHit: Hashable, Sendable {
    /// The activity as it is now.
    public var activity: Activity
    /// Its trending score (see ``TrendingScore``).
    public var score: Double
    /// The distance from the query's center; 0 without one.
    public var distanceKm: Double

    /// Creates a result.
    public init(activity: Activity, score: Double, distanceKm: Double) {
        self.activity = activity
        self.score = score
        self.distanceKm = distanceKm
    }
}
