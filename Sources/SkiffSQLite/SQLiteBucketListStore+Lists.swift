import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain

extension SQLiteBucketListStore {
    // MARK: Bucket lists

    /// The list `id` of `ownerID`, or the ownership error (see ``SkiffBucketList/BucketListStore``).
    private static func ownedList(_ db: Database, _ id: String, ownerID: String) throws -> BucketList {
        guard let list = try BucketListRow.fetchOne(db, id: id) else { throw BucketListStoreError.listNotFound }
        guard list.ownerID == ownerID else { throw BucketListStoreError.notOwner(of: list) }
        return list
    }

    public func createList(_ list: BucketList, limit: Int) async throws -> BucketList {
        var stored = list
        stored.createdAt = list.createdAt.roundedToMilliseconds
        stored.updatedAt = list.updatedAt.roundedToMilliseconds
        stored.pendingCount = 0
        stored.completedCount = 0
        let value = stored
        return try await pool.domainWrite { db in
            let nameTaken = try Bool.fetchOne(
                db,
                sql: "SELECT 1 FROM bucketList WHERE ownerID = ? AND nameKey = ?",
                arguments: [value.ownerID, value.fields.nameKey]
            )
            guard nameTaken == nil else { throw BucketListStoreError.listNameTaken }
            let count =
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM bucketList WHERE ownerID = ?",
                    arguments: [value.ownerID]
                )
                ?? 0
            guard count < limit else { throw BucketListStoreError.listLimit }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM bucketList WHERE id = ?", arguments: [value.id]) == nil
            else { throw BucketListStoreError.listIDTaken }
            try db.execute(
                sql: """
                    INSERT INTO bucketList (id, ownerID, name, nameKey, description, visibility, createdAt, updatedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    value.id, value.ownerID, value.fields.name, value.fields.nameKey, value.fields.description,
                    value.fields.visibility.rawValue, value.createdAt.millisecondsSince1970,
                    value.updatedAt.millisecondsSince1970,
                ]
            )
            return value
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
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            var list = try Self.ownedList(db, id, ownerID: ownerID)
            let fields = changes.applied(to: list.fields)
            guard fields != list.fields else { return list }
            let nameTaken = try Bool.fetchOne(
                db,
                sql: "SELECT 1 FROM bucketList WHERE ownerID = ? AND nameKey = ? AND id != ?",
                arguments: [ownerID, fields.nameKey, id]
            )
            guard nameTaken == nil else { throw BucketListStoreError.listNameTaken }
            list.fields = fields
            list.updatedAt = now
            try db.execute(
                sql: """
                    UPDATE bucketList SET name = ?, nameKey = ?, description = ?, visibility = ?, updatedAt = ?
                    WHERE id = ?
                    """,
                arguments: [
                    fields.name, fields.nameKey, fields.description, fields.visibility.rawValue,
                    now.millisecondsSince1970, id,
                ]
            )
            return list
        }
    }

    public func deleteList(id: String, ownerID: String) async throws {
        try await pool.domainWrite { db in
            _ = try Self.ownedList(db, id, ownerID: ownerID)
            try db.execute(sql: "DELETE FROM bucketList WHERE id = ?", arguments: [id])
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
                sql += " AND (l.createdAt > ? OR (l.createdAt = ? AND l.id > ?))"
                arguments += [cursor.t, cursor.t, cursor.i]
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
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            _ = try Self.ownedList(db, listID, ownerID: ownerID)
            guard try ActivityRow.fetchOne(db, id: activityID) != nil else {
                throw BucketListStoreError.activityNotFound
            }
            guard
                try Bool.fetchOne(
                    db,
                    sql: "SELECT 1 FROM bucketListEntry WHERE listID = ? AND activityID = ?",
                    arguments: [listID, activityID]
                ) == nil
            else { throw BucketListStoreError.entryExists }
            let count =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bucketListEntry WHERE listID = ?", arguments: [listID])
                ?? 0
            guard count < limit else { throw BucketListStoreError.entryLimit }
            try db.execute(
                sql: "INSERT INTO bucketListEntry (listID, activityID, addedAt) VALUES (?, ?, ?)",
                arguments: [listID, activityID, now]
            )
            guard let entry = try EntryRow.fetchOne(db, listID: listID, activityID: activityID) else {
                throw BucketListStoreError.entryNotFound
            }
            return entry
        }
    }

    public func removeEntry(listID: String, ownerID: String, activityID: String) async throws {
        try await pool.domainWrite { db in
            _ = try Self.ownedList(db, listID, ownerID: ownerID)
            try db.execute(
                sql: "DELETE FROM bucketListEntry WHERE listID = ? AND activityID = ?",
                arguments: [listID, activityID]
            )
            guard db.changesCount == 1 else { throw BucketListStoreError.entryNotFound }
        }
    }

    public func setCompletion(
        listID: String,
        ownerID: String,
        activityID: String,
        completion: Completion?
    ) async throws -> BucketListEntry {
        try await pool.domainWrite { db in
            _ = try Self.ownedList(db, listID, ownerID: ownerID)
            try db.execute(
                sql: "UPDATE bucketListEntry SET completedAt = ?, note = ? WHERE listID = ? AND activityID = ?",
                arguments: [completion?.completedAt.millisecondsSince1970, completion?.note ?? "", listID, activityID]
            )
            guard db.changesCount == 1, let entry = try EntryRow.fetchOne(db, listID: listID, activityID: activityID)
            else { throw BucketListStoreError.entryNotFound }
            return entry
        }
    }

    public func entries(listID: String, page: PageRequest) async throws -> Page<BucketListEntry> {
        let cursor = try BucketListPaging.cursor(page, .entries, scope: listID)
        let fetched = try await pool.domainRead { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM bucketList WHERE id = ?", arguments: [listID]) != nil
            else { throw BucketListStoreError.listNotFound }
            var sql = EntryRow.select + " WHERE e.listID = ?"
            var arguments: StatementArguments = [listID]
            if let cursor {
                sql += " AND (e.addedAt > ? OR (e.addedAt = ? AND e.activityID > ?))"
                arguments += [cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY e.addedAt, e.activityID LIMIT ?"
            arguments += [page.size + 1]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(EntryRow.entry)
        }
        return BucketListPaging.makePage(fetched, .entries, scope: listID, size: page.size) {
            ($0.addedAt.millisecondsSince1970, $0.activity.id)
        }
    }

    // MARK: Follows

    public func follow(followerID: String, followeeID: String, now: Date) async throws -> Follow {
        precondition(followerID != followeeID, "A user cannot follow themselves")
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO userFollow (followerID, followeeID, followedAt) VALUES (?, ?, ?)
                    ON CONFLICT (followerID, followeeID) DO NOTHING
                    """,
                arguments: [followerID, followeeID, now]
            )
            let since =
                try Int64.fetchOne(
                    db,
                    sql: "SELECT followedAt FROM userFollow WHERE followerID = ? AND followeeID = ?",
                    arguments: [followerID, followeeID]
                ) ?? now
            return Follow(userID: followeeID, followedAt: Date(millisecondsSince1970: since))
        }
    }

    public func unfollow(followerID: String, followeeID: String) async throws {
        try await pool.domainWrite { db in
            try db.execute(
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
                sql += " AND (followedAt < ? OR (followedAt = ? AND \(other) < ?))"
                arguments += [cursor.t, cursor.t, cursor.i]
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
