import Foundation
public import SkiffAPI
import SkiffCore
import SkiffDomain
public import SkiffFeed
import SwiftProtobuf

extension ChatMessage {
    var proto: Skiff_Chat_V1_Message {
        .with {
            $0.conversationID = conversationID
            $0.sequence = sequence
            $0.senderID = senderID
            $0.recipientID = recipientID
            $0.text = text
            $0.imageID = imageID ?? ""
            $0.listingID = listingID ?? ""
            $0.sentAt = Google_Protobuf_Timestamp(date: sentAt)
            $0.clientMessageID = clientMessageID ?? ""
        }
    }
}

extension ConversationSummary {
    func proto(viewerID: String) -> Skiff_Chat_V1_Conversation {
        .with {
            $0.conversationID = conversation.id
            $0.otherUserID = conversation.otherUser(than: viewerID)
            $0.listingID = conversation.listingID ?? ""
            if let lastMessage { $0.lastMessage = lastMessage.proto }
            $0.unreadCount = unreadCount(for: viewerID)
            $0.readUpTo = conversation.readUpTo(viewerID)
            $0.otherReadUpTo = conversation.readUpTo(conversation.otherUser(than: viewerID))
            $0.createdAt = Google_Protobuf_Timestamp(date: conversation.createdAt)
            $0.lastActivityAt = Google_Protobuf_Timestamp(date: conversation.lastActivityAt)
        }
    }
}

extension FeedEvent {
    var proto: Skiff_Chat_V1_FeedEvent {
        .with {
            $0.sequence = sequence
            $0.occurredAt = Google_Protobuf_Timestamp(date: occurredAt)
            switch payload {
            case .message(let message): $0.message = message.proto
            case .readReceipt(let receipt):
                $0.readReceipt = .with {
                    $0.conversationID = receipt.conversationID
                    $0.readerID = receipt.readerID
                    $0.readUpTo = receipt.readUpTo
                }
            case .notification(.bid(let bid)): $0.bid = bid.proto
            case .notification(.listing(let listing)): $0.listing = listing.proto
            case .notification(.lostFoundMatch(let match)): $0.lostFoundMatch = match.proto
            case .notification(.listingComment(let comment)): $0.listingComment = comment.proto
            }
        }
    }
}

extension FeedNotification.Bid {
    static let kinds: [String: Skiff_Chat_V1_BidUpdateKind] = [
        "placed": .placed, "accepted": .accepted, "rejected": .rejected, "countered": .countered,
        "withdrawn": .withdrawn, "superseded": .superseded, "counter_accepted": .counterAccepted,
        "counter_declined": .counterDeclined, "handoff_confirmed": .handoffConfirmed, "completed": .completed,
    ]

    var proto: Skiff_Chat_V1_BidUpdate {
        .with {
            $0.kind = Self.kinds[kind] ?? .unspecified
            $0.bidID = bidID
            $0.listingID = listingID
            $0.saleID = saleID ?? ""
            $0.amountCents = amountCents
        }
    }

    init(proto: Skiff_Chat_V1_BidUpdate) throws(DomainError) {
        guard let kind = Self.kinds.first(where: { $0.value == proto.kind })?.key else {
            throw DomainError(.invalidArgument, "bid.kind is not set to a known kind.")
        }
        self.init(
            kind: kind,
            bidID: proto.bidID,
            listingID: proto.listingID,
            saleID: proto.saleID.isEmpty ? nil : proto.saleID,
            amountCents: proto.amountCents
        )
    }
}

extension FeedNotification.Listing {
    static let kinds: [String: Skiff_Chat_V1_ListingUpdateKind] = [
        "price_changed": .priceChanged, "sold": .sold, "withdrawn": .withdrawn, "updated": .updated,
    ]

    var proto: Skiff_Chat_V1_ListingUpdate {
        .with {
            $0.kind = Self.kinds[kind] ?? .unspecified
            $0.listingID = listingID
            $0.title = title
            $0.newPriceCents = newPriceCents
            $0.oldPriceCents = oldPriceCents
        }
    }

    init(proto: Skiff_Chat_V1_ListingUpdate) throws(DomainError) {
        guard let kind = Self.kinds.first(where: { $0.value == proto.kind })?.key else {
            throw DomainError(.invalidArgument, "listing.kind is not set to a known kind.")
        }
        self.init(
            kind: kind,
            listingID: proto.listingID,
            title: proto.title,
            newPriceCents: proto.newPriceCents,
            oldPriceCents: proto.oldPriceCents
        )
    }
}

extension FeedNotification.ListingComment {
    static let kinds: [String: Skiff_Chat_V1_ListingCommentKind] = ["commented": .commented, "replied": .replied]

    var proto: Skiff_Chat_V1_ListingCommentUpdate {
        .with {
            $0.kind = Self.kinds[kind] ?? .unspecified
            $0.listingID = listingID
            $0.listingTitle = listingTitle
            $0.commentID = commentID
            $0.authorID = authorID
            $0.excerpt = excerpt
        }
    }

    init(proto: Skiff_Chat_V1_ListingCommentUpdate) throws(DomainError) {
        guard let kind = Self.kinds.first(where: { $0.value == proto.kind })?.key else {
            throw DomainError(.invalidArgument, "listing_comment.kind is not set to a known kind.")
        }
        self.init(
            kind: kind,
            listingID: proto.listingID,
            listingTitle: proto.listingTitle,
            commentID: proto.commentID,
            authorID: proto.authorID,
            excerpt: proto.excerpt
        )
    }
}

extension FeedNotification.LostFoundMatch {
    var proto: Skiff_Chat_V1_LostFoundMatch {
        .with {
            $0.lostItemID = lostItemID
            $0.foundItemID = foundItemID
            $0.foundItemTitle = foundItemTitle
            $0.score = score
        }
    }
}

extension FeedNotification {
    /// The wire form, for publishers that go through the Chat client.
    public var proto: Skiff_Chat_V1_Notification {
        .with {
            $0.userID = userID
            $0.idempotencyKey = idempotencyKey
            $0.occurredAt = Google_Protobuf_Timestamp(date: occurredAt)
            switch kind {
            case .bid(let bid): $0.bid = bid.proto
            case .listing(let listing): $0.listing = listing.proto
            case .lostFoundMatch(let match): $0.lostFoundMatch = match.proto
            case .listingComment(let comment): $0.listingComment = comment.proto
            }
        }
    }

    /// Validates a notification from PublishNotifications.
    init(proto: Skiff_Chat_V1_Notification, index: Int, maximumIDLength: Int) throws(DomainError) {
        let field = "notifications[\(index)]"
        guard !proto.userID.isEmpty, proto.userID.count <= maximumIDLength else {
            throw DomainError(.invalidArgument, "\(field).user_id is empty or too long.")
        }
        guard !proto.idempotencyKey.isEmpty, proto.idempotencyKey.count <= 256 else {
            throw DomainError(.invalidArgument, "\(field).idempotency_key is empty or longer than 256 characters.")
        }
        let kind: Kind
        switch proto.kind {
        case .bid(let bid): kind = .bid(try FeedNotification.Bid(proto: bid))
        case .listing(let listing): kind = .listing(try FeedNotification.Listing(proto: listing))
        case .lostFoundMatch(let match):
            guard (0...1).contains(match.score) else {
                throw DomainError(.invalidArgument, "\(field).lost_found_match.score must be between 0 and 1.")
            }
            kind = .lostFoundMatch(
                .init(
                    lostItemID: match.lostItemID,
                    foundItemID: match.foundItemID,
                    foundItemTitle: match.foundItemTitle,
                    score: match.score
                )
            )
        case .listingComment(let comment): kind = .listingComment(try FeedNotification.ListingComment(proto: comment))
        case nil:
            throw DomainError(
                .invalidArgument,
                "\(field) has no kind: set bid, listing, lost_found_match or listing_comment."
            )
        }
        self.init(
            userID: proto.userID,
            idempotencyKey: proto.idempotencyKey,
            kind: kind,
            occurredAt: proto.hasOccurredAt ? proto.occurredAt.checkedDate : Date()
        )
    }
}

/// A ``FeedPublisher`` over the Chat service's typed client: what other services use, in process
/// or over Skiff/TCP. The client must carry the service token.
public struct ChatClientFeedPublisher: FeedPublisher {
    let client: Skiff_Chat_V1_Chat.Client

    public init(client: Skiff_Chat_V1_Chat.Client) {
        self.client = client
    }

    public func publish(_ notifications: [FeedNotification]) async throws {
        guard !notifications.isEmpty else { return }
        _ = try await client.publishNotifications(.with { $0.notifications = notifications.map(\.proto) })
    }
}
