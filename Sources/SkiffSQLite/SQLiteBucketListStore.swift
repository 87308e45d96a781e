public import Foundation
import GRDB
public import SkiffBucketList
public import SkiffDomain

/// The SQLite ``SkiffBucketList/BucketListStore``.
///
/// Each use case is one `pool.write { }` transaction or one `pool.read { }` snapshot. Every mutation loads
/// what ``SkiffBucketList/BucketListLifecycle`` needs, lets it decide (existence, ownership, uniqueness,
/// limits) and saves the result inside the same transaction, as ``SkiffBucketList/InMemoryBucketListStore``
/// does, so both throw the same errors. A vote updates the vote row
/// and the activity's counters in one transaction, and the single writer serializes transactions, so the
/// counts always equal the votes stored however many users vote at once; an up-vote also raises the
/// activity's stored trending bound. Nearby walks outwards from the center a radius at a time (``nearbyStatement(_:level:radiusKm:cursor:limit:)``);
/// trending walks activities by their bound (see ``trendingActivities(_:)``). Social queries: see `SQLiteBucketListStore+Social.swift`.
///
/// Get one from ``SQLiteDatabase/bucketListStore()``.
public struct SQLiteBucketListStore: BucketListStore {
    let pool: StorePool
    /// See ``SkiffBucketList/ActivityRanking/collectLimit``.
    let collectLimit: Int

    init(pool: StorePool, collectLimit: Int = ActivityRanking.collectLimit) {
        self.pool = pool
        self.collectLimit = collectLimit
    }

    // MARK: Activities

    public func createActivity(_ activity: Activity) async throws -> Activity {
        try await pool.domainWrite { db in
            let stored = try BucketListLifecycle.createActivity(
                activity,
                activityIDTaken: try ActivityRow.fetchOne(db, id: activity.id) != nil
            )
            try ActivityRow.insert(db, stored)
            return stored
        }
    }

    public func activity(id: String) async throws -> Activity? {
        try await pool.domainRead { db in try ActivityRow.fetchOne(db, id: id) }
    }

    public func updateActivity(
        id: String,
        ownerID: String,
        changes: ActivityChanges,
        now: Date
    ) async throws
        -> Activity
    {
        try await pool.domainWrite { db in
            let change = try BucketListLifecycle.updateActivity(
                try ActivityRow.fetchOne(db, id: id),
                ownerID: ownerID,
                changes: changes,
                now: now
            )
            if change.changed { try ActivityRow.updateFields(db, change.value) }
            return change.value
        }
    }

    public func deleteActivity(id: String, ownerID: String) async throws {
        try await pool.domainWrite { db in
            try BucketListLifecycle.deleteActivity(try ActivityRow.fetchOne(db, id: id), ownerID: ownerID)
            // Votes, comments and entries go with it (ON DELETE CASCADE).
            try db.executeCached(sql: "DELETE FROM activity WHERE id = ?", arguments: [id])
        }
    }

    public func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit> {
        let cursor = try ActivityRanking.nearbyCursor(page, query)
        return try await pool.domainRead { db in
            try ActivityRanking.nearbyWalk(query, cursor: cursor, size: page.size, collectLimit: collectLimit) {
                level,
                radius,
                cap in
                let statement = Self.nearbyCountStatement(query.center, radiusKm: radius, level: level, cap: cap)
                return try Int.fetchOne(db.cachedStatement(sql: statement.sql), arguments: statement.arguments) ?? 0
            } fetch: { level, radius, after, limit in
                let statement = Self.nearbyStatement(query, level: level, radiusKm: radius, cursor: after, limit: limit)
                let rows = try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: statement.arguments)
                guard let first = rows.first else { return [] }
                let layout = ActivityRow.Layout(first)
                let distance = first.count - 1  // `distanceKm`, the last column
                return rows.map { NearbyHit(activity: ActivityRow.activity($0, layout), distanceKm: $0[distance]) }
            } levelBelow: { level in
                guard let level else {
                    return try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(net) FROM activity"))
                }
                return try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT net FROM activity WHERE net < ? ORDER BY net DESC LIMIT 1"),
                    arguments: [level]
                )
            }
        }
    }

    /// How many activities a circle's box holds (at a net-vote level), counted up to `cap`, on the index
    /// of the coordinates (led by `net` for a level).
    static func nearbyCountStatement(
        _ center: Coordinate,
        radiusKm: Double,
        level: Int?,
        cap: Int
    ) -> (sql: String, arguments: StatementArguments) {
        let box = box(center: center, radiusKm: radiusKm)
        var arguments: StatementArguments = level.map { [$0] } ?? []
        arguments += box.arguments
        arguments += [cap]
        return (
            """
            SELECT COUNT(*) FROM (SELECT 1 FROM activity a WHERE \(level == nil ? "" : "a.net = ? AND ")\(box.condition)
            LIMIT ?)
            """,
            arguments
        )
    }

    /// One step of a nearby walk in one statement: the box of `radiusKm` (the query's radius by default) on
    /// the coordinate index (led by `net` for one net-vote level), the exact distance (``DistanceFunction``)
    /// as filter and order, the keyset cursor and the limit, inside SQLite. Without a level the order is the
    /// query's; at a level, nearest first.
    static func nearbyStatement(
        _ query: NearbyQuery,
        level: Int? = nil,
        radiusKm: Double? = nil,
        cursor: ActivityRanking.NearbyCursor?,
        limit: Int
    ) -> (sql: String, arguments: StatementArguments) {
        let radius = min(radiusKm ?? query.radiusKm, query.radiusKm)
        let box = box(center: query.center, radiusKm: radius)
        let distance = "skiff_distance_km(a.latitude, a.longitude, ?, ?)"
        let center: StatementArguments = [query.center.latitude, query.center.longitude]
        var conditions = [box.condition, "\(distance) <= ?"]
        var arguments = box.arguments
        arguments += center
        arguments += [radius]
        if let level {
            conditions.insert("a.net = ?", at: 0)
            arguments = [level] + arguments
        }
        let byPopularity = level == nil && query.sort == .popularity
        if let cursor {
            // After the cursor in (net votes desc,) distance asc, id asc.
            let byDistance = "(\(distance) > ? OR (\(distance) = ? AND a.id > ?))"
            var distanceArguments = center
            distanceArguments += [cursor.d]
            distanceArguments += center
            distanceArguments += [cursor.d, cursor.i]
            if byPopularity, let net = cursor.n {
                conditions.append("(a.net < ? OR (a.net = ? AND \(byDistance)))")
                arguments += [net, net]
                arguments += distanceArguments
            } else {
                conditions.append(byDistance)
                arguments += distanceArguments
            }
        }
        let order = byPopularity ? "a.net DESC, distanceKm ASC, a.id ASC" : "distanceKm ASC, a.id ASC"
        var all = center
        all += arguments
        all += [limit]
        return (
            """
            SELECT a.*, \(distance) AS distanceKm FROM activity a WHERE \(conditions.joined(separator: " AND "))
            ORDER BY \(order) LIMIT ?
            """,
            all
        )
    }

    /// Trending: activities walked by their stored bound (`trendBound`, its index), 64 at a time, scored
    /// exactly from their votes in the window until no activity left can enter the top
    /// (`ActivityRanking.trendingTop`). Near a point whose box holds fewer than
    /// ``SkiffBucketList/ActivityRanking/collectLimit`` activities, only those are walked (sorted by bound);
    /// otherwise the walk goes over every activity with a bound and skips, in the index, those outside the box.
    public func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit] {
        let since = query.since.millisecondsSince1970
        return try await pool.domainRead { db -> [TrendingHit] in
            var inCircle: [(id: String, bound: Double)]?
            if let center = query.center {
                let count = Self.nearbyCountStatement(center, radiusKm: query.radiusKm, level: nil, cap: collectLimit)
                if try Int.fetchOne(db.cachedStatement(sql: count.sql), arguments: count.arguments) ?? 0 < collectLimit
                {
                    let statement = Self.trendingStatement(center: center, radiusKm: query.radiusKm, walk: false)
                    inCircle = try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: statement.arguments)
                        .map { (id: $0["id"] as String, bound: $0["trendBound"] as Double) }
                }
            }
            var last: (bound: Double, id: String)?
            var offset = 0
            return try ActivityRanking.trendingTop(query) {
                if let inCircle {
                    let batch = Array(inCircle[offset..<min(offset + 64, inCircle.count)])
                    offset += batch.count
                    return batch
                }
                let statement = Self.trendingStatement(
                    center: query.center,
                    radiusKm: query.radiusKm,
                    walk: true,
                    after: last
                )
                let rows = try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: statement.arguments)
                let batch = rows.map { (id: $0["id"] as String, bound: $0["trendBound"] as Double) }
                last = batch.last.map { ($0.bound, $0.id) }
                return batch
            } score: { ids in
                // Batches hold at most 64 ids; padded to 64 (repeating the first), both statements keep one
                // text and are prepared once per connection.
                let padded = StatementArguments(ids + Array(repeating: ids[0], count: max(0, 64 - ids.count)))
                let activityRows = try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM activity WHERE id IN (\(Self.sixtyFourPlaceholders))"),
                    arguments: padded
                )
                let activities = ActivityRow.activities(activityRows)
                var votes: [String: [CastVote]] = [:]
                let rows = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT activityID, userID, value, castAt FROM activityVote
                            WHERE activityID IN (\(Self.sixtyFourPlaceholders)) AND castAt >= ?
                            """
                    ),
                    arguments: padded + [since]
                )
                for row in rows {
                    let value: Int = row[2]
                    votes[row[0], default: []].append(
                        CastVote(
                            userID: row[1],
                            vote: value > 0 ? .up : .down,
                            castAt: Date(millisecondsSince1970: row[3])
                        )
                    )
                }
                return activities.compactMap { ActivityRanking.trendingHit($0, votes: votes[$0.id] ?? [], query) }
            }
        }
    }

    /// 64 comma-separated placeholders: the IN list of a trending batch.
    static let sixtyFourPlaceholders = Array(repeating: "?", count: 64).joined(separator: ", ")

    /// The activities with a trending bound, highest first, then by id: in a circle's box (`center`), all
    /// of them on the coordinate index (`walk` false), or 64 at a time after `after` on the bound's index
    /// (`walk` true), which checks the box in the index.
    static func trendingStatement(
        center: Coordinate?,
        radiusKm: Double,
        walk: Bool,
        after: (bound: Double, id: String)? = nil
    ) -> (sql: String, arguments: StatementArguments) {
        var conditions = ["a.trendBound IS NOT NULL"]
        var arguments: StatementArguments = []
        if let center {
            let box = box(center: center, radiusKm: radiusKm)
            conditions.append(box.condition)
            arguments += box.arguments
        }
        if let after {
            // The bound on `trendBound` lets SQLite seek the index; without it the OR is answered by two
            // index searches and a sort of every activity below the bound.
            conditions.append("a.trendBound <= ? AND (a.trendBound < ? OR (a.trendBound = ? AND a.id > ?))")
            arguments += [after.bound, after.bound, after.bound, after.id]
        }
        let index = walk ? "activity_trendBound_place" : "activity_latitude_longitude"
        return (
            """
            SELECT a.id, a.trendBound FROM activity a INDEXED BY \(index) WHERE \(conditions.joined(separator: " AND "))
            ORDER BY a.trendBound DESC, a.id ASC\(walk ? " LIMIT 64" : "")
            """,
            arguments
        )
    }

    /// The bounding-box condition on `a.latitude`/`a.longitude` for a circle.
    static func box(center: Coordinate, radiusKm: Double) -> (condition: String, arguments: StatementArguments) {
        let box = Geo.boundingBox(center: center, radiusKm: radiusKm)
        var condition = "a.latitude BETWEEN ? AND ?"
        var arguments: StatementArguments = [box.latitude.lowerBound, box.latitude.upperBound]
        if let longitude = box.longitude {
            condition += " AND a.longitude BETWEEN ? AND ?"
            arguments += [longitude.lowerBound, longitude.upperBound]
        }
        return (condition, arguments)
    }

    // MARK: Votes

    public func setVote(activityID: String, userID: String, vote: Vote, now: Date) async throws -> Activity {
        try await pool.domainWrite { db in
            let previous = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM activityVote WHERE activityID = ? AND userID = ?"),
                arguments: [activityID, userID]
            )
            let change = try BucketListLifecycle.setVote(
                try ActivityRow.fetchOne(db, id: activityID),
                previous: previous.flatMap(Vote.init(rawValue:)) ?? .noVote,
                vote: vote,
                now: now
            )
            switch change.write {
            case nil:
                return change.activity
            case .clear:
                try db.executeCached(
                    sql: "DELETE FROM activityVote WHERE activityID = ? AND userID = ?",
                    arguments: [activityID, userID]
                )
            case .cast(let vote, let castAt):
                try db.executeCached(
                    sql: """
                        INSERT INTO activityVote (activityID, userID, value, castAt) VALUES (?, ?, ?, ?)
                        ON CONFLICT (activityID, userID) DO UPDATE SET value = excluded.value, castAt = excluded.castAt
                        """,
                    arguments: [activityID, userID, vote.rawValue, castAt.millisecondsSince1970]
                )
            }
            try db.executeCached(
                sql: "UPDATE activity SET upVotes = ?, downVotes = ? WHERE id = ?",
                arguments: [change.activity.upVotes, change.activity.downVotes, activityID]
            )
            if case .cast(.up, let castAt) = change.write {
                let bound = try Double.fetchOne(
                    db.cachedStatement(sql: "SELECT trendBound FROM activity WHERE id = ?"),
                    arguments: [activityID]
                )
                try db.executeCached(
                    sql: "UPDATE activity SET trendBound = ? WHERE id = ?",
                    arguments: [TrendingScore.raisedBound(bound, upVoteAt: castAt), activityID]
                )
            }
            return change.activity
        }
    }

    public func votes(userID: String, activityIDs: [String]) async throws -> [String: Vote] {
        guard !activityIDs.isEmpty else { return [:] }
        return try await pool.domainRead { db in
            let placeholders = activityIDs.map { _ in "?" }.joined(separator: ", ")
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT activityID, value FROM activityVote WHERE userID = ? AND activityID IN (\(placeholders))",
                arguments: StatementArguments([userID] + activityIDs)
            )
            var result: [String: Vote] = [:]
            for row in rows {
                let value: Int = row["value"]
                result[row["activityID"]] = Vote(rawValue: value)
            }
            return result
        }
    }

    // MARK: Comments

    public func addComment(_ comment: Comment) async throws -> Comment {
        try await pool.domainWrite { db in
            let stored = try BucketListLifecycle.addComment(
                comment,
                activityExists: try ActivityRow.fetchOne(db, id: comment.activityID) != nil,
                commentIDTaken: try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM activityComment WHERE id = ?"),
                    arguments: [comment.id]
                ) != nil,
                latestCommentAt: try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT MAX(createdAt) FROM activityComment WHERE activityID = ?"),
                    arguments: [comment.activityID]
                ).map { Date(millisecondsSince1970: $0) }
            )
            try db.executeCached(
                sql: "INSERT INTO activityComment (id, activityID, authorID, text, createdAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    stored.id, stored.activityID, stored.authorID, stored.text, stored.createdAt.millisecondsSince1970,
                ]
            )
            try db.executeCached(
                sql: "UPDATE activity SET commentCount = commentCount + 1 WHERE id = ?",
                arguments: [stored.activityID]
            )
            return stored
        }
    }

    public func comments(activityID: String, page: PageRequest) async throws -> Page<Comment> {
        let cursor = try BucketListPaging.cursor(page, .comments, scope: activityID)
        let fetched = try await pool.domainRead { db in
            guard try ActivityRow.fetchOne(db, id: activityID) != nil else {
                throw BucketListStoreError.activityNotFound
            }
            var sql = "SELECT * FROM activityComment WHERE activityID = ?"
            var arguments: StatementArguments = [activityID]
            if let cursor {
                sql += " AND createdAt >= ? AND (createdAt > ? OR (createdAt = ? AND id > ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY createdAt, id LIMIT ?"
            arguments += [page.size + 1]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(CommentRow.comment)
        }
        return BucketListPaging.makePage(fetched, .comments, scope: activityID, size: page.size) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws {
        try await pool.domainWrite { db in
            let comment = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM activityComment WHERE id = ?"),
                arguments: [id]
            )
            .map(CommentRow.comment)
            try BucketListLifecycle.deleteComment(
                comment,
                activityOwnerID: try comment.flatMap { comment in
                    try String.fetchOne(
                        db.cachedStatement(sql: "SELECT ownerID FROM activity WHERE id = ?"),
                        arguments: [comment.activityID]
                    )
                },
                by: userID
            )
            try db.executeCached(sql: "DELETE FROM activityComment WHERE id = ?", arguments: [id])
            if let comment {
                try db.executeCached(
                    sql: "UPDATE activity SET commentCount = commentCount - 1 WHERE id = ?",
                    arguments: [comment.activityID]
                )
            }
        }
    }
}
