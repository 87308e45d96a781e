public import Foundation

/// Something that happened which a user should hear about on their live feed, produced by a service
/// other than Chat (Bids, Listings, LostFound).
///
/// The Chat service owns the feed: it numbers each user's events and stores them so a client that
/// reconnects gets everything it missed. Other services never touch the Chat store; they publish
/// through a ``FeedPublisher``.
public struct FeedNotification: Hashable, Sendable {
    /// The kinds of notification, with what each carries.
    public enum Kind: Hashable, Sendable {
        /// A bid or sale changed (placed, accepted, rejected, countered, …).
        case bid(Bid)
        /// A listing the user saved changed (price, sold, withdrawn, details).
        case listing(Listing)
        /// A found item may be the user's lost one.
        case lostFoundMatch(LostFoundMatch)
        /// Someone commented on the user's listing, or its seller answered the user's comment.
        case listingComment(ListingComment)
    }

    /// A bid notification.
    public struct Bid: Hashable, Sendable {
        /// What happened, spelled as the Bids API spells its event kinds (`placed`, `accepted`,
        /// `rejected`, `countered`, `withdrawn`, `superseded`, `counter_accepted`,
        /// `counter_declined`, `handoff_confirmed`, `completed`).
        public var kind: String
        public var bidID: String
        public var listingID: String
        /// The sale, for acceptances and hand-offs.
        public var saleID: String?
        /// The amount the event is about (the bid, the counter-offer or the sale), in cents.
        public var amountCents: Int64

        public init(kind: String, bidID: String, listingID: String, saleID: String? = nil, amountCents: Int64) {
            self.kind = kind
            self.bidID = bidID
            self.listingID = listingID
            self.saleID = saleID
            self.amountCents = amountCents
        }
    }

    /// A saved-listing notification.
    public struct Listing: Hashable, Sendable {
        /// What happened: `price_changed`, `sold`, `withdrawn` or `updated`.
        public var kind: String
        public var listingID: String
        /// The listing's title after the change.
        public var title: String
        public var newPriceCents: Int64
        public var oldPriceCents: Int64

        public init(kind: String, listingID: String, title: String, newPriceCents: Int64, oldPriceCents: Int64) {
            self.kind = kind
            self.listingID = listingID
            self.title = title
            self.newPriceCents = newPriceCents
            self.oldPriceCents = oldPriceCents
        }
    }

    /// A lost-and-found match notification, sent to the reporter of the lost item.
    public struct LostFoundMatch: Hashable, Sendable {
        /// The user's lost item.
        public var lostItemID: String
        /// The found item that may be it.
        public var foundItemID: String
        /// The found item's title.
        public var foundItemTitle: String
        /// How good the match is, from 0 to 1 (see LostFound's matching rules).
        public var score: Double

        public init(lostItemID: String, foundItemID: String, foundItemTitle: String, score: Double) {
            self.lostItemID = lostItemID
            self.foundItemID = foundItemID
            self.foundItemTitle = foundItemTitle
            self.score = score
        }
    }

    /// A listing-comment notification: to the seller for a comment by someone else, to a comment's
    /// author for the seller's reply.
    public struct ListingComment: Hashable, Sendable {
        /// What happened: `commented` or `replied`.
        public var kind: String
        public var listingID: String
        /// The listing's title.
        public var listingTitle: String
        /// The new comment.
        public var commentID: String
        /// Its author; empty for the reply of an anonymous listing's seller.
        public var authorID: String
        /// The start of its text.
        public var excerpt: String

        public init(
            kind: String,
            listingID: String,
            listingTitle: String,
            commentID: String,
            authorID: String,
            excerpt: String
        ) {
            self.kind = kind
            self.listingID = listingID
            self.listingTitle = listingTitle
            self.commentID = commentID
            self.authorID = authorID
            self.excerpt = excerpt
        }
    }

    /// The user told.
    public var userID: String
    /// A key unique to this notification for this user, so publishing twice (a retry after a
    /// timeout, a replay after a crash) delivers it once: for example `bids:<sequence>`.
    public var idempotencyKey: String
    /// What happened.
    public var kind: Kind
    /// When it happened, by the producing service's clock.
    public var occurredAt: Date

    public init(userID: String, idempotencyKey: String, kind: Kind, occurredAt: Date) {
        self.userID = userID
        self.idempotencyKey = idempotencyKey
        self.kind = kind
        self.occurredAt = occurredAt
    }
}

/// Where services publish notifications for users' live feeds.
///
/// Chat implements it; other services receive one at construction (in one process, the Chat
/// service's typed client over the in-process transport; apart, the same client over Skiff/TCP).
/// Publishing is idempotent per ``FeedNotification/idempotencyKey``.
public protocol FeedPublisher: Sendable {
    /// Records the notifications and delivers them to connected feeds. Throws if they could not
    /// be recorded; the caller may retry with the same keys.
    func publish(_ notifications: [FeedNotification]) async throws
}

/// A publisher that drops everything: for a server run without Chat, and for tests that do not
/// look at the feed.
public struct NoFeed: FeedPublisher {
    public init() {}
    public func publish(_ notifications: [FeedNotification]) async throws {}
}
