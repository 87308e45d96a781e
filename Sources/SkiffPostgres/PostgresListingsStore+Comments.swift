public import Foundation
import PostgresNIO
public import SkiffDomain
public import SkiffListings

/// Comments on listings (`listing_comment`): by listing in posting order, by the comment replied to,
/// and by time for the feed relay, each from an index in its order.
///
/// A listing's comment count and latest date are read in the transaction that adds a comment: two
/// servers adding to one listing at once both read that range and write into it, so PostgreSQL aborts
/// one (SERIALIZABLE), which runs again and counts the other's comment.
extension PostgresListingsStore {
    public func addComment(_ comment: ListingComment) async throws -> AddedComment {
        try await storage.write { db in
            let listing = try await listing(db, id: comment.listingID)
            var parent: ListingComment?
            if let replyToID = comment.replyToID { parent = try await self.comment(db, id: replyToID) }
            var count = 0
            var latest: Int64?
            for try await (total, last) in try await db.run(
                "SELECT count(*), max(created_at) FROM listing_comment WHERE listing_id = \(comment.listingID)",
                storage
            ).decode((Int, Int64?).self) {
                (count, latest) = (total, last)
            }
            let (stored, notices) = try ListingLifecycle.addComment(
                comment,
                listing: listing,
                parent: parent,
                commentCount: count,
                latestCommentAt: latest.map(Date.init(millisecondsSince1970:)),
                commentIDTaken: try await db.exists("SELECT 1 FROM listing_comment WHERE id = \(comment.id)", storage)
            )
            guard let listing else { throw ListingsStoreError.listingNotFound }  // the lifecycle checked it
            try await db.run(
                """
                INSERT INTO listing_comment (id, listing_id, author_id, reply_to_id, text, created_at)
                VALUES (\(stored.id), \(stored.listingID), \(stored.authorID), \(stored.replyToID), \(stored.text),
                    \(stored.createdAt.millisecondsSince1970))
                """,
                storage
            )
            return AddedComment(comment: stored, listing: listing, notices: notices)
        }
    }

    public func comment(id: String) async throws -> ListingComment? {
        try await storage.read { db in try await comment(db, id: id) }
    }

    public func comments(listingID: String, page: PageRequest) async throws -> Page<ListingComment> {
        let cursor = try ListingsPaging.commentCursor(page, listingID: listingID)
        var query = PostgresQueryBuilder(
            "SELECT \(ListingCommentRows.columns) FROM listing_comment WHERE listing_id = "
        )
        query.append(query.bind(listingID))
        if let cursor {
            let t = query.bind(cursor.t)
            query.append(
                " AND created_at >= \(t) AND (created_at > \(t) OR (created_at = \(t) AND id > \(query.bind(cursor.i))))"
            )
        }
        query.append(" ORDER BY created_at, id LIMIT \(query.bind(page.size + 1))")
        let fetched = try await storage.read { db in try await ListingCommentRows.comments(db.run(query.query, storage))
        }
        return ListingsPaging.commentPage(fetched, size: page.size, listingID: listingID)
    }

    public func deleteComment(id: String, by userID: String) async throws -> [String] {
        try await storage.write { db in
            let found = try await comment(db, id: id)
            var listing: Listing?
            if let found { listing = try await self.listing(db, id: found.listingID) }
            let comment = try ListingLifecycle.deleteComment(
                found,
                listing: listing,
                by: userID
            )
            // The replies, oldest first (then id ascending): RETURNING has no order of its own.
            var replies: [(time: Int64, id: String)] = []
            for try await (replyID, time) in try await db.run(
                "DELETE FROM listing_comment WHERE reply_to_id = \(comment.id) RETURNING id, created_at",
                storage
            ).decode((String, Int64).self) {
                replies.append((time, replyID))
            }
            replies.sort { $0.time == $1.time ? $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) : $0.time < $1.time }
            try await db.run("DELETE FROM listing_comment WHERE id = \(comment.id)", storage)
            return [comment.id] + replies.map(\.id)
        }
    }

    public func comments(since date: Date, limit: Int) async throws -> [ListingComment] {
        try await storage.read { db in
            try await ListingCommentRows.comments(
                db.run(
                    """
                    SELECT \(unescaped: ListingCommentRows.columns) FROM listing_comment
                    WHERE created_at >= \(date.millisecondsSince1970)
                    ORDER BY created_at, id
                    LIMIT \(max(limit, 0))
                    """,
                    storage
                )
            )
        }
    }

    /// The comment with this id, in this transaction.
    func comment(_ db: PostgresConnection, id: String) async throws -> ListingComment? {
        try await ListingCommentRows.comments(
            db.run("SELECT \(unescaped: ListingCommentRows.columns) FROM listing_comment WHERE id = \(id)", storage)
        ).first
    }
}
