public import Foundation
public import SkiffDomain

extension EntityID.Prefix {
    /// Listing comments (`lcm_`).
    public static let listingComment = EntityID.Prefix("lcm")
}

/// A public comment or question on a listing, or its seller's reply to one.
public struct ListingComment: Hashable, Sendable {
    /// The opaque id (`lcm_…`).
    public var id: String
    /// The listing it is about.
    public var listingID: String
    /// The user who wrote it.
    public var authorID: String
    /// The comment it answers (a reply by the seller), or `nil`.
    public var replyToID: String?
    /// 1–1000 characters, trimmed.
    public var text: String
    /// When it was posted; within a listing, later comments have later dates.
    public var createdAt: Date

    /// Creates a comment.
    public init(
        id: String,
        listingID: String,
        authorID: String,
        replyToID: String? = nil,
        text: String,
        createdAt: Date
    ) {
        self.id = id
        self.listingID = listingID
        self.authorID = authorID
        self.replyToID = replyToID
        self.text = text
        self.createdAt = createdAt
    }
}

/// Who is told of a new comment, and what: decided with the comment by
/// ``ListingLifecycle/addComment(_:listing:parent:commentCount:latestCommentAt:commentIDTaken:)``.
public struct ListingCommentNotice: Hashable, Sendable {
    /// What happened, for the user told.
    public enum Kind: String, Hashable, Sendable {
        /// Someone else commented on the user's listing.
        case commented
        /// The seller answered the user's comment.
        case replied
    }

    /// The user told.
    public var userID: String
    public var kind: Kind
    /// Whether the comment's author is to be shown (not for the reply of an anonymous listing's seller).
    public var showsAuthor: Bool

    public init(userID: String, kind: Kind, showsAuthor: Bool) {
        self.userID = userID
        self.kind = kind
        self.showsAuthor = showsAuthor
    }
}

extension ListingLifecycle {
    /// The most comments and replies a listing keeps.
    public static let maximumCommentsPerListing = 500
    /// The longest comment, in characters after trimming.
    public static let commentMaximumLength = 1_000
    /// The longest excerpt of a comment in a feed notification, in characters.
    public static let commentExcerptLength = 200
    /// The longest excerpt of a comment in a feed notification, in UTF-8 bytes (Chat's bound).
    public static let commentExcerptBytes = 800

    /// The start of a comment's text for a notification: whole characters, at most
    /// ``commentExcerptLength`` of them and ``commentExcerptBytes`` bytes.
    public static func commentExcerpt(_ text: String) -> String {
        var excerpt = ""
        var bytes = 0
        for character in text.prefix(commentExcerptLength) {
            bytes += character.utf8.count
            guard bytes <= commentExcerptBytes else { break }
            excerpt.append(character)
        }
        return excerpt
    }

    /// Checks and trims a comment's text: 1–1000 characters after trimming.
    public static func validateCommentText(_ text: String) throws(DomainError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw DomainError(.invalidArgument, "text is empty: write the comment.") }
        guard trimmed.count <= commentMaximumLength else {
            throw DomainError(.invalidArgument, "text is too long: use at most \(commentMaximumLength) characters.")
        }
        return trimmed
    }

    /// Decides a new comment on `listing` (or a reply to `parent`) by `comment.authorID`.
    ///
    /// Checked in this order: the listing exists and the author may see it (a withdrawn listing only by
    /// its seller), it is active, a reply is by the seller to a comment on the same listing that is not
    /// itself a reply, the listing has fewer than ``maximumCommentsPerListing`` comments, the id is free.
    ///
    /// - Parameters:
    ///   - listing: The listing, or `nil` if there is none.
    ///   - parent: The comment named by `comment.replyToID`, or `nil` if there is none (or none was named).
    ///   - commentCount: How many comments the listing has.
    ///   - latestCommentAt: The latest `createdAt` of the listing's comments, if any.
    ///   - commentIDTaken: Whether the id is taken.
    /// - Returns: The comment to insert, its date rounded to milliseconds and at least a millisecond after
    ///   `latestCommentAt` (so comments list in the order they were posted), and who to tell.
    public static func addComment(
        _ comment: ListingComment,
        listing: Listing?,
        parent: ListingComment?,
        commentCount: Int,
        latestCommentAt: Date?,
        commentIDTaken: Bool
    ) throws(DomainError) -> (comment: ListingComment, notices: [ListingCommentNotice]) {
        guard let listing, listing.status != .withdrawn || listing.sellerID == comment.authorID else {
            throw ListingsStoreError.listingNotFound
        }
        guard listing.status == .active else { throw ListingsStoreError.commentsClosed }
        if comment.replyToID != nil {
            guard let parent, parent.listingID == listing.id else { throw ListingsStoreError.replyTargetNotFound }
            guard comment.authorID == listing.sellerID else { throw ListingsStoreError.notSellerReply }
            guard parent.replyToID == nil else { throw ListingsStoreError.replyToReply }
        }
        guard commentCount < maximumCommentsPerListing else { throw ListingsStoreError.tooManyComments }
        guard !commentIDTaken else { throw ListingsStoreError.commentIDTaken }
        var stored = comment
        stored.createdAt = comment.createdAt.roundedToMilliseconds
        if let latest = latestCommentAt?.roundedToMilliseconds, stored.createdAt <= latest {
            stored.createdAt = latest.addingTimeInterval(0.001).roundedToMilliseconds
        }
        return (stored, commentNotices(stored, listing: listing, parent: parent))
    }

    /// Who is told of a stored comment: the seller of a comment by someone else; the author of the
    /// comment a seller's reply answers (unless that is the seller), without the seller's id when the
    /// listing is anonymous. The feed relay asks again for comments it publishes anew.
    ///
    /// - Parameters:
    ///   - listing: The comment's listing.
    ///   - parent: The comment it replies to, if any (`nil` if that one was deleted since).
    public static func commentNotices(
        _ comment: ListingComment,
        listing: Listing,
        parent: ListingComment?
    ) -> [ListingCommentNotice] {
        if comment.replyToID != nil {
            guard let parent, parent.authorID != listing.sellerID else { return [] }
            return [.init(userID: parent.authorID, kind: .replied, showsAuthor: !listing.anonymous)]
        }
        guard comment.authorID != listing.sellerID else { return [] }
        return [.init(userID: listing.sellerID, kind: .commented, showsAuthor: true)]
    }

    /// Decides the deletion of a comment by `userID`: its author or the listing's seller may.
    ///
    /// - Parameters:
    ///   - comment: The comment as stored, or `nil`.
    ///   - listing: Its listing, or `nil`.
    /// - Returns: The comment (the store deletes it and the replies to it).
    /// - Throws: `notFound`; `permissionDenied` unless `userID` wrote it or sells the listing.
    public static func deleteComment(
        _ comment: ListingComment?,
        listing: Listing?,
        by userID: String
    ) throws(DomainError) -> ListingComment {
        guard let comment else { throw ListingsStoreError.commentNotFound }
        guard comment.authorID == userID || listing?.sellerID == userID else {
            throw ListingsStoreError.notCommentAuthor
        }
        return comment
    }
}
