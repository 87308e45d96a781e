public import Foundation
public import SkiffDomain

/// Persistence for the BucketList service: one method per use case, each atomic.
///
/// Every backend (``InMemoryBucketListStore``, the SQLite store, the PostgreSQL store) must behave exactly
/// alike; the shared conformance suite in `Tests/SkiffStorageTests` proves it.
///
/// ## Implementation requirements
/// - Each method is one atomic step; concurrent calls behave as if they ran one after another. In
///   particular vote counts always equal the votes stored, however many users vote at once.
/// - Failures are thrown as ``SkiffDomain/DomainError`` with the values in ``BucketListStoreError``,
///   checked in the order documented here; no backend type crosses this protocol.
/// - Dates are kept at millisecond precision; values read back are rounded.
/// - Inputs are validated by ``BucketListRules``. Existence, ownership, uniqueness, limits and idempotency
///   (same vote, repeated follow) are decided by ``BucketListLifecycle``: each write loads what its function
///   needs, calls it inside the transaction and saves what it returns, so a backend only stores and queries.
/// - Ownership of a bucket list: a caller who is not the owner gets `notFound`
///   (``BucketListStoreError/listNotFound``) for a private list and `permissionDenied` for a public one
///   (``BucketListLifecycle/ownedList(_:ownerID:)``).
/// - Nearby and trending results are defined by `ActivityRanking`; each backend answers from its own
///   indexes (nearby: a box on coordinates, exact distance, order, cursor and limit, walked outwards a
///   radius at a time — and for popularity a net-vote level at a time — when the circle holds many
///   activities, so a page costs about what it returns; trending: activities walked by their stored bound,
///   ``TrendingScore/raisedBound(_:upVoteAt:)``, scored exactly until no one left can enter the top). Lists
///   are paged with `BucketListPaging`.
public protocol BucketListStore: Sendable {
    // MARK: Activities

    /// Stores a new activity (its counts are ignored and start at 0).
    ///
    /// - Throws: `alreadyExists` if the id is taken.
    func createActivity(_ activity: Activity) async throws -> Activity

    /// The activity with this id, or `nil`.
    func activity(id: String) async throws -> Activity?

    /// Applies changes to an activity of `ownerID`.
    ///
    /// - Throws: `notFound`; `permissionDenied` if the owner is someone else.
    func updateActivity(id: String, ownerID: String, changes: ActivityChanges, now: Date) async throws -> Activity

    /// Deletes an activity of `ownerID` with its votes and comments, and removes it from every bucket list.
    ///
    /// - Throws: `notFound`; `permissionDenied` if the owner is someone else.
    func deleteActivity(id: String, ownerID: String) async throws

    /// Activities within the query's circle, in its order, keyset-paged.
    ///
    /// - Throws: `invalidArgument` for a page token that is malformed or belongs to another query.
    func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit>

    /// The trending activities: see ``TrendingScore`` and ``TrendingQuery``.
    func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit]

    // MARK: Votes

    /// Sets (or, with `.noVote`, clears) a user's vote and returns the activity with its new counts.
    ///
    /// Setting the same vote again keeps its original cast time.
    ///
    /// - Throws: `notFound` for an unknown activity.
    func setVote(activityID: String, userID: String, vote: Vote, now: Date) async throws -> Activity

    /// A user's votes on the given activities; activities without one are absent.
    func votes(userID: String, activityIDs: [String]) async throws -> [String: Vote]

    // MARK: Comments

    /// Stores a comment and counts it on its activity.
    ///
    /// - Throws: `notFound` for an unknown activity; `alreadyExists` if the id is taken.
    func addComment(_ comment: Comment) async throws -> Comment

    /// An activity's comments, oldest first, then id ascending.
    ///
    /// - Throws: `notFound` for an unknown activity; `invalidArgument` for a bad page token.
    func comments(activityID: String, page: PageRequest) async throws -> Page<Comment>

    /// Deletes a comment, if `userID` wrote it or posted its activity.
    ///
    /// - Throws: `notFound`; `permissionDenied` for anyone else.
    func deleteComment(id: String, by userID: String) async throws

    // MARK: Bucket lists

    /// Stores a new bucket list.
    ///
    /// - Throws: `alreadyExists` if the owner has a list with the same name (case-insensitively), then
    ///   `resourceExhausted` if the owner already has `limit` lists; `alreadyExists` if the id is taken.
    func createList(_ list: BucketList, limit: Int) async throws -> BucketList

    /// The bucket list with this id, with its counts, or `nil`.
    func list(id: String) async throws -> BucketList?

    /// Changes a bucket list of `ownerID`.
    ///
    /// - Throws: `notFound` / `permissionDenied` (see the ownership rule); `alreadyExists` if the new
    ///   name is taken by another of the owner's lists.
    func updateList(id: String, ownerID: String, changes: BucketListChanges, now: Date) async throws -> BucketList

    /// Deletes a bucket list of `ownerID` and its entries.
    ///
    /// - Throws: `notFound` / `permissionDenied` (see the ownership rule).
    func deleteList(id: String, ownerID: String) async throws

    /// An owner's lists, oldest first then id ascending; private ones only with `includePrivate`.
    func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList>

    /// Adds an activity, pending, to a list of `ownerID`.
    ///
    /// - Throws: `notFound` / `permissionDenied` for the list (see the ownership rule); `notFound` for an
    ///   unknown activity; `alreadyExists` if it is in the list; `resourceExhausted` if the list holds
    ///   `limit` entries.
    func addEntry(
        listID: String,
        ownerID: String,
        activityID: String,
        now: Date,
        limit: Int
    ) async throws
        -> BucketListEntry

    /// Removes an activity from a list of `ownerID`.
    ///
    /// - Throws: `notFound` / `permissionDenied` for the list; `notFound` if the activity is not in it.
    func removeEntry(listID: String, ownerID: String, activityID: String) async throws

    /// Marks an entry completed (replacing an earlier completion) or, with `nil`, pending.
    ///
    /// - Throws: `notFound` / `permissionDenied` for the list; `notFound` if the activity is not in it.
    func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws
        -> BucketListEntry

    /// A list's entries in the order they were added (then activity id ascending).
    ///
    /// - Throws: `notFound` for an unknown list; `invalidArgument` for a bad page token.
    func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry>

    // MARK: Follows

    /// Makes `followerID` follow `followeeID`; following again keeps the first time.
    ///
    /// - Precondition: the ids differ.
    func follow(followerID: String, followeeID: String, now: Date) async throws -> Follow

    /// Stops a follow; stopping one that does not exist is not an error.
    func unfollow(followerID: String, followeeID: String) async throws

    /// The users following `userID`, most recent first, then id descending.
    func followers(userID: String, page: PageRequest) async throws -> Page<Follow>

    /// The users `userID` follows, most recent first, then id descending.
    func following(userID: String, page: PageRequest) async throws -> Page<Follow>

    /// A user's counters as `viewerID` may see them (private lists count only for the user).
    func profile(userID: String, viewerID: String?) async throws -> ProfileCounts
}

/// The errors every ``BucketListStore`` throws, so that all backends use the same codes and messages.
public enum BucketListStoreError {
    public static let activityNotFound = DomainError(.notFound, "The activity does not exist.")
    public static let notActivityOwner = DomainError(
        .permissionDenied,
        "Only the user who posted the activity can change or delete it."
    )
    public static let activityIDTaken = DomainError(.alreadyExists, "An activity with this id already exists.")
    public static let commentNotFound = DomainError(.notFound, "The comment does not exist.")
    public static let notCommentAuthor = DomainError(
        .permissionDenied,
        "Only the comment's author or the activity's poster can delete a comment."
    )
    public static let commentIDTaken = DomainError(.alreadyExists, "A comment with this id already exists.")
    public static let listNotFound = DomainError(.notFound, "The bucket list does not exist.")
    public static let notListOwner = DomainError(.permissionDenied, "Only the bucket list's owner can change it.")
    public static let listIDTaken = DomainError(.alreadyExists, "A bucket list with this id already exists.")
    public static let listNameTaken = DomainError(
        .alreadyExists,
        "You already have a bucket list with this name: choose another name."
    )
    public static let listLimit = DomainError(
        .resourceExhausted,
        "You have \(BucketListRules.maximumListsPerUser) bucket lists, the most allowed: delete one first."
    )
    public static let entryExists = DomainError(.alreadyExists, "The activity is already in this bucket list.")
    public static let entryNotFound = DomainError(.notFound, "The activity is not in this bucket list.")
    public static let entryLimit = DomainError(
        .resourceExhausted,
        "The bucket list holds \(BucketListRules.maximumEntriesPerList) activities, the most allowed: remove some first."
    )

    /// The error for a caller who is not the owner of `list`: `notFound` if it is private (its existence is
    /// not revealed), `permissionDenied` if it is public.
    public static func notOwner(of list: BucketList) -> DomainError {
        list.isPublic ? notListOwner : listNotFound
    }
}
