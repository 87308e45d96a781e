public import Foundation
public import SkiffDomain

extension EntityID.Prefix {
    /// Activities (`act_`).
    public static let activity = EntityID.Prefix("act")
    /// Comments on activities (`cmt_`).
    public static let comment = EntityID.Prefix("cmt")
    /// Bucket lists (`bkl_`).
    public static let bucketList = EntityID.Prefix("bkl")
    /// Images, as Listings makes them (`img_`); activities refer to them by id.
    static let activityImage = EntityID.Prefix("img")
}

/// A point on Earth (WGS 84), in degrees.
public struct Coordinate: Codable, Hashable, Sendable {
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double

    /// Creates a point from degrees north and east.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Where an activity happens: a name and coordinates.
public struct Place: Codable, Hashable, Sendable {
    /// 1–120 characters, trimmed.
    public var name: String
    /// The coordinates.
    public var point: Coordinate

    /// Creates a place.
    public init(name: String, point: Coordinate) {
        self.name = name
        self.point = point
    }
}

/// The fields of an activity its poster chooses (validated by ``BucketListRules``).
public struct ActivityFields: Codable, Hashable, Sendable {
    /// 1–100 characters, trimmed.
    public var title: String
    /// At most 2000 characters.
    public var description: String
    /// Where it happens.
    public var place: Place
    /// When it happens, for events; `nil` for anytime activities.
    public var startsAt: Date?
    /// A picture uploaded through Listings (`img_…`), or `nil`.
    public var imageID: String?
    /// At most 10 tags, lowercased, without duplicates.
    public var tags: [String]

    /// Creates the fields of an activity (validate them with ``BucketListRules``).
    public init(
        title: String,
        description: String = "",
        place: Place,
        startsAt: Date? = nil,
        imageID: String? = nil,
        tags: [String] = []
    ) {
        self.title = title
        self.description = description
        self.place = place
        self.startsAt = startsAt
        self.imageID = imageID
        self.tags = tags
    }
}

/// Something to do at a place, with its vote and comment counts.
public struct Activity: Hashable, Sendable {
    /// The opaque id (`act_…`).
    public var id: String
    /// The user who posted it.
    public var ownerID: String
    /// The fields the poster chose.
    public var fields: ActivityFields
    /// Up-votes, kept by the store.
    public var upVotes: Int
    /// Down-votes, kept by the store.
    public var downVotes: Int
    /// Comments, kept by the store.
    public var commentCount: Int
    /// When it was posted.
    public var createdAt: Date
    /// When its fields last changed.
    public var updatedAt: Date

    /// Creates an activity; a new one has no votes and no comments.
    public init(
        id: String,
        ownerID: String,
        fields: ActivityFields,
        upVotes: Int = 0,
        downVotes: Int = 0,
        commentCount: Int = 0,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.ownerID = ownerID
        self.fields = fields
        self.upVotes = upVotes
        self.downVotes = downVotes
        self.commentCount = commentCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// Up-votes minus down-votes: the popularity used by nearby search.
    public var netVotes: Int { upVotes - downVotes }

    /// The activity with its dates rounded to milliseconds, as stores keep them.
    public var rounded: Activity {
        var copy = self
        copy.createdAt = createdAt.roundedToMilliseconds
        copy.updatedAt = updatedAt.roundedToMilliseconds
        copy.fields.startsAt = fields.startsAt?.roundedToMilliseconds
        return copy
    }
}

/// The fields an update sets; `nil` leaves a field as it is.
public struct ActivityChanges: Hashable, Sendable {
    /// A new title.
    public var title: String?
    /// A new description.
    public var description: String?
    /// A new place, replacing the old one as a whole.
    public var place: Place?
    /// `.some(nil)` clears the date.
    public var startsAt: Date??
    /// `.some(nil)` clears the picture.
    public var imageID: String??
    /// New tags, replacing the old ones as a whole.
    public var tags: [String]?

    /// Creates changes that change nothing.
    public init() {}

    /// Whether the update sets nothing.
    public var isEmpty: Bool {
        title == nil && description == nil && place == nil && startsAt == nil && imageID == nil && tags == nil
    }

    /// The fields after applying these changes.
    public func applied(to fields: ActivityFields) -> ActivityFields {
        var result = fields
        if let title { result.title = title }
        if let description { result.description = description }
        if let place { result.place = place }
        if let startsAt { result.startsAt = startsAt?.roundedToMilliseconds }
        if let imageID { result.imageID = imageID }
        if let tags { result.tags = tags }
        return result
    }
}
