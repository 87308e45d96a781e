public import Foundation
public import SkiffDomain

/// The rules of activities, votes, comments, bucket lists and follows, as pure functions over values:
/// every ``BucketListStore`` backend loads what a function needs, calls it inside its transaction (or
/// critical section) and saves what it returns, so all backends decide alike.
///
/// Each function checks its rules in the order ``BucketListStore`` documents and throws the values in
/// ``BucketListStoreError``. The bucket-list functions are in `BucketListLifecycle+Lists.swift`.
public enum BucketListLifecycle {
    /// A decided change to a value: the value after it, and whether there is anything to save.
    public struct Change<Value: Hashable & Sendable>: Hashable, Sendable {
        /// The value after the change (as loaded when nothing changes).
        public var value: Value
        /// Whether the value changed: `false` means there is nothing to save.
        public var changed: Bool

        /// Creates a change.
        public init(_ value: Value, changed: Bool) {
            self.value = value
            self.changed = changed
        }
    }

    /// What a vote does to the stored vote row.
    public enum VoteWrite: Hashable, Sendable {
        /// Store `vote` (replacing the user's earlier one), cast at `castAt`.
        case cast(Vote, castAt: Date)
        /// Delete the user's vote.
        case clear
    }

    /// The result of ``setVote(_:previous:vote:now:)``.
    public struct VoteChange: Hashable, Sendable {
        /// The activity with its new counts.
        public var activity: Activity
        /// The change to the user's vote row, or `nil` when nothing changes.
        public var write: VoteWrite?

        /// Creates a vote change.
        public init(activity: Activity, write: VoteWrite?) {
            self.activity = activity
            self.write = write
        }
    }

    // MARK: Activities

    /// Decides a new activity.
    ///
    /// - Parameter activityIDTaken: Whether an activity with the activity's id exists.
    /// - Returns: The activity to insert: dates rounded to milliseconds, no votes, no comments.
    /// - Throws: `alreadyExists` (``BucketListStoreError/activityIDTaken``) if the id is taken.
    public static func createActivity(_ activity: Activity, activityIDTaken: Bool) throws(DomainError) -> Activity {
        guard !activityIDTaken else { throw BucketListStoreError.activityIDTaken }
        var stored = activity.rounded
        stored.upVotes = 0
        stored.downVotes = 0
        stored.commentCount = 0
        return stored
    }

    /// Decides an update of an activity's fields by `ownerID`.
    ///
    /// - Parameter activity: The activity as stored, or `nil` if there is none.
    /// - Returns: The updated activity, or the activity unchanged when the fields stay as they are.
    /// - Throws: `notFound`; `permissionDenied` if the owner is someone else.
    public static func updateActivity(
        _ activity: Activity?,
        ownerID: String,
        changes: ActivityChanges,
        now: Date
    ) throws(DomainError) -> Change<Activity> {
        var activity = try owned(activity, ownerID: ownerID)
        let fields = changes.applied(to: activity.fields)
        guard fields != activity.fields else { return Change(activity, changed: false) }
        activity.fields = fields
        activity.updatedAt = now.roundedToMilliseconds
        return Change(activity, changed: true)
    }

    /// Decides the deletion of an activity by `ownerID` (its votes, comments and entries go with it).
    ///
    /// - Parameter activity: The activity as stored, or `nil` if there is none.
    /// - Throws: `notFound`; `permissionDenied` if the owner is someone else.
    public static func deleteActivity(_ activity: Activity?, ownerID: String) throws(DomainError) {
        _ = try owned(activity, ownerID: ownerID)
    }

    // MARK: Votes

    /// Decides a user's vote (`.noVote` clears it).
    ///
    /// Setting the vote the user already has changes nothing, so it keeps its original cast time.
    ///
    /// - Parameters:
    ///   - activity: The activity as stored, or `nil` if there is none.
    ///   - previous: The user's stored vote (`.noVote` if none).
    ///   - vote: The vote asked for.
    /// - Returns: The activity with its new counts, and the change to the user's vote row.
    /// - Throws: `notFound` for an unknown activity.
    public static func setVote(
        _ activity: Activity?,
        previous: Vote,
        vote: Vote,
        now: Date
    ) throws(DomainError) -> VoteChange {
        guard var activity else { throw BucketListStoreError.activityNotFound }
        guard previous != vote else { return VoteChange(activity: activity, write: nil) }
        switch previous {
        case .up: activity.upVotes -= 1
        case .down: activity.downVotes -= 1
        case .noVote: break
        }
        switch vote {
        case .up: activity.upVotes += 1
        case .down: activity.downVotes += 1
        case .noVote: break
        }
        let write: VoteWrite = vote == .noVote ? .clear : .cast(vote, castAt: now.roundedToMilliseconds)
        return VoteChange(activity: activity, write: write)
    }

    // MARK: Comments

    /// Decides a new comment (the store counts it on its activity).
    ///
    /// - Parameters:
    ///   - activityExists: Whether the comment's activity exists.
    ///   - commentIDTaken: Whether a comment with the comment's id exists.
    ///   - latestCommentAt: The latest `createdAt` of the activity's comments so far, if any.
    /// - Returns: The comment to insert, its date rounded to milliseconds and at least a millisecond after
    ///   `latestCommentAt`: comments posted one after the other list in that order ("oldest first") even
    ///   within one millisecond, where ties would otherwise fall to their random ids.
    /// - Throws: `notFound` for an unknown activity; `alreadyExists` if the id is taken.
    public static func addComment(
        _ comment: Comment,
        activityExists: Bool,
        commentIDTaken: Bool,
        latestCommentAt: Date? = nil
    ) throws(DomainError) -> Comment {
        guard activityExists else { throw BucketListStoreError.activityNotFound }
        guard !commentIDTaken else { throw BucketListStoreError.commentIDTaken }
        var stored = comment
        stored.createdAt = comment.createdAt.roundedToMilliseconds
        if let latest = latestCommentAt?.roundedToMilliseconds, stored.createdAt <= latest {
            stored.createdAt = latest.addingTimeInterval(0.001).roundedToMilliseconds
        }
        return stored
    }

    /// Decides the deletion of a comment by `userID` (the store uncounts it on its activity).
    ///
    /// - Parameters:
    ///   - comment: The comment as stored, or `nil` if there is none.
    ///   - activityOwnerID: Who posted the comment's activity, if it still exists.
    /// - Throws: `notFound`; `permissionDenied` unless `userID` wrote the comment or posted its activity.
    public static func deleteComment(
        _ comment: Comment?,
        activityOwnerID: String?,
        by userID: String
    ) throws(DomainError) {
        guard let comment else { throw BucketListStoreError.commentNotFound }
        guard comment.authorID == userID || activityOwnerID == userID else {
            throw BucketListStoreError.notCommentAuthor
        }
    }

    // MARK: Follows

    /// Decides a follow: following again keeps the first time.
    ///
    /// - Parameter since: When `followerID` started following `followeeID`, if they do.
    /// - Returns: The follow, and whether it is new (to insert).
    /// - Precondition: The ids differ.
    public static func follow(
        followerID: String,
        followeeID: String,
        since: Date?,
        now: Date
    ) -> Change<Follow> {
        precondition(followerID != followeeID, "A user cannot follow themselves")
        if let since { return Change(Follow(userID: followeeID, followedAt: since), changed: false) }
        return Change(Follow(userID: followeeID, followedAt: now.roundedToMilliseconds), changed: true)
    }

    // MARK: Helpers

    private static func owned(_ activity: Activity?, ownerID: String) throws(DomainError) -> Activity {
        guard let activity else { throw BucketListStoreError.activityNotFound }
        guard activity.ownerID == ownerID else { throw BucketListStoreError.notActivityOwner }
        return activity
    }
}
