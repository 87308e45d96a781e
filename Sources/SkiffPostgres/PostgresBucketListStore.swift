public import Foundation
import PostgresNIO
public import SkiffBucketList
public import SkiffDomain

/// The PostgreSQL ``SkiffBucketList/BucketListStore``.
///
/// Each use case is one ``PostgresStorage`` transaction: writes are SERIALIZABLE (run again when
/// PostgreSQL aborts them for a conflict), reads one read-only snapshot. Every write loads what
/// ``SkiffBucketList/BucketListLifecycle`` needs, lets it decide (existence, ownership, uniqueness,
/// limits) and saves what it returns inside the transaction, as the in-memory and SQLite stores do, so
/// all throw the same errors and a check and its write are atomic across every server on the database.
///
/// A vote updates the activity's counters (and, for an up-vote, raises its stored trending bound,
/// ``SkiffBucketList/TrendingScore/raisedBound(_:upVoteAt:)``) and the vote row in one transaction, so
/// the counts always equal the votes stored; the vote row's primary key keeps one vote per user. Writes
/// that change an activity's counters contend on its row: one commits, the others are aborted and run
/// again, and every attempt after a conflict first locks out the other writers of activities
/// (``counterWrite(_:)``), so a busy activity cannot starve a voter.
///
/// Nearby and trending run the walks of `ActivityRanking` (the code that decides the in-memory and SQLite
/// results) with each of their steps one query: see `PostgresBucketListStore+Ranking.swift`. Lists,
/// entries and follows: `PostgresBucketListStore+Lists.swift`.
///
/// Get one from ``PostgresStorage/bucketListStore()``.
public struct PostgresBucketListStore: BucketListStore {
    let storage: PostgresStorage
    /// See ``SkiffBucketList/ActivityRanking/collectLimit``.
    let collectLimit: Int

    init(storage: PostgresStorage, collectLimit: Int = ActivityRanking.collectLimit) {
        self.storage = storage
        self.collectLimit = collectLimit
    }

    // MARK: Activities

    public func createActivity(_ activity: Activity) async throws -> Activity {
        try await storage.write { db in
            let stored = try BucketListLifecycle.createActivity(
                activity,
                activityIDTaken: try await db.exists("SELECT 1 FROM activity WHERE id = \(activity.id)", storage)
            )
            try await db.run(PostgresBucketListRows.insert(stored), storage)
            return stored
        }
    }

    public func activity(id: String) async throws -> Activity? {
        try await storage.read { db in try await activity(db, id: id) }
    }

    public func updateActivity(
        id: String,
        ownerID: String,
        changes: ActivityChanges,
        now: Date
    ) async throws
        -> Activity
    {
        try await storage.write { db in
            let change = try BucketListLifecycle.updateActivity(
                try await activity(db, id: id),
                ownerID: ownerID,
                changes: changes,
                now: now
            )
            if change.changed { try await db.run(PostgresBucketListRows.updateFields(change.value), storage) }
            return change.value
        }
    }

    public func deleteActivity(id: String, ownerID: String) async throws {
        try await storage.write { db in
            try BucketListLifecycle.deleteActivity(try await activity(db, id: id), ownerID: ownerID)
            // Votes, comments and entries go with it (ON DELETE CASCADE).
            try await db.run("DELETE FROM activity WHERE id = \(id)", storage)
        }
    }

    // MARK: Votes

    public func setVote(activityID: String, userID: String, vote: Vote, now: Date) async throws -> Activity {
        try await counterWrite { db in
            var previous = Vote.noVote
            let votes = try await db.run(
                "SELECT value FROM activity_vote WHERE activity_id = \(activityID) AND user_id = \(userID)",
                storage
            )
            for try await value in votes.decode(Int.self) { previous = Vote(rawValue: value) ?? .noVote }
            let (activity, bound) = try await activityWithBound(db, id: activityID)
            let change = try BucketListLifecycle.setVote(activity, previous: previous, vote: vote, now: now)
            guard let write = change.write else { return change.activity }
            var raised = bound
            if case .cast(.up, let castAt) = write { raised = TrendingScore.raisedBound(bound, upVoteAt: castAt) }
            // The activity's row first, then the vote's: every writer of both takes them in this order.
            try await db.run(
                """
                UPDATE activity SET up_votes = \(change.activity.upVotes), down_votes = \(change.activity.downVotes),
                    trend_bound = \(raised)
                WHERE id = \(activityID)
                """,
                storage
            )
            switch write {
            case .clear:
                try await db.run(
                    "DELETE FROM activity_vote WHERE activity_id = \(activityID) AND user_id = \(userID)",
                    storage
                )
            case .cast(let vote, let castAt):
                try await db.run(
                    """
                    INSERT INTO activity_vote (activity_id, user_id, value, cast_at)
                    VALUES (\(activityID), \(userID), \(vote.rawValue), \(castAt.millisecondsSince1970))
                    ON CONFLICT (activity_id, user_id) DO UPDATE SET value = excluded.value, cast_at = excluded.cast_at
                    """,
                    storage
                )
            }
            return change.activity
        }
    }

    public func votes(userID: String, activityIDs: [String]) async throws -> [String: Vote] {
        guard !activityIDs.isEmpty else { return [:] }
        return try await storage.read { db in
            let rows = try await db.run(
                """
                SELECT activity_id, value FROM activity_vote
                WHERE activity_id = ANY(\(activityIDs)::text[]) AND user_id = \(userID)
                """,
                storage
            )
            var result: [String: Vote] = [:]
            for try await (activityID, value) in rows.decode((String, Int).self) {
                result[activityID] = Vote(rawValue: value)
            }
            return result
        }
    }

    // MARK: Comments

    public func addComment(_ comment: SkiffBucketList.Comment) async throws -> SkiffBucketList.Comment {
        try await counterWrite { db in
            var latest: Int64?
            let rows = try await db.run(
                "SELECT max(created_at) FROM activity_comment WHERE activity_id = \(comment.activityID)",
                storage
            )
            for try await time in rows.decode(Int64?.self) { latest = time }
            let stored = try BucketListLifecycle.addComment(
                comment,
                activityExists: try await db.exists(
                    "SELECT 1 FROM activity WHERE id = \(comment.activityID)",
                    storage
                ),
                commentIDTaken: try await db.exists("SELECT 1 FROM activity_comment WHERE id = \(comment.id)", storage),
                latestCommentAt: latest.map(Date.init(millisecondsSince1970:))
            )
            try await db.run(
                "UPDATE activity SET comment_count = comment_count + 1 WHERE id = \(stored.activityID)",
                storage
            )
            try await db.run(
                """
                INSERT INTO activity_comment (\(unescaped: PostgresBucketListRows.commentColumns))
                VALUES (\(stored.id), \(stored.activityID), \(stored.authorID), \(stored.text),
                    \(stored.createdAt.millisecondsSince1970))
                """,
                storage
            )
            return stored
        }
    }

    public func comments(activityID: String, page: PageRequest) async throws -> Page<SkiffBucketList.Comment> {
        let cursor = try BucketListPaging.cursor(page, .comments, scope: activityID)
        let (time, id) = (cursor?.t ?? .min, cursor?.i ?? "")
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            guard try await db.exists("SELECT 1 FROM activity WHERE id = \(activityID)", storage) else {
                throw BucketListStoreError.activityNotFound
            }
            return try await PostgresBucketListRows.comments(
                db.run(
                    """
                    SELECT \(unescaped: PostgresBucketListRows.commentColumns) FROM activity_comment
                    WHERE activity_id = \(activityID) AND (created_at, id) > (\(time), \(id))
                    ORDER BY created_at, id
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
        return BucketListPaging.makePage(fetched, .comments, scope: activityID, size: page.size) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws {
        try await counterWrite { db in
            let comment = try await PostgresBucketListRows.comments(
                db.run(
                    "SELECT \(unescaped: PostgresBucketListRows.commentColumns) FROM activity_comment WHERE id = \(id)",
                    storage
                )
            ).first
            var activityOwnerID: String?
            if let comment {
                let rows = try await db.run("SELECT owner_id FROM activity WHERE id = \(comment.activityID)", storage)
                for try await owner in rows.decode(String.self) { activityOwnerID = owner }
            }
            try BucketListLifecycle.deleteComment(comment, activityOwnerID: activityOwnerID, by: userID)
            guard let comment else { return }
            try await db.run(
                "UPDATE activity SET comment_count = comment_count - 1 WHERE id = \(comment.activityID)",
                storage
            )
            try await db.run("DELETE FROM activity_comment WHERE id = \(id)", storage)
        }
    }

    // MARK: Loading

    func activity(_ db: PostgresConnection, id: String) async throws -> Activity? {
        try await PostgresBucketListRows.activities(
            db.run(
                "SELECT \(unescaped: PostgresBucketListRows.activityColumns) FROM activity a WHERE a.id = \(id)",
                storage
            )
        ).first
    }

    /// The activity with this id and its stored trending bound.
    private func activityWithBound(_ db: PostgresConnection, id: String) async throws -> (Activity?, Double?) {
        let rows = try await db.run(
            """
            SELECT \(unescaped: PostgresBucketListRows.activityColumns), a.trend_bound FROM activity a
            WHERE a.id = \(id)
            """,
            storage
        )
        for try await row in rows {
            let row = row.makeRandomAccess()
            return (
                try PostgresBucketListRows.activity(row),
                try row[PostgresBucketListRows.activityColumnCount].decode(Double?.self)
            )
        }
        return (nil, nil)
    }

    /// Runs a write that changes an activity's counters: run again after a conflict, it first locks out
    /// every other writer of activities (SHARE ROW EXCLUSIVE), so it cannot lose to another again.
    /// Counter writers update the activity's row before any other row, so the writers this lock waits
    /// for never wait for it.
    private func counterWrite<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await storage.write(lockingOnRetry: .init(table: "activity", mode: "SHARE ROW EXCLUSIVE"), body)
    }
}

extension PostgresStorage {
    /// The BucketList service's store on this database.
    public func bucketListStore() -> PostgresBucketListStore {
        PostgresBucketListStore(storage: self)
    }

    /// The BucketList store on this database, walking nearby and trending circles that hold `collectLimit`
    /// activities or more (tests set it low to exercise the walk on small data).
    package func bucketListStore(collectLimit: Int) -> PostgresBucketListStore {
        PostgresBucketListStore(storage: self, collectLimit: collectLimit)
    }
}
