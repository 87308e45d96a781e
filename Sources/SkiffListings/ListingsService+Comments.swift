public import Foundation
import Logging
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SkiffFeed
import SwiftProtobuf

/// Public comments on listings and the sellers' replies; the seller (or the comment's author, for a
/// reply) is told on the feed.
extension ListingsService {
    public func addComment(
        request: Skiff_Listings_V1_AddCommentRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_AddCommentResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let text = try ListingLifecycle.validateCommentText(request.text)
        try limits.addComment.acquire(userID: user.id, now: time.now())
        let added = try await store.addComment(
            ListingComment(
                id: EntityID.make(.listingComment),
                listingID: request.listingID,
                authorID: user.id,
                replyToID: request.replyToCommentID.isEmpty ? nil : request.replyToCommentID,
                text: text,
                createdAt: time.now()
            )
        )
        await publish(Self.feedNotifications(for: added.comment, listing: added.listing, notices: added.notices))
        return .with { $0.comment = added.comment.proto(listing: added.listing, viewerID: user.id) }
    }

    public func listComments(
        request: Skiff_Listings_V1_ListCommentsRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_ListCommentsResponse {
        try ListingsRequestBounds.check(request)
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let viewer = context.user?.id
        guard let listing = try await store.listing(id: request.listingID),
            listing.status != .withdrawn || listing.sellerID == viewer || context.user?.isService == true
        else { throw Self.notFound(request.listingID) }
        let comments = try await store.comments(listingID: listing.id, page: page)
        return .with {
            $0.comments = comments.items.map { $0.proto(listing: listing, viewerID: viewer) }
            $0.nextPageToken = comments.nextPageToken ?? ""
        }
    }

    public func deleteComment(
        request: Skiff_Listings_V1_DeleteCommentRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_DeleteCommentResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.commentID.isEmpty else { throw DomainError(.invalidArgument, "comment_id is empty.") }
        let deleted = try await store.deleteComment(id: request.commentID, by: user.id)
        return .with { $0.deletedCommentIds = deleted }
    }

    /// Publishes to the feed, again, the notices of every comment posted since `date` that still
    /// exists — the relay that makes their delivery at-least-once (the feed ignores what it has).
    ///
    /// - Returns: The number of comments looked at.
    public func republishComments(since date: Date, limit: Int = 100_000) async throws -> Int {
        let comments = try await store.comments(since: date, limit: limit)
        var listings: [String: Listing] = [:]
        for comment in comments {
            if listings[comment.listingID] == nil {
                listings[comment.listingID] = try await store.listing(id: comment.listingID)
            }
            guard let listing = listings[comment.listingID] else { continue }
            var parent: ListingComment?
            if let replyToID = comment.replyToID { parent = try await store.comment(id: replyToID) }
            let notices = ListingLifecycle.commentNotices(comment, listing: listing, parent: parent)
            guard !notices.isEmpty else { continue }
            try await feed.publish(Self.feedNotifications(for: comment, listing: listing, notices: notices))
        }
        return comments.count
    }

    /// A comment's notices as feed notifications, keyed by the comment so that publishing them again
    /// delivers nothing twice.
    static func feedNotifications(
        for comment: ListingComment,
        listing: Listing,
        notices: [ListingCommentNotice]
    ) -> [FeedNotification] {
        notices.map { notice in
            FeedNotification(
                userID: notice.userID,
                idempotencyKey: "listing-comments:\(comment.id)",
                kind: .listingComment(
                    .init(
                        kind: notice.kind.rawValue,
                        listingID: listing.id,
                        listingTitle: listing.fields.title,
                        commentID: comment.id,
                        authorID: notice.showsAuthor ? comment.authorID : "",
                        excerpt: ListingLifecycle.commentExcerpt(comment.text)
                    )
                ),
                occurredAt: comment.createdAt
            )
        }
    }

    /// Publishes notifications; the comment is stored either way, and the relay publishes again.
    func publish(_ notifications: [FeedNotification]) async {
        guard !notifications.isEmpty else { return }
        do {
            try await feed.publish(notifications)
        } catch {
            logger.warning(
                "Could not publish a listing comment to the feed",
                metadata: ["error": "\(LogText.bounded(error))"]
            )
        }
    }
}

extension ListingComment {
    /// The wire comment as `viewerID` sees it: the seller of an anonymous listing is not named to others.
    func proto(listing: Listing, viewerID: String?) -> Skiff_Listings_V1_ListingComment {
        let bySeller = authorID == listing.sellerID
        return .with {
            $0.commentID = id
            $0.listingID = listingID
            $0.authorID = bySeller && listing.anonymous && viewerID != listing.sellerID ? "" : authorID
            $0.bySeller = bySeller
            $0.replyToCommentID = replyToID ?? ""
            $0.text = text
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
        }
    }
}
