public import Foundation
public import SkiffDomain

/// A ``BucketListStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one reader–writer lock (reads, nearby and trending included, run side by side; a
/// write runs alone), and every method runs in one critical section without suspending,
/// so each use case is atomic as a database transaction would be (vote counts included). Writes load what
/// ``BucketListLifecycle`` needs, let it decide and save what it returns. Nearby reads the activities in the
/// grid cells (about 220 m) of the circle, or of the radii its outward walk visits (per net-vote level for
/// popularity), and trending walks the activities by trend bound, both through `ActivityRanking`, the same
/// code that decides SQLite's results.
public final class InMemoryBucketListStore: BucketListStore {
    private struct StoredVote {
        var vote: Vote
        var castAt: Date
    }

    private struct StoredEntry {
        var addedAt: Date
        /// The order of adding (over all lists), which orders a list's entries.
        var position: Int64
        var completion: Completion?
    }

    /// An activity's place in the trending walk: its stored bound, then its id.
    private struct TrendKey: Sendable {
        var bound: Double
        var id: String

        /// Highest bound first, then by id.
        static func precedes(_ a: TrendKey, _ b: TrendKey) -> Bool {
            a.bound != b.bound ? a.bound > b.bound : a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
        }
    }

    private struct State {
        private(set) var activities: [String: Activity] = [:]
        /// The activities' places, for nearby and nearby-trending candidates (cells of about 220 m) …
        var grid = Self.newGrid()
        /// … and per net-vote level (up minus down votes), for nearby by popularity …
        var levelGrids: [Int: GridIndex<String>] = [:]
        /// … whose levels, highest first.
        var levels: [Int] = []
        /// Each activity's trending bound (``TrendingScore/raisedBound(_:upVoteAt:)``) …
        var trendBounds: [String: Double] = [:]
        /// … and the activities with one, highest bound first.
        var byTrend = SortedKeys<TrendKey>(by: TrendKey.precedes)

        static func newGrid() -> GridIndex<String> { GridIndex(cellDegrees: 0.002, maximumCellsPerQuery: .max) }

        /// Stores an activity, keeping the grids in step.
        mutating func put(_ activity: Activity) {
            if let old = activities[activity.id] {
                // Same place, same net votes (a comment count, an edit of the text): the grids stay as they are.
                if old.fields.place.point == activity.fields.place.point, old.netVotes == activity.netVotes {
                    activities[activity.id] = activity
                    return
                }
                unplace(old)
            }
            activities[activity.id] = activity
            let point = activity.fields.place.point
            grid.insert(activity.id, latitude: point.latitude, longitude: point.longitude)
            let level = activity.netVotes
            if levelGrids[level] == nil {
                levelGrids[level] = Self.newGrid()
                levels.insert(level, at: levels.firstIndex { $0 < level } ?? levels.count)
            }
            levelGrids[level]?.insert(activity.id, latitude: point.latitude, longitude: point.longitude)
        }

        /// Takes an activity out of the grids.
        private mutating func unplace(_ old: Activity) {
            let point = old.fields.place.point
            grid.remove(old.id, latitude: point.latitude, longitude: point.longitude)
            let level = old.netVotes
            levelGrids[level]?.remove(old.id, latitude: point.latitude, longitude: point.longitude)
            if levelGrids[level]?.isEmpty == true {
                levelGrids[level] = nil
                levels.removeAll { $0 == level }
            }
        }

        /// Forgets an activity and its place in the indexes.
        mutating func removeActivity(_ id: String) {
            guard let old = activities.removeValue(forKey: id) else { return }
            unplace(old)
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
        /// Comments by id (write with ``putComment(_:)``/``removeComment(_:)``) and their ids per activity.
        private(set) var comments: [String: Comment] = [:]
        private(set) var commentsByActivity: [String: Set<String>] = [:]

        mutating func putComment(_ comment: Comment) {
            comments[comment.id] = comment
            commentsByActivity[comment.activityID, default: []].insert(comment.id)
        }

        mutating func removeComment(_ id: String) {
            guard let old = comments.removeValue(forKey: id) else { return }
            commentsByActivity[old.activityID]?.remove(id)
            if commentsByActivity[old.activityID]?.isEmpty == true { commentsByActivity[old.activityID] = nil }
        }

        /// An activity's comments.
        func comments(activityID: String) -> [Comment] {
            (commentsByActivity[activityID] ?? []).compactMap { comments[$0] }
        }

        /// Lists by id (write with ``putList(_:)``/``removeList(_:)``) and their ids per owner.
        private(set) var lists: [String: BucketList] = [:]
        private(set) var listsByOwner: [String: Set<String>] = [:]

        mutating func putList(_ list: BucketList) {
            lists[list.id] = list
            listsByOwner[list.ownerID, default: []].insert(list.id)
        }

        mutating func removeList(_ id: String) {
            guard let old = lists.removeValue(forKey: id) else { return }
            listsByOwner[old.ownerID]?.remove(id)
            if listsByOwner[old.ownerID]?.isEmpty == true { listsByOwner[old.ownerID] = nil }
        }

        /// An owner's lists.
        func lists(ownerID: String) -> [BucketList] { (listsByOwner[ownerID] ?? []).compactMap { lists[$0] } }
        /// The latest `createdAt` of each activity's comments (so that new ones sort after them).
        var latestCommentAt: [String: Date] = [:]
        /// Entries per list, then per activity.
        var entries: [String: [String: StoredEntry]] = [:]
        /// The position of the next entry added.
        var nextEntryPosition: Int64 = 1
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
    /// See ``ActivityRanking/collectLimit``.
    private let collectLimit: Int

    /// Creates an empty store.
    public init() {
        self.collectLimit = ActivityRanking.collectLimit
    }

    /// Creates an empty store that walks nearby and trending circles holding `collectLimit` activities or
    /// more (tests set it low to exercise the walk on small data).
    package init(collectLimit: Int) {
        self.collectLimit = collectLimit
    }

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
            for comment in state.comments(activityID: id) { state.removeComment(comment.id) }
            for listID in state.entries.keys { state.entries[listID]?[id] = nil }
        }
    }

    public func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit> {
        let cursor = try ActivityRanking.nearbyCursor(page, query)
        return try state.withReadLock { state throws(DomainError) in
            try Self.nearby(query, cursor: cursor, page: page, collectLimit: collectLimit, state)
        }
    }

    /// Nearby over the grids (``ActivityRanking/nearbyWalk(_:cursor:size:collectLimit:count:fetch:levelBelow:)``).
    private static func nearby(
        _ query: NearbyQuery,
        cursor: ActivityRanking.NearbyCursor?,
        page: PageRequest,
        collectLimit: Int,
        _ state: State
    ) throws(DomainError) -> Page<NearbyHit> {
        func grid(_ level: Int?) -> GridIndex<String>? { level.map { state.levelGrids[$0] } ?? state.grid }
        return ActivityRanking.nearbyWalk(query, cursor: cursor, size: page.size, collectLimit: collectLimit) {
            level,
            radius,
            _ in
            guard let grid = grid(level) else { return 0 }
            let box = Geo.boundingBox(center: query.center, radiusKm: radius)
            // A box the grid cannot narrow (across the antimeridian or a pole) counts as small: the walk then
            // reads the circle once (the fetch below scans), not once per radius and level.
            return grid.count(latitude: box.latitude, longitude: box.longitude) ?? 0
        } fetch: { level, radius, after, limit in
            var candidates: [Activity] = []
            if let grid = grid(level) {
                let box = Geo.boundingBox(center: query.center, radiusKm: radius)
                let indexed = grid.forEachDocument(latitude: box.latitude, longitude: box.longitude) { id in
                    if let activity = state.activities[id] { candidates.append(activity) }
                }
                if !indexed {
                    // A box across the antimeridian or a pole: the grid cannot narrow it.
                    candidates = state.activities.values.filter { level == nil || $0.netVotes == level }
                }
            }
            return ActivityRanking.nearest(
                candidates,
                query,
                radiusKm: radius,
                after: after,
                limit: limit,
                byPopularity: level == nil && query.sort == .popularity
            )
        } levelBelow: { level in
            guard let level else { return state.levels.first }
            return state.levels.first { $0 < level }
        }
    }

    public func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit] {
        state.withReadLock { state in
            // A circle holding few activities: walk its own, sorted by bound; otherwise walk every activity by
            // bound and skip those outside the circle.
            var inCircle: [TrendKey]?
            if let center = query.center {
                let box = Geo.boundingBox(center: center, radiusKm: query.radiusKm)
                if let count = state.grid.count(latitude: box.latitude, longitude: box.longitude), count < collectLimit
                {
                    var keys: [TrendKey] = []
                    _ = state.grid.forEachDocument(latitude: box.latitude, longitude: box.longitude) { id in
                        if let bound = state.trendBounds[id] { keys.append(TrendKey(bound: bound, id: id)) }
                    }
                    inCircle = keys.sorted(by: TrendKey.precedes)
                }
            }
            var position = state.byTrend.start
            var offset = 0
            return ActivityRanking.trendingTop(query) {
                var batch: [(id: String, bound: Double)] = []
                if let inCircle {
                    batch = inCircle[offset..<min(offset + 64, inCircle.count)].map { ($0.id, $0.bound) }
                    offset += batch.count
                    return batch
                }
                while !state.byTrend.isEnd(position), batch.count < 64 {
                    let key = state.byTrend[position]
                    position = state.byTrend.next(position)
                    if let center = query.center, let activity = state.activities[key.id],
                        Geo.distanceKm(center, activity.fields.place.point) > query.radiusKm
                    {
                        continue
                    }
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
            state.putComment(stored)
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
            return state.comments(activityID: activityID)
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
            state.removeComment(id)
            if let comment { state.countComments(of: comment.activityID, by: -1) }
        }
    }

    // MARK: Bucket lists

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        try state.withWriteLock { (state) throws(DomainError) -> BucketList in
            let stored = try BucketListLifecycle.createList(
                list,
                ownedNameKeys: state.lists(ownerID: list.ownerID).map(\.fields.nameKey),
                limit: limit,
                listIDTaken: state.lists[list.id] != nil
            )
            state.putList(stored)
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
                otherNameKeys: state.lists(ownerID: ownerID).filter { $0.id != id }.map(\.fields.nameKey),
                now: now
            )
            if change.changed { state.putList(change.value) }
            return state.withCounts(change.value)
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            _ = try BucketListLifecycle.ownedList(state.lists[id], ownerID: ownerID)
            state.removeList(id)
            state.entries[id] = nil
        }
    }

    public func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList> {
        let lists = state.withReadLock { state in
            state.lists(ownerID: ownerID).filter { includePrivate || $0.isPublic }
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
            state.entries[listID, default: [:]][activityID] = StoredEntry(
                addedAt: entry.addedAt,
                position: state.nextEntryPosition
            )
            state.nextEntryPosition += 1
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
        let entries = try state.withReadLock { (state) throws(DomainError) -> [(Int64, BucketListEntry)] in
            guard state.lists[listID] != nil else { throw BucketListStoreError.listNotFound }
            return (state.entries[listID] ?? [:]).compactMap { activityID, stored in
                state.entry(listID: listID, activityID: activityID, stored).map { (stored.position, $0) }
            }
        }
        return try BucketListPaging.page(entries, .entries, scope: listID, page: page) { ($0.0, $0.1.activity.id) }
            .map(\.1)
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
            let lists = state.lists(ownerID: userID).filter { $0.isVisible(to: viewerID) }
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
