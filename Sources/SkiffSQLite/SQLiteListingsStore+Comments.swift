public import Foundation
import GRDB
public import SkiffDomain
public import SkiffListings

/// Rows of `listingComment` (migration "listings-v4").
enum ListingCommentRow {
    static func comment(_ row: Row) -> ListingComment {
        ListingComment(
            id: row["id"],
            listingID: row["listingID"],
            authorID: row["authorID"],
            replyToID: row["replyToID"],
            text: row["text"],
            createdAt: Date(millisecondsSince1970: row["createdAt"])
        )
    }

    static func fetchOne(_ db: Database, id: String) throws -> ListingComment? {
        try db.fetchOneCached(sql: "SELECT * FROM listingComment WHERE id = ?", arguments: [id]).map(comment)
    }

    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments) throws -> [ListingComment] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map(comment)
    }
}

extension SQLiteListingsStore {
    public func addComment(_ comment: ListingComment) async throws -> AddedComment {
        try await pool.domainWrite { db in
            let listing = try ListingRow.fetchOne(db, id: comment.listingID)
            let summary = try db.fetchOneCached(
                sql: "SELECT COUNT(*) AS count, MAX(createdAt) AS latest FROM listingComment WHERE listingID = ?",
                arguments: [comment.listingID]
            )
            let latest: Int64? = summary?["latest"]
            let (stored, notices) = try ListingLifecycle.addComment(
                comment,
                listing: listing,
                parent: try comment.replyToID.flatMap { try ListingCommentRow.fetchOne(db, id: $0) },
                commentCount: summary?["count"] ?? 0,
                latestCommentAt: latest.map(Date.init(millisecondsSince1970:)),
                commentIDTaken: try Bool(exists: db, "SELECT 1 FROM listingComment WHERE id = ?", [comment.id])
            )
            guard let listing else { throw ListingsStoreError.listingNotFound }  // the lifecycle checked it
            try db.executeCached(
                sql: """
                    INSERT INTO listingComment (id, listingID, authorID, replyToID, text, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    stored.id, stored.listingID, stored.authorID, stored.replyToID, stored.text,
                    stored.createdAt.millisecondsSince1970,
                ]
            )
            return AddedComment(comment: stored, listing: listing, notices: notices)
        }
    }

    public func comment(id: String) async throws -> ListingComment? {
        try await pool.domainRead { db in try ListingCommentRow.fetchOne(db, id: id) }
    }

    public func comments(listingID: String, page: PageRequest) async throws -> Page<ListingComment> {
        let cursor = try ListingsPaging.commentCursor(page, listingID: listingID)
        return try await pool.domainRead { db in
            let fetched: [ListingComment]
            if let cursor {
                fetched = try ListingCommentRow.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM listingComment INDEXED BY listingComment_listingID_createdAt_id
                        WHERE listingID = ? AND createdAt >= ? AND (createdAt > ? OR id > ?)
                        ORDER BY createdAt, id LIMIT ?
                        """,
                    arguments: [listingID, cursor.t, cursor.t, cursor.i, page.size + 1]
                )
            } else {
                fetched = try ListingCommentRow.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM listingComment INDEXED BY listingComment_listingID_createdAt_id
                        WHERE listingID = ? ORDER BY createdAt, id LIMIT ?
                        """,
                    arguments: [listingID, page.size + 1]
                )
            }
            return ListingsPaging.commentPage(fetched, size: page.size, listingID: listingID)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws -> [String] {
        try await pool.domainWrite { db in
            let found = try ListingCommentRow.fetchOne(db, id: id)
            let comment = try ListingLifecycle.deleteComment(
                found,
                listing: try found.flatMap { try ListingRow.fetchOne(db, id: $0.listingID) },
                by: userID
            )
            let replies = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id FROM listingComment INDEXED BY listingComment_replyToID
                        WHERE replyToID = ? ORDER BY createdAt, id
                        """
                ),
                arguments: [comment.id]
            )
            try db.executeCached(sql: "DELETE FROM listingComment WHERE replyToID = ?", arguments: [comment.id])
            try db.executeCached(sql: "DELETE FROM listingComment WHERE id = ?", arguments: [comment.id])
            return [comment.id] + replies
        }
    }

    public func comments(since date: Date, limit: Int) async throws -> [ListingComment] {
        try await pool.domainRead { db in
            try ListingCommentRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM listingComment INDEXED BY listingComment_createdAt_id
                    WHERE createdAt >= ? ORDER BY createdAt, id LIMIT ?
                    """,
                arguments: [date.millisecondsSince1970, max(limit, 0)]
            )
        }
    }
}
