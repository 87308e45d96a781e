public import Foundation

/// Who may see a bucket list.
public enum Visibility: String, CaseIterable, Codable, Hashable, Sendable {
    /// Everyone, guests included.
    case `public`
    /// Only its owner; for anyone else it does not exist.
    case `private`
}

/// The fields of a bucket list its owner chooses (validated by ``BucketListRules``).
public struct BucketListFields: Codable, Hashable, Sendable {
    /// 1–60 characters, trimmed; unique among the owner's lists, case-insensitively.
    public var name: String
    /// At most 500 characters.
    public var description: String
    /// Who may see the list.
    public var visibility: Visibility

    /// Creates the fields of a list (validate them with ``BucketListRules``).
    public init(name: String, description: String = "", visibility: Visibility) {
        self.name = name
        self.description = description
        self.visibility = visibility
    }

    /// The key names are compared by: lowercased.
    public var nameKey: String { name.lowercased() }
}

/// A named list of activities a user wants to do, with its counts.
public struct BucketList: Hashable, Sendable {
    /// The opaque id (`bkl_…`).
    public var id: String
    /// The user who owns it.
    public var ownerID: String
    /// The fields its owner chose.
    public var fields: BucketListFields
    /// Entries not yet completed, computed by the store.
    public var pendingCount: Int
    /// Entries completed, computed by the store.
    public var completedCount: Int
    /// When it was created.
    public var createdAt: Date
    /// When its fields last changed.
    public var updatedAt: Date

    /// Creates a list; a new one is empty.
    public init(
        id: String,
        ownerID: String,
        fields: BucketListFields,
        pendingCount: Int = 0,
        completedCount: Int = 0,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.ownerID = ownerID
        self.fields = fields
        self.pendingCount = pendingCount
        self.completedCount = completedCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// Whether everyone may see it.
    public var isPublic: Bool { fields.visibility == .public }

    /// Whether `viewerID` may see it: its owner always, others only when public.
    public func isVisible(to viewerID: String?) -> Bool { isPublic || viewerID == ownerID }
}

/// The fields a bucket-list update sets; `nil` leaves a field as it is.
public struct BucketListChanges: Hashable, Sendable {
    /// A new name.
    public var name: String?
    /// A new description.
    public var description: String?
    /// A new visibility.
    public var visibility: Visibility?

    /// Creates changes; `nil` fields stay as they are.
    public init(name: String? = nil, description: String? = nil, visibility: Visibility? = nil) {
        self.name = name
        self.description = description
        self.visibility = visibility
    }

    /// The fields after applying these changes.
    public func applied(to fields: BucketListFields) -> BucketListFields {
        var result = fields
        if let name { result.name = name }
        if let description { result.description = description }
        if let visibility { result.visibility = visibility }
        return result
    }
}

/// When and how an entry was completed.
public struct Completion: Hashable, Sendable {
    /// The day it was done, as the owner gave it.
    public var completedAt: Date
    /// At most 500 characters.
    public var note: String

    /// Creates a completion.
    public init(completedAt: Date, note: String = "") {
        self.completedAt = completedAt
        self.note = note
    }
}

/// An activity in a bucket list, with the activity as it is now.
public struct BucketListEntry: Hashable, Sendable {
    /// The list it belongs to.
    public var listID: String
    /// The activity as it is now.
    public var activity: Activity
    /// When it was added to the list.
    public var addedAt: Date
    /// `nil` while pending.
    public var completion: Completion?

    /// Creates an entry.
    public init(listID: String, activity: Activity, addedAt: Date, completion: Completion? = nil) {
        self.listID = listID
        self.activity = activity
        self.addedAt = addedAt
        self.completion = completion
    }
}

/// One side of a follow: the other user and when the follow began.
public struct Follow: Hashable, Sendable {
    /// The user followed (in a following list) or following (in a followers list).
    public var userID: String
    /// When the follow began.
    public var followedAt: Date

    /// Creates a follow.
    public init(userID: String, followedAt: Date) {
        self.userID = userID
        self.followedAt = followedAt
    }
}

/// A user's counters, as one viewer may see them.
public struct ProfileCounts: Hashable, Sendable {
    /// Activities the user posted.
    public var activityCount: Int
    /// Lists the viewer may see (all for the user, public ones for others).
    public var listCount: Int
    /// Distinct activities completed in those lists.
    public var completedActivityCount: Int
    /// Users following the user.
    public var followerCount: Int
    /// Users the user follows.
    public var followingCount: Int
    /// Whether the viewer follows the user.
    public var followedByViewer: Bool

    /// Creates counters (all zero by default).
    public init(
        activityCount: Int = 0,
        listCount: Int = 0,
        completedActivityCount: Int = 0,
        followerCount: Int = 0,
        followingCount: Int = 0,
        followedByViewer: Bool = false
    ) {
        self.activityCount = activityCount
        self.listCount = listCount
        self.completedActivityCount = completedActivityCount
        self.followerCount = followerCount
        self.followingCount = followingCount
        self.followedByViewer = followedByViewer
    }
}
