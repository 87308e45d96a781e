public import Foundation
import GRDB
public import SkiffBucketList
public import SkiffDomain

extension SQLiteBucketListStore {
    // MARK: Bucket lists

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        try await pool.domainWrite { db in
            let stored = try BucketListLifecycle.createList(
                list,
                ownedNameKeys: try String.fetchAll(
                    db.cachedStatement(sql: "SELECT nameKey FROM bucketList WHERE ownerID = ?"),
                    arguments: [list.ownerID]
                ),
                limit: limit,
                listIDTaken: try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM bucketList WHERE id = ?"),
                    arguments: [list.id]
                )
                    != nil
            )
            try db.executeCached(
                sql: """
                    INSERT INTO bucketList (id, ownerID, name, nameKey, description, visibility, createdAt, updatedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    stored.id, stored.ownerID, stored.fields.name, stored.fields.nameKey, stored.fields.description,
                    stored.fields.visibility.rawValue, stored.createdAt.millisecondsSince1970,
                    stored.updatedAt.millisecondsSince1970,
                ]
            )
            return stored
        }
    }

    public func list(id: String) async throws -> BucketList? {
        try await pool.domainRead { db in try BucketListRow.fetchOne(db, id: id) }
    }

    public func updateList(
        id: String,
        ownerID: String,
        changes: BucketListChanges,
        now: Date
    ) async throws
        -> BucketList
    {
        try await pool.domainWrite { db in
            let change = try BucketListLifecycle.updateList(
                try BucketListRow.fetchOne(db, id: id),
                ownerID: ownerID,
                changes: changes,
                otherNameKeys: try String.fetchAll(
                    db.cachedStatement(sql: "SELECT nameKey FROM bucketList WHERE ownerID = ? AND id != ?"),
                    arguments: [ownerID, id]
                ),
                now: now
            )
            guard change.changed else { return change.value }
            let fields = change.value.fields
            try db.executeCached(
                sql: """
                    UPDATE bucketList SET name = ?, nameKey = ?, description = ?, visibility = ?, updatedAt = ?
                    WHERE id = ?
                    """,
                arguments: [
                    fields.name, fields.nameKey, fields.description, fields.visibility.rawValue,
                    change.value.updatedAt.millisecondsSince1970, id,
                ]
            )
            return change.value
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try await pool.domainWrite { db in
            _ = try BucketListLifecycle.ownedList(try BucketListRow.fetchOne(db, id: id), ownerID: ownerID)
            try db.executeCached(sql: "DELETE FROM bucketList WHERE id = ?", arguments: [id])
        }
    }

    public func lists(ownerID: String, includePrivate: Bool, page: PageRequest) async throws -> Page<BucketList> {
        let scope = ownerID + (includePrivate ? "|all" : "|public")
        let cursor = try BucketListPaging.cursor(page, .lists, scope: scope)
        let fetched = try await pool.domainRead { db in
            var sql = BucketListRow.select + " WHERE l.ownerID = ?"
            var arguments: StatementArguments = [ownerID]
            if !includePrivate { sql += " AND l.visibility = 'public'" }
            if let cursor {
                sql += " AND l.createdAt >= ? AND (l.createdAt > ? OR (l.createdAt = ? AND l.id > ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY l.createdAt, l.id LIMIT ?"
            arguments += [page.size + 1]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(BucketListRow.list)
        }
        return BucketListPaging.makePage(fetched, .lists, scope: scope, size: page.size) {
            ($0.createdAt.millisecondsSince1970, $0.id)
        }
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
        try await pool.domainWrite { db in
            let entry = try BucketListLifecycle.addEntry(
                list: try BucketListRow.fetchOne(db, id: listID),
                ownerID: ownerID,
                activity: try ActivityRow.fetchOne(db, id: activityID),
                entryExists: try Self.entryExists(db, listID: listID, activityID: activityID),
                entryCount: try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM bucketListEntry WHERE listID = ?"),
                    arguments: [listID]
                ) ?? 0,
                limit: limit,
                now: now
            )
            try db.executeCached(
                sql: """
                    INSERT INTO bucketListEntry (listID, activityID, addedAt, position)
                    VALUES (?, ?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM bucketListEntry WHERE listID = ?))
                    """,
                arguments: [listID, activityID, entry.addedAt.millisecondsSince1970, listID]
            )
            return entry
        }
    }

    public func removeEntry(listID: String, ownerID: String, activityID: String) async throws {
        try await pool.domainWrite { db in
            try BucketListLifecycle.removeEntry(
                list: try BucketListRow.fetchOne(db, id: listID),
                ownerID: ownerID,
                entryExists: try Self.entryExists(db, listID: listID, activityID: activityID)
            )
            try db.executeCached(
                sql: "DELETE FROM bucketListEntry WHERE listID = ? AND activityID = ?",
                arguments: [listID, activityID]
            )
        }
    }

    public func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws -> BucketListEntry {
        try await pool.domainWrite { db in
            let entry = try BucketListLifecycle.setCompletion(
                list: try BucketListRow.fetchOne(db, id: listID),
                ownerID: ownerID,
                entry: try EntryRow.fetchOne(db, listID: listID, activityID: activityID),
                completion: completion
            )
            try db.executeCached(
                sql: "UPDATE bucketListEntry SET completedAt = ?, note = ? WHERE listID = ? AND activityID = ?",
                arguments: [
                    entry.completion?.completedAt.millisecondsSince1970, entry.completion?.note ?? "", listID,
                    activityID,
                ]
            )
            return entry
        }
    }

    private static func entryExists(_ db: Database, listID: String, activityID: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM bucketListEntry WHERE listID = ? AND activityID = ?"),
            arguments: [listID, activityID]
        ) != nil
    }

    public func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry> {
        let cursor = try BucketListPaging.cursor(page, .entries, scope: listID)
        let fetched = try await pool.domainRead { db in
            guard
                try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM bucketList WHERE id = ?"), arguments: [listID])
                    != nil
            else { throw BucketListStoreError.listNotFound }
            var sql = EntryRow.select + " WHERE e.listID = ?"
            var arguments: StatementArguments = [listID]
            if let cursor {
                sql += " AND e.position > ?"
                arguments += [cursor.t]
            }
            sql += " ORDER BY e.position LIMIT ?"
            arguments += [page.size + 1]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row -> (Int64, BucketListEntry) in
                (row["position"], EntryRow.entry(row))
            }
        }
        return BucketListPaging.makePage(fetched, .entries, scope: listID, size: page.size) {
            ($0.0, $0.1.activity.id)
        }.map(\.1)
    }

    // MARK: Follows

    public func follow(followerID: String, followeeID: String, now: Date) async throws -> Follow {
        try await pool.domainWrite { db in
            let since = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT followedAt FROM userFollow WHERE followerID = ? AND followeeID = ?"),
                arguments: [followerID, followeeID]
            )
            let change = BucketListLifecycle.follow(
                followerID: followerID,
                followeeID: followeeID,
                since: since.map(Date.init(millisecondsSince1970:)),
                now: now
            )
            if change.changed {
                try db.executeCached(
                    sql: "INSERT INTO userFollow (followerID, followeeID, followedAt) VALUES (?, ?, ?)",
                    arguments: [followerID, followeeID, change.value.followedAt.millisecondsSince1970]
                )
            }
            return change.value
        }
    }

    public func unfollow(followerID: String, followeeID: String) async throws {
        try await pool.domainWrite { db in
            try db.executeCached(
                sql: "DELETE FROM userFollow WHERE followerID = ? AND followeeID = ?",
                arguments: [followerID, followeeID]
            )
        }
    }

    public func followers(userID: String, page: PageRequest) async throws -> Page<Follow> {
        try await follows(of: userID, page: page, kind: .followers, mine: "followeeID", other: "followerID")
    }

    public func following(userID: String, page: PageRequest) async throws -> Page<Follow> {
        try await follows(of: userID, page: page, kind: .following, mine: "followerID", other: "followeeID")
    }

    /// Follows where column `mine` is the user, most recent first, listing column `other`.
    private func follows(
        of userID: String,
        page: PageRequest,
        kind: BucketListPaging.Kind,
        mine: String,
        other: String
    ) async throws -> Page<Follow> {
        let cursor = try BucketListPaging.cursor(page, kind, scope: userID)
        let fetched = try await pool.domainRead { db in
            var sql = "SELECT \(other) AS userID, followedAt FROM userFollow WHERE \(mine) = ?"
            var arguments: StatementArguments = [userID]
            if let cursor {
                sql += " AND followedAt <= ? AND (followedAt < ? OR (followedAt = ? AND \(other) < ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY followedAt DESC, \(other) DESC LIMIT ?"
            arguments += [page.size + 1]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                Follow(userID: row["userID"], followedAt: Date(millisecondsSince1970: row["followedAt"]))
            }
        }
        return BucketListPaging.makePage(fetched, kind, scope: userID, size: page.size) {
            ($0.followedAt.millisecondsSince1970, $0.userID)
        }
    }

    public func profile(userID: String, viewerID: String?) async throws -> ProfileCounts {
        let includePrivate = viewerID == userID
        return try await pool.domainRead { db in
            func count(_ sql: String, _ arguments: StatementArguments) throws -> Int {
                try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0
            }
            let visible = includePrivate ? "" : " AND l.visibility = 'public'"
            var followed = false
            if let viewerID {
                followed =
                    try count(
                        "SELECT COUNT(*) FROM userFollow WHERE followerID = ? AND followeeID = ?",
                        [viewerID, userID]
                    ) > 0
            }
            return ProfileCounts(
                activityCount: try count("SELECT COUNT(*) FROM activity WHERE ownerID = ?", [userID]),
                listCount: try count("SELECT COUNT(*) FROM bucketList l WHERE l.ownerID = ?" + visible, [userID]),
                completedActivityCount: try count(
                    """
                    SELECT COUNT(DISTINCT e.activityID) FROM bucketListEntry e JOIN bucketList l ON l.id = e.listID
                    WHERE l.ownerID = ? AND e.completedAt IS NOT NULL
                    """ + visible,
                    [userID]
                ),
                followerCount: try count("SELECT COUNT(*) FROM userFollow WHERE followeeID = ?", [userID]),
                followingCount: try count("SELECT COUNT(*) FROM userFollow WHERE followerID = ?", [userID]),
                followedByViewer: followed
            )
        }
    }
}
