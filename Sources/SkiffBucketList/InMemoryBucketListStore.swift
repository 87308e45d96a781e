import Foundation
import SkiffDomain
import Synchronization

/// A ``BucketListStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one `Mutex`, and every method runs in one critical section without suspending,
/// so each use case is atomic as a database transaction would be (vote counts included). Nearby and
/// trending scan every activity through `ActivityRanking`, the same code that decides SQLite's results.
public final class InMemoryBucketListStore: BucketListStore {
    private struct StoredVote {
        var vote: Vote
        var castAt: Date
    }

    private struct StoredEntry {
        var addedAt: Date
        var completion: Completion?
    }

    private struct State {
        var activities: [String: Activity] = [:]
        /// Votes per activity, then per user.
        var votes: [String: [String: StoredVote]] = [:]
        var comments: [String: Comment] = [:]
        var lists: [String: BucketList] = [:]
        /// Entries per list, then per activity.
        var entries: [String: [String: StoredEntry]] = [:]
        /// Follow times per follower, then per followee.
        var follows: [String: [String: Date]] = [:]

        func withCounts(_ list: BucketList) -> BucketList {
            var list = list
            let entries = entries[list.id] ?? [:]
            list.completedCount = entries.values.filter { $0.completion != nil }.count
            list.pendingCount = entries.count - list.completedCount
            return list
        }

        func ownedList(_ id: String, ownerID: String) throws(DomainError) -> BucketList {
            guard let list = lists[id] else { throw BucketListStoreError.listNotFound }
            guard list.ownerID == ownerID else { throw BucketListStoreError.notOwner(of: list) }
            return list
        }

        func entry(listID: String, activityID: String, _ stored: StoredEntry) -> BucketListEntry? {
            guard let activity = activities[activityID] else { return nil }
            return BucketListEntry(
                listID: listID,
                activity: activity,
                addedAt: stored.addedAt,
                completion: stored.completion
            )
        }
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    // MARK: Activities

    public func createActivity(_ activity: Activity) async throws -> Activity {
        var stored = activity.rounded
        stored.upVotes = 0
        stored.downVotes = 0
        stored.commentCount = 0
        let value = stored
        return try state.withLock { (state) throws(DomainError) -> Activity in
            guard state.activities[value.id] == nil else { throw BucketListStoreError.activityIDTaken }
            state.activities[value.id] = value
            return value
        }
    }

    public func activity(id: String) async throws -> Activity? {
        state.withLock { $0.activities[id] }
    }

    public func updateActivity(
        id: String,
        ownerID: String,
        changes: ActivityChanges,
        now: Date
    ) async throws
        -> Activity
    {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Activity in
            guard var activity = state.activities[id] else { throw BucketListStoreError.activityNotFound }
            guard activity.ownerID == ownerID else { throw BucketListStoreError.notActivityOwner }
            let fields = changes.applied(to: activity.fields)
            guard fields != activity.fields else { return activity }
            activity.fields = fields
            activity.updatedAt = now
            state.activities[id] = activity
            return activity
        }
    }

    public func deleteActivity(id: String, ownerID: String) async throws {
        try state.withLock { (state) throws(DomainError) in
            guard let activity = state.activities[id] else { throw BucketListStoreError.activityNotFound }
            guard activity.ownerID == ownerID else { throw BucketListStoreError.notActivityOwner }
            state.activities[id] = nil
            state.votes[id] = nil
            state.comments = state.comments.filter { $0.value.activityID != id }
            for listID in state.entries.keys { state.entries[listID]?[id] = nil }
        }
    }

    public func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit> {
        _ = try ActivityRanking.nearbyCursor(page, query)
        let activities = state.withLock { Array($0.activities.values) }
        return try ActivityRanking.nearbyPage(activities, query, page: page)
    }

    public func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit] {
        let candidates: [(activity: Activity, votes: [CastVote])] = state.withLock { state in
            state.votes.compactMap { activityID, votes in
                guard let activity = state.activities[activityID] else { return nil }
                let cast = votes.map { CastVote(userID: $0.key, vote: $0.value.vote, castAt: $0.value.castAt) }
                return (activity, cast)
            }
        }
        return ActivityRanking.trending(candidates, query)
    }

    // MARK: Votes

    public func setVote(activityID: String, userID: String, vote: Vote, now: Date) async throws -> Activity {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Activity in
            guard var activity = state.activities[activityID] else { throw BucketListStoreError.activityNotFound }
            let previous = state.votes[activityID]?[userID]
            if previous?.vote == vote { return activity }
            switch previous?.vote {
            case .up: activity.upVotes -= 1
            case .down: activity.downVotes -= 1
            case .noVote, nil: break
            }
            switch vote {
            case .up: activity.upVotes += 1
            case .down: activity.downVotes += 1
            case .noVote: break
            }
            state.votes[activityID, default: [:]][userID] = vote == .noVote ? nil : StoredVote(vote: vote, castAt: now)
            state.activities[activityID] = activity
            return activity
        }
    }

    public func votes(userID: String, activityIDs: [String]) async throws -> [String: Vote] {
        state.withLock { state in
            var result: [String: Vote] = [:]
            for id in activityIDs {
                if let vote = state.votes[id]?[userID]?.vote { result[id] = vote }
            }
            return result
        }
    }

    // MARK: Comments

    public func addComment(_ comment: Comment) async throws -> Comment {
        var stored = comment
        stored.createdAt = comment.createdAt.roundedToMilliseconds
        let value = stored
        return try state.withLock { (state) throws(DomainError) -> Comment in
            guard state.activities[value.activityID] != nil else { throw BucketListStoreError.activityNotFound }
            guard state.comments[value.id] == nil else { throw BucketListStoreError.commentIDTaken }
            state.comments[value.id] = value
            state.activities[value.activityID]?.commentCount += 1
            return value
        }
    }

    public func comments(activityID: String, page: PageRequest) async throws -> Page<Comment> {
        let comments = try state.withLock { (state) throws(DomainError) -> [Comment] in
            guard state.activities[activityID] != nil else { throw BucketListStoreError.activityNotFound }
            return state.comments.values.filter { $0.activityID == activityID }
        }
        return try BucketListPaging.page(comments, .comments, scope: activityID, page: page) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws {
        try state.withLock { (state) throws(DomainError) in
            guard let comment = state.comments[id] else { throw BucketListStoreError.commentNotFound }
            let host = state.activities[comment.activityID]?.ownerID
            guard comment.authorID == userID || host == userID else { throw BucketListStoreError.notCommentAuthor }
            state.comments[id] = nil
            state.activities[comment.activityID]?.commentCount -= 1
        }
    }

    // MARK: Bucket lists

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        var stored = list
        stored.createdAt = list.createdAt.roundedToMilliseconds
        stored.updatedAt = list.updatedAt.roundedToMilliseconds
        stored.pendingCount = 0
        stored.completedCount = 0
        let value = stored
        return try state.withLock { (state) throws(DomainError) -> BucketList in
            let owned = state.lists.values.filter { $0.ownerID == value.ownerID }
            guard !owned.contains(where: { $0.fields.nameKey == value.fields.nameKey }) else {
                throw BucketListStoreError.listNameTaken
            }
            guard owned.count < limit else { throw BucketListStoreError.listLimit }
            guard state.lists[value.id] == nil else { throw BucketListStoreError.listIDTaken }
            state.lists[value.id] = value
            return value
        }
    }

    public func list(id: String) async throws -> BucketList? {
        state.withLock { state in state.lists[id].map { state.withCounts($0) } }
    }

    public func updateList(
        id: String,
        ownerID: String,
        changes: BucketListChanges,
        now: Date
    ) async throws
        -> BucketList
    {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> BucketList in
            var list = try state.ownedList(id, ownerID: ownerID)
            let fields = changes.applied(to: list.fields)
            guard fields != list.fields else { return state.withCounts(list) }
            let taken = state.lists.values.contains {
                $0.ownerID == ownerID && $0.id != id && $0.fields.nameKey == fields.nameKey
            }
            guard !taken else { throw BucketListStoreError.listNameTaken }
            list.fields = fields
            list.updatedAt = now
            state.lists[id] = list
            return state.withCounts(list)
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try state.withLock { (state) throws(DomainError) in
            _ = try state.ownedList(id, ownerID: ownerID)
            state.lists[id] = nil
            state.entries[id] = nil
        }
    }

    public func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList> {
        let lists = state.withLock { state in
            state.lists.values.filter { $0.ownerID == ownerID && (includePrivate || $0.isPublic) }
                .map { state.withCounts($0) }
        }
        let scope = ownerID + (includePrivate ? "|all" : "|public")
        return try BucketListPaging.page(lists, .lists, scope: scope, page: page) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    public func addEntry(
        listID: String,
        ownerID: String,
        activityID: String,
        now: Date,
        limit: Int
    ) async throws
        -> BucketListEntry
    {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> BucketListEntry in
            _ = try state.ownedList(listID, ownerID: ownerID)
            guard let activity = state.activities[activityID] else { throw BucketListStoreError.activityNotFound }
            let entries = state.entries[listID] ?? [:]
            guard entries[activityID] == nil else { throw BucketListStoreError.entryExists }
            guard entries.count < limit else { throw BucketListStoreError.entryLimit }
            state.entries[listID, default: [:]][activityID] = StoredEntry(addedAt: now)
            return BucketListEntry(listID: listID, activity: activity, addedAt: now)
        }
    }

    public func removeEntry(listID: String, ownerID: String, activityID: String) async throws {
        try state.withLock { (state) throws(DomainError) in
            _ = try state.ownedList(listID, ownerID: ownerID)
            guard state.entries[listID]?[activityID] != nil else { throw BucketListStoreError.entryNotFound }
            state.entries[listID]?[activityID] = nil
        }
    }

    public func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws -> BucketListEntry {
        let completion = completion.map { Completion(completedAt: $0.completedAt.roundedToMilliseconds, note: $0.note) }
        return try state.withLock { (state) throws(DomainError) -> BucketListEntry in
            _ = try state.ownedList(listID, ownerID: ownerID)
            guard var stored = state.entries[listID]?[activityID],
                let activity = state.activities[activityID]
            else { throw BucketListStoreError.entryNotFound }
            stored.completion = completion
            state.entries[listID]?[activityID] = stored
            return BucketListEntry(listID: listID, activity: activity, addedAt: stored.addedAt, completion: completion)
        }
    }

    public func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry> {
        let entries = try state.withLock { (state) throws(DomainError) -> [BucketListEntry] in
            guard state.lists[listID] != nil else { throw BucketListStoreError.listNotFound }
            return (state.entries[listID] ?? [:]).compactMap {
                state.entry(listID: listID, activityID: $0.key, $0.value)
            }
        }
        return try BucketListPaging.page(entries, .entries, scope: listID, page: page) {
            ($0.addedAt.millisecondsSince1970, $0.activity.id)
        }
    }

    // MARK: Follows

    public func follow(followerID: String, followeeID: String, now: Date) async throws -> Follow {
        precondition(followerID != followeeID, "A user cannot follow themselves")
        let now = now.roundedToMilliseconds
        return state.withLock { state in
            if let since = state.follows[followerID]?[followeeID] {
                return Follow(userID: followeeID, followedAt: since)
            }
            state.follows[followerID, default: [:]][followeeID] = now
            return Follow(userID: followeeID, followedAt: now)
        }
    }

    public func unfollow(followerID: String, followeeID: String) async throws {
        state.withLock { _ = $0.follows[followerID]?.removeValue(forKey: followeeID) }
    }

    public func followers(userID: String, page: PageRequest) async throws -> Page<Follow> {
        let follows = state.withLock { state in
            state.follows.compactMap { follower, followees in
                followees[userID].map { Follow(userID: follower, followedAt: $0) }
            }
        }
        return try BucketListPaging.page(follows, .followers, scope: userID, page: page) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    public func following(userID: String, page: PageRequest) async throws -> Page<Follow> {
        let follows = state.withLock { state in
            (state.follows[userID] ?? [:]).map { Follow(userID: $0.key, followedAt: $0.value) }
        }
        return try BucketListPaging.page(follows, .following, scope: userID, page: page) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    public func profile(userID: String, viewerID: String?) async throws -> ProfileCounts {
        state.withLock { state in
            let lists = state.lists.values.filter { $0.ownerID == userID && $0.isVisible(to: viewerID) }
            var completed = Set<String>()
            for list in lists {
                for (activityID, entry) in state.entries[list.id] ?? [:] where entry.completion != nil {
                    completed.insert(activityID)
                }
            }
            return ProfileCounts(
                activityCount: state.activities.values.filter { $0.ownerID == userID }.count,
                listCount: lists.count,
                completedActivityCount: completed.count,
                followerCount: state.follows.values.filter { $0[userID] != nil }.count,
                followingCount: state.follows[userID]?.count ?? 0,
                followedByViewer: viewerID.map { state.follows[$0]?[userID] != nil } ?? false
            )
        }
    }
}
