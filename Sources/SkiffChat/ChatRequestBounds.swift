public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every Chat request, checked first in each RPC (and on each message of Connect) —
/// before authentication, any store access or rule — in time linear in the limits, not in the request.
///
/// Each limit is in UTF-8 bytes (strings) or elements (repeated fields) and documented on the field in
/// `chat.proto`; the character limits of ``ChatConfiguration`` apply afterwards. Violations are
/// INVALID_ARGUMENT naming the field and its limit.
public enum ChatRequestBounds {
    /// The longest id (user, conversation, listing, image, bid, sale, item), and a Connect `request_id`.
    public static let idBytes = RequestBounds.idBytes
    /// The longest message text (4,000 characters of up to 4 bytes).
    public static let textBytes = 16_000
    /// The longest `client_message_id` (64 characters of up to 4 bytes).
    public static let clientMessageIDBytes = 256
    /// The longest page token.
    public static let pageTokenBytes = RequestBounds.pageTokenBytes
    /// The most notifications in one PublishNotifications call.
    public static let notifications = 1_000
    /// The longest notification idempotency key (256 characters of up to 4 bytes).
    public static let idempotencyKeyBytes = 1_024
    /// The longest title in a notification (a listing's or an item's: 80 characters of up to 4 bytes).
    public static let titleBytes = 320
    /// The longest listing-comment excerpt in a notification (200 characters of up to 4 bytes).
    public static let excerptBytes = 800

    /// SendMessage (also inside Connect): ids, text and client message id.
    public static func check(_ request: Skiff_Chat_V1_SendMessageRequest) throws(DomainError) {
        try RequestBounds.check(request.recipientID, "recipient_id", atMost: idBytes)
        try RequestBounds.check(request.text, "text", atMost: textBytes)
        try RequestBounds.check(request.imageID, "image_id", atMost: idBytes)
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
        try RequestBounds.check(request.clientMessageID, "client_message_id", atMost: clientMessageIDBytes)
    }

    /// ListConversations: page size and page token.
    public static func check(_ request: Skiff_Chat_V1_ListConversationsRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// GetConversation: the conversation id.
    public static func check(_ request: Skiff_Chat_V1_GetConversationRequest) throws(DomainError) {
        try RequestBounds.check(request.conversationID, "conversation_id", atMost: idBytes)
    }

    /// ListMessages: the conversation id.
    public static func check(_ request: Skiff_Chat_V1_ListMessagesRequest) throws(DomainError) {
        try RequestBounds.check(request.conversationID, "conversation_id", atMost: idBytes)
    }

    /// MarkRead (also inside Connect): the conversation id.
    public static func check(_ request: Skiff_Chat_V1_MarkReadRequest) throws(DomainError) {
        try RequestBounds.check(request.conversationID, "conversation_id", atMost: idBytes)
    }

    /// BlockUser: the user id.
    public static func check(_ request: Skiff_Chat_V1_BlockUserRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
    }

    /// UnblockUser: the user id.
    public static func check(_ request: Skiff_Chat_V1_UnblockUserRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
    }

    /// ListBlockedUsers: page size and page token.
    public static func check(_ request: Skiff_Chat_V1_ListBlockedUsersRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// One message of Connect: its request id, then what it carries.
    public static func check(_ request: Skiff_Chat_V1_ConnectRequest) throws(DomainError) {
        try RequestBounds.check(request.requestID, "request_id", atMost: idBytes)
        switch request.request {
        case .sendMessage(let send): try check(send)
        case .markRead(let mark): try check(mark)
        case .subscribe, nil: break
        }
    }

    /// OpenConversation: the three ids.
    public static func check(_ request: Skiff_Chat_V1_OpenConversationRequest) throws(DomainError) {
        try RequestBounds.check(request.firstUserID, "first_user_id", atMost: idBytes)
        try RequestBounds.check(request.secondUserID, "second_user_id", atMost: idBytes)
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// PublishNotifications: the number of notifications, then each one's strings.
    public static func check(_ request: Skiff_Chat_V1_PublishNotificationsRequest) throws(DomainError) {
        try RequestBounds.checkCount(
            request.notifications.count,
            "notifications",
            atMost: notifications,
            unit: "notifications"
        )
        for notification in request.notifications {
            try RequestBounds.check(notification.userID, "notifications.user_id", atMost: idBytes)
            try RequestBounds.check(
                notification.idempotencyKey,
                "notifications.idempotency_key",
                atMost: idempotencyKeyBytes
            )
            switch notification.kind {
            case .bid(let bid):
                try RequestBounds.check(bid.bidID, "notifications.bid.bid_id", atMost: idBytes)
                try RequestBounds.check(bid.listingID, "notifications.bid.listing_id", atMost: idBytes)
                try RequestBounds.check(bid.saleID, "notifications.bid.sale_id", atMost: idBytes)
            case .listing(let listing):
                try RequestBounds.check(listing.listingID, "notifications.listing.listing_id", atMost: idBytes)
                try RequestBounds.check(listing.title, "notifications.listing.title", atMost: titleBytes)
            case .lostFoundMatch(let match):
                try RequestBounds.check(
                    match.lostItemID,
                    "notifications.lost_found_match.lost_item_id",
                    atMost: idBytes
                )
                try RequestBounds.check(
                    match.foundItemID,
                    "notifications.lost_found_match.found_item_id",
                    atMost: idBytes
                )
                try RequestBounds.check(
                    match.foundItemTitle,
                    "notifications.lost_found_match.found_item_title",
                    atMost: titleBytes
                )
            case .listingComment(let comment):
                let prefix = "notifications.listing_comment."
                try RequestBounds.check(comment.listingID, prefix + "listing_id", atMost: idBytes)
                try RequestBounds.check(comment.listingTitle, prefix + "listing_title", atMost: titleBytes)
                try RequestBounds.check(comment.commentID, prefix + "comment_id", atMost: idBytes)
                try RequestBounds.check(comment.authorID, prefix + "author_id", atMost: idBytes)
                try RequestBounds.check(comment.excerpt, prefix + "excerpt", atMost: excerptBytes)
            case nil: break
            }
        }
    }
}
