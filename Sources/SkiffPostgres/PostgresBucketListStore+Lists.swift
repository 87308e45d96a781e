public import Foundation
import PostgresNIO
public import SkiffBucketList
public import SkiffDomain

// Bucket lists, their entries, follows and profiles on PostgreSQL. Every page is one walk of an index in
// the list's keyset order (`BucketListPaging`), stopping after the page: a row comparison against the
// cursor is the index condition, and the first page starts from a position before every row.
extension PostgresBucketListStore {
    // MARK: Bucket lists

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        try await storage.write { db in
            let stored = try BucketListLifecycle.createList(
                list,
                ownedNameKeys: try await nameKeys(db, ownerID: list.ownerID),
                limit: limit,
                listIDTaken: try await db.exists("SELECT 1 FROM bucket_list WHERE id = \(list.id)", storage)
            )
            try await db.run(
                """
                INSERT INTO bucket_list (id, owner_id, name, name_key, description, visibility, created_at, updated_at)
                VALUES (\(stored.id), \(stored.ownerID), \(stored.fields.name), \(stored.fields.nameKey),
                    \(stored.fields.description), \(stored.fields.visibility.rawValue),
                    \(stored.createdAt.millisecondsSince1970), \(stored.updatedAt.millisecondsSince1970))
                """,
                storage
            )
            return stored
        }
    }

    public func list(id: String) async throws -> BucketList? {
        try await storage.read { db in try await list(db, id: id) }
    }

    public func updateList(
        id: String,
        ownerID: String,
        changes: BucketListChanges,
        now: Date
    ) async throws
        -> BucketList
    {
        try await storage.write { db in
            let change = try BucketListLifecycle.updateList(
                try await list(db, id: id),
                ownerID: ownerID,
                changes: changes,
                otherNameKeys: try await nameKeys(db, ownerID: ownerID, except: id),
                now: now
            )
            guard change.changed else { return change.value }
            let fields = change.value.fields
            try await db.run(
                """
                UPDATE bucket_list SET name = \(fields.name), name_key = \(fields.nameKey),
                    description = \(fields.description), visibility = \(fields.visibility.rawValue),
                    updated_at = \(change.value.updatedAt.millisecondsSince1970)
                WHERE id = \(id)
                """,
                storage
            )
            return change.value
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try await storage.write { db in
            _ = try BucketListLifecycle.ownedList(try await list(db, id: id), ownerID: ownerID)
            // Its entries go with it (ON DELETE CASCADE).
            try await db.run("DELETE FROM bucket_list WHERE id = \(id)", storage)
        }
    }

    public func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList> {
        let scope = ownerID + (includePrivate ? "|all" : "|public")
        let cursor = try BucketListPaging.cursor(page, .lists, scope: scope)
        let (time, id) = (cursor?.t ?? .min, cursor?.i ?? "")
        let visibilities = includePrivate ? ["public", "private"] : ["public"]
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            try await PostgresBucketListRows.lists(
                db.run(
                    """
                    \(unescaped: PostgresBucketListRows.selectLists)
                    WHERE l.owner_id = \(ownerID) AND (l.created_at, l.id) > (\(time), \(id))
                        AND l.visibility = ANY(\(visibilities)::text[])
                    ORDER BY l.created_at, l.id
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
        return BucketListPaging.makePage(fetched, .lists, scope: scope, size: page.size) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
    }

    /// The list with this id, with its counts.
    func list(_ db: PostgresConnection, id: String) async throws -> BucketList? {
        try await PostgresBucketListRows.lists(
            db.run("\(unescaped: PostgresBucketListRows.selectLists) WHERE l.id = \(id)", storage)
        ).first
    }

    /// The ``SkiffBucketList/BucketListFields/nameKey`` of each of an owner's lists (but `except`).
    private func nameKeys(_ db: PostgresConnection, ownerID: String, except: String? = nil) async throws -> [String] {
        let rows = try await db.run(
            """
            SELECT name_key FROM bucket_list WHERE owner_id = \(ownerID) AND id IS DISTINCT FROM \(except)
            """,
            storage
        )
        var keys: [String] = []
        for try await key in rows.decode(String.self) { keys.append(key) }
        return keys
    }

    // MARK: Entries

    public func addEntry(
        listID: String,
        ownerID: String,
        activityID: String,
        now: Date,
        limit: Int
    ) async throws
        -> BucketListEntry
    {
        try await storage.write { db in
            let entry = try BucketListLifecycle.addEntry(
                list: try await list(db, id: listID),
                ownerID: ownerID,
                activity: try await activity(db, id: activityID),
                entryExists: try await entryExists(db, listID: listID, activityID: activityID),
                entryCount: try await db.count(
                    "SELECT count(*) FROM bucket_list_entry WHERE list_id = \(listID)",
                    storage
                ),
                limit: limit,
                now: now
            )
            // The next position in the list; (list_id, position) is unique, so concurrent adds that
            // picked the same one cannot both commit.
            try await db.run(
                """
                INSERT INTO bucket_list_entry (list_id, activity_id, position, added_at)
                SELECT \(listID), \(activityID), COALESCE(max(position), 0) + 1, \(entry.addedAt.millisecondsSince1970)
                FROM bucket_list_entry WHERE list_id = \(listID)
                """,
                storage
            )
            return entry
        }
    }

    public func removeEntry(listID: String, ownerID: String, activityID: String) async throws {
        try await storage.write { db in
            try BucketListLifecycle.removeEntry(
                list: try await list(db, id: listID),
                ownerID: ownerID,
                entryExists: try await entryExists(db, listID: listID, activityID: activityID)
            )
            try await db.run(
                "DELETE FROM bucket_list_entry WHERE list_id = \(listID) AND activity_id = \(activityID)",
                storage
            )
        }
    }

    public func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws -> BucketListEntry {
        try await storage.write { db in
            let stored = try await PostgresBucketListRows.entries(
                db.run(
                    """
                    \(unescaped: PostgresBucketListRows.selectEntries)
                    WHERE e.list_id = \(listID) AND e.activity_id = \(activityID)
                    """,
                    storage
                )
            ).first
            let entry = try BucketListLifecycle.setCompletion(
                list: try await list(db, id: listID),
                ownerID: ownerID,
                entry: stored?.entry,
                completion: completion
            )
            try await db.run(
                """
                UPDATE bucket_list_entry SET completed_at = \(entry.completion?.completedAt.millisecondsSince1970),
                    note = \(entry.completion?.note ?? "")
                WHERE list_id = \(listID) AND activity_id = \(activityID)
                """,
                storage
            )
            return entry
        }
    }

    public func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry> {
        let cursor = try BucketListPaging.cursor(page, .entries, scope: listID)
        let after = cursor?.t ?? 0
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            guard try await db.exists("SELECT 1 FROM bucket_list WHERE id = \(listID)", storage) else {
                throw BucketListStoreError.listNotFound
            }
            return try await PostgresBucketListRows.entries(
                db.run(
                    """
                    \(unescaped: PostgresBucketListRows.selectEntries)
                    WHERE e.list_id = \(listID) AND e.position > \(after)
                    ORDER BY e.position
                    LIMIT \(limit)
                    """,
                    storage
                )
            ).map { BucketListPositionedEntry(position: $0.position, entry: $0.entry) }
        }
        return BucketListPaging.makePage(fetched, .entries, scope: listID, size: page.size) {
            ($0.position, $0.entry.activity.id)
        }.map(\.entry)
    }

    private func entryExists(_ db: PostgresConnection, listID: String, activityID: String) async throws -> Bool {
        try await db.exists(
            "SELECT 1 FROM bucket_list_entry WHERE list_id = \(listID) AND activity_id = \(activityID)",
            storage
        )
    }

    // MARK: Follows

    public func follow(followerID: String, followeeID: String, now: Date) async throws -> Follow {
        try await storage.write { db in
            var since: Date?
            let rows = try await db.run(
                """
                SELECT followed_at FROM user_follow WHERE follower_id = \(followerID) AND followee_id = \(followeeID)
                """,
                storage
            )
            for try await time in rows.decode(Int64.self) { since = Date(millisecondsSince1970: time) }
            let change = BucketListLifecycle.follow(
                followerID: followerID,
                followeeID: followeeID,
                since: since,
                now: now
            )
            if change.changed {
                try await db.run(
                    """
                    INSERT INTO user_follow (follower_id, followee_id, followed_at)
                    VALUES (\(followerID), \(followeeID), \(change.value.followedAt.millisecondsSince1970))
                    """,
                    storage
                )
            }
            return change.value
        }
    }

    public func unfollow(followerID: String, followeeID: String) async throws {
        try await storage.write { db in
            try await db.run(
                "DELETE FROM user_follow WHERE follower_id = \(followerID) AND followee_id = \(followeeID)",
                storage
            )
        }
    }

    public func followers(userID: String, page: PageRequest) async throws -> Page<Follow> {
        try await follows(of: userID, page: page, kind: .followers, mine: "followee_id", other: "follower_id")
    }

    public func following(userID: String, page: PageRequest) async throws -> Page<Follow> {
        try await follows(of: userID, page: page, kind: .following, mine: "follower_id", other: "followee_id")
    }

    /// Follows where column `mine` is the user, most recent first then id descending, listing column
    /// `other` (on `user_follow_follower_followed_at` or `user_follow_followee_followed_at`).
    private func follows(
        of userID: String,
        page: PageRequest,
        kind: BucketListPaging.Kind,
        mine: String,
        other: String
    ) async throws -> Page<Follow> {
        let cursor = try BucketListPaging.cursor(page, kind, scope: userID)
        let (time, id) = (cursor?.t ?? .max, cursor?.i ?? "")
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            let rows = try await db.run(
                """
                SELECT \(unescaped: other), followed_at FROM user_follow
                WHERE \(unescaped: mine) = \(userID) AND (followed_at, \(unescaped: other)) < (\(time), \(id))
                ORDER BY followed_at DESC, \(unescaped: other) DESC
                LIMIT \(limit)
                """,
                storage
            )
            var follows: [Follow] = []
            for try await (user, time) in rows.decode((String, Int64).self) {
                follows.append(Follow(userID: user, followedAt: Date(millisecondsSince1970: time)))
            }
            return follows
        }
        return BucketListPaging.makePage(fetched, kind, scope: userID, size: page.size) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    // MARK: Profiles

    public func profile(userID: String, viewerID: String?) async throws -> ProfileCounts {
        let visibilities = viewerID == userID ? ["public", "private"] : ["public"]
        return try await storage.read { db in
            let rows = try await db.run(
                """
                SELECT
                    (SELECT count(*) FROM activity WHERE owner_id = \(userID)),
                    (SELECT count(*) FROM bucket_list WHERE owner_id = \(userID)
                        AND visibility = ANY(\(visibilities)::text[])),
                    (SELECT count(DISTINCT e.activity_id) FROM bucket_list_entry e
                        JOIN bucket_list l ON l.id = e.list_id
                        WHERE l.owner_id = \(userID) AND l.visibility = ANY(\(visibilities)::text[])
                            AND e.completed_at IS NOT NULL),
                    (SELECT count(*) FROM user_follow WHERE followee_id = \(userID)),
                    (SELECT count(*) FROM user_follow WHERE follower_id = \(userID)),
                    EXISTS (SELECT 1 FROM user_follow WHERE follower_id = \(viewerID) AND followee_id = \(userID))
                """,
                storage
            )
            for try await (activities, lists, completed, followers, following, followed) in rows.decode(
                (Int, Int, Int, Int, Int, Bool).self
            ) {
                return ProfileCounts(
                    activityCount: activities,
                    listCount: lists,
                    completedActivityCount: completed,
                    followerCount: followers,
                    followingCount: following,
                    followedByViewer: followed
                )
            }
            return ProfileCounts()
        }
    }
}

/// A list entry and its position in the list (the key of its page).
struct BucketListPositionedEntry: Sendable {
    var position: Int64
    var entry: BucketListEntry
}
