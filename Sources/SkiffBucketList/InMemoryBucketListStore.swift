import Foundation
import SkiffDomain

/// A ``BucketListStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one reader–writer lock (reads, nearby and trending included, run side by side; a
/// write runs alone), and every method runs in one critical section without suspending,
/// so each use case is atomic as a database transaction would be (vote counts included). Writes load what
/// ``BucketListLifecycle`` needs, let it decide and save what it returns. Nearby reads the activities in the
/// circle's grid cells and trending walks the activities by trend bound, both through `ActivityRanking`,
/// the same code that decides SQLite's results.
public final class InMemoryBucketListStore: BucketListStore {
    private struct StoredVote {
        var vote: Vote
        var castAt: Date
    }

    private struct StoredEntry {
        var addedAt: Date
        var completion: Completion?
    }

    /// An activity's place in the trending walk: its stored bound, then its id.
    private struct TrendKey: Sendable {
        var bound: Double
        var id: String
    }

    private struct State {
        private(set) var activities: [String: Activity] = [:]
        /// The activities' places, for nearby and nearby-trending candidates.
        var grid = GridIndex()
        /// Each activity's trending bound (``TrendingScore/raisedBound(_:upVoteAt:)``) …
        var trendBounds: [String: Double] = [:]
        /// … and the activities with one, highest bound first.
        var byTrend = SortedKeys<TrendKey> { a, b in
            a.bound != b.bound ? a.bound > b.bound : a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
        }

        /// Stores an activity, keeping the grid in step.
        mutating func put(_ activity: Activity) {
            if let old = activities[activity.id] {
                let point = old.fields.place.point
                grid.remove(old.id, latitude: point.latitude, longitude: point.longitude)
            }
            activities[activity.id] = activity
            let point = activity.fields.place.point
            grid.insert(activity.id, latitude: point.latitude, longitude: point.longitude)
        }

        /// Forgets an activity and its place in the indexes.
        mutating func removeActivity(_ id: String) {
            guard let old = activities.removeValue(forKey: id) else { return }
            let point = old.fields.place.point
            grid.remove(id, latitude: point.latitude, longitude: point.longitude)
            if let bound = trendBounds.removeValue(forKey: id) {
                byTrend.remove(TrendKey(bound: bound, id: id)) { $0.id == id }
            }
            latestCommentAt[id] = nil
        }

        /// Changes an activity's comment count.
        mutating func countComments(of id: String, by change: Int) {
            activities[id]?.commentCount += change
        }

        /// Raises an activity's trending bound for an up-vote cast at `date`.
        mutating func raiseTrendBound(_ id: String, upVoteAt date: Date) {
            let old = trendBounds[id]
            if let old { byTrend.remove(TrendKey(bound: old, id: id)) { $0.id == id } }
            let bound = TrendingScore.raisedBound(old, upVoteAt: date)
            trendBounds[id] = bound
            byTrend.insert(TrendKey(bound: bound, id: id))
        }
        /// Votes per activity, then per user.
        var votes: [String: [String: StoredVote]] = [:]
        var comments: [String: Comment] = [:]
        /// The latest `createdAt` of each activity's comments (so that new ones sort after them).
        var latestCommentAt: [String: Date] = [:]
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

    private let state = ReadWriteLock(State())

    /// Creates an empty store.
    public init() {}

    // MARK: Activities

    public func createActivity(_ activity: Activity) async throws -> Activity {
        try state.withWriteLock { (state) throws(DomainError) -> Activity in
            let stored = try BucketListLifecycle.createActivity(
                activity,
                activityIDTaken: state.activities[activity.id] != nil
            )
            state.put(stored)
            return stored
        }
    }

    public func activity(id: String) async throws -> Activity? {
        state.withReadLock { $0.activities[id] }
    }

    public func updateActivity(
        id: String,
        ownerID: String,
        changes: ActivityChanges,
        now: Date
    ) async throws
        -> Activity
    {
        try state.withWriteLock { (state) throws(DomainError) -> Activity in
            let change = try BucketListLifecycle.updateActivity(
                state.activities[id],
                ownerID: ownerID,
                changes: changes,
                now: now
            )
            if change.changed { state.put(change.value) }
            return change.value
        }
    }

    public func deleteActivity(id: String, ownerID: String) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            try BucketListLifecycle.deleteActivity(state.activities[id], ownerID: ownerID)
            state.removeActivity(id)
            state.votes[id] = nil
            state.comments = state.comments.filter { $0.value.activityID != id }
            for listID in state.entries.keys { state.entries[listID]?[id] = nil }
        }
    }

    public func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit> {
        _ = try ActivityRanking.nearbyCursor(page, query)
        let activities = state.withReadLock { state in
            let box = Geo.boundingBox(center: query.center, radiusKm: query.radiusKm)
            guard let ids = state.grid.documents(latitude: box.latitude, longitude: box.longitude) else {
                return Array(state.activities.values)
            }
            return ids.compactMap { state.activities[$0] }
        }
        return try ActivityRanking.nearbyPage(activities, query, page: page)
    }

    public func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit] {
        state.withReadLock { state in
            let inCircle = query.center.flatMap { center in
                let box = Geo.boundingBox(center: center, radiusKm: query.radiusKm)
                return state.grid.documents(latitude: box.latitude, longitude: box.longitude)
            }
            var position = state.byTrend.start
            return ActivityRanking.trendingTop(query) {
                var batch: [(id: String, bound: Double)] = []
                while !state.byTrend.isEnd(position), batch.count < 64 {
                    let key = state.byTrend[position]
                    position = state.byTrend.next(position)
                    if let inCircle, !inCircle.contains(key.id) { continue }
                    batch.append((key.id, key.bound))
                }
                return batch
            } score: { ids in
                ids.compactMap { id -> TrendingHit? in
                    guard let activity = state.activities[id] else { return nil }
                    let votes = (state.votes[id] ?? [:]).map {
                        CastVote(userID: $0.key, vote: $0.value.vote, castAt: $0.value.castAt)
                    }
                    return ActivityRanking.trendingHit(activity, votes: votes, query)
                }
            }
        }
    }

    // MARK: Votes

    public func setVote(activityID: String, userID: String, vote: Vote, now: Date) async throws -> Activity {
        try state.withWriteLock { (state) throws(DomainError) -> Activity in
            let change = try BucketListLifecycle.setVote(
                state.activities[activityID],
                previous: state.votes[activityID]?[userID]?.vote ?? .noVote,
                vote: vote,
                now: now
            )
            switch change.write {
            case nil: return change.activity
            case .clear: state.votes[activityID, default: [:]][userID] = nil
            case .cast(let vote, let castAt):
                state.votes[activityID, default: [:]][userID] = StoredVote(vote: vote, castAt: castAt)
                if vote == .up { state.raiseTrendBound(activityID, upVoteAt: castAt) }
            }
            state.put(change.activity)
            return change.activity
        }
    }

    public func votes(userID: String, activityIDs: [String]) async throws -> [String: Vote] {
        state.withReadLock { state in
            var result: [String: Vote] = [:]
            for id in activityIDs {
                if let vote = state.votes[id]?[userID]?.vote { result[id] = vote }
            }
            return result
        }
    }

    // MARK: Comments

    public func addComment(_ comment: Comment) async throws -> Comment {
        try state.withWriteLock { (state) throws(DomainError) -> Comment in
            let stored = try BucketListLifecycle.addComment(
                comment,
                activityExists: state.activities[comment.activityID] != nil,
                commentIDTaken: state.comments[comment.id] != nil,
                latestCommentAt: state.latestCommentAt[comment.activityID]
            )
            state.comments[stored.id] = stored
            state.latestCommentAt[stored.activityID] = max(
                stored.createdAt,
                state.latestCommentAt[stored.activityID] ?? stored.createdAt
            )
            state.countComments(of: stored.activityID, by: 1)
            return stored
        }
    }

    public func comments(activityID: String, page: PageRequest) async throws -> Page<Comment> {
        let comments = try state.withReadLock { (state) throws(DomainError) -> [Comment] in
            guard state.activities[activityID] != nil else { throw BucketListStoreError.activityNotFound }
            return state.comments.values.filter { $0.activityID == activityID }
        }
        return try BucketListPaging.page(comments, .comments, scope: activityID, page: page) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            let comment = state.comments[id]
            try BucketListLifecycle.deleteComment(
                comment,
                activityOwnerID: comment.flatMap { state.activities[$0.activityID]?.ownerID },
                by: userID
            )
            state.comments[id] = nil
            if let comment { state.countComments(of: comment.activityID, by: -1) }
        }
    }

    // MARK: Bucket lists

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        try state.withWriteLock { (state) throws(DomainError) -> BucketList in
            let stored = try BucketListLifecycle.createList(
                list,
                ownedNameKeys: state.lists.values.filter { $0.ownerID == list.ownerID }.map(\.fields.nameKey),
                limit: limit,
                listIDTaken: state.lists[list.id] != nil
            )
            state.lists[stored.id] = stored
            return stored
        }
    }

    public func list(id: String) async throws -> BucketList? {
        state.withReadLock { state in state.lists[id].map { state.withCounts($0) } }
    }

    public func updateList(
        id: String,
        ownerID: String,
        changes: BucketListChanges,
        now: Date
    ) async throws
        -> BucketList
    {
        try state.withWriteLock { (state) throws(DomainError) -> BucketList in
            let change = try BucketListLifecycle.updateList(
                state.lists[id],
                ownerID: ownerID,
                changes: changes,
                otherNameKeys: state.lists.values.filter { $0.ownerID == ownerID && $0.id != id }.map(\.fields.nameKey),
                now: now
            )
            if change.changed { state.lists[id] = change.value }
            return state.withCounts(change.value)
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            _ = try BucketListLifecycle.ownedList(state.lists[id], ownerID: ownerID)
            state.lists[id] = nil
            state.entries[id] = nil
        }
    }

    public func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList> {
        let lists = state.withReadLock { state in
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
        try state.withWriteLock { (state) throws(DomainError) -> BucketListEntry in
            let entries = state.entries[listID] ?? [:]
            let entry = try BucketListLifecycle.addEntry(
                list: state.lists[listID],
                ownerID: ownerID,
                activity: state.activities[activityID],
                entryExists: entries[activityID] != nil,
                entryCount: entries.count,
                limit: limit,
                now: now
            )
            state.entries[listID, default: [:]][activityID] = StoredEntry(addedAt: entry.addedAt)
            return entry
        }
    }

    public func removeEntry(listID: String, ownerID: String, activityID: String) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            try BucketListLifecycle.removeEntry(
                list: state.lists[listID],
                ownerID: ownerID,
                entryExists: state.entries[listID]?[activityID] != nil
            )
            state.entries[listID]?[activityID] = nil
        }
    }

    public func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws -> BucketListEntry {
        try state.withWriteLock { (state) throws(DomainError) -> BucketListEntry in
            let entry = try BucketListLifecycle.setCompletion(
                list: state.lists[listID],
                ownerID: ownerID,
                entry: state.entries[listID]?[activityID].flatMap {
                    state.entry(listID: listID, activityID: activityID, $0)
                },
                completion: completion
            )
            state.entries[listID]?[activityID]?.completion = entry.completion
            return entry
        }
    }

    public func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry> {
        let entries = try state.withReadLock { (state) throws(DomainError) -> [BucketListEntry] in
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
        state.withWriteLock { state in
            let change = BucketListLifecycle.follow(
                followerID: followerID,
                followeeID: followeeID,
                since: state.follows[followerID]?[followeeID],
                now: now
            )
            if change.changed { state.follows[followerID, default: [:]][followeeID] = change.value.followedAt }
            return change.value
        }
    }

    public func unfollow(followerID: String, followeeID: String) async throws {
        state.withWriteLock { _ = $0.follows[followerID]?.removeValue(forKey: followeeID) }
    }

    public func followers(userID: String, page: PageRequest) async throws -> Page<Follow> {
        let follows = state.withReadLock { state in
            state.follows.compactMap { follower, followees in
                followees[userID].map { Follow(userID: follower, followedAt: $0) }
            }
        }
        return try BucketListPaging.page(follows, .followers, scope: userID, page: page) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    public func following(userID: String, page: PageRequest) async throws -> Page<Follow> {
        let follows = state.withReadLock { state in
            (state.follows[userID] ?? [:]).map { Follow(userID: $0.key, followedAt: $0.value) }
        }
        return try BucketListPaging.page(follows, .following, scope: userID, page: page) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    public func profile(userID: String, viewerID: String?) async throws -> ProfileCounts {
        state.withReadLock { state in
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
