public import Foundation
public import SkiffDomain
public import SkiffFeed

/// Where the Chat service keeps conversations, messages, blocks and users' feeds.
///
/// Each method is one transaction. The store numbers messages per conversation and events per user,
/// so concurrent senders never share or skip a number; feed events are recorded in the same
/// transaction as the message or read mark they report. Implementations: `InMemoryChatStore`, and
/// `SQLiteChatStore` in SkiffSQLite. Both pass `ChatStoreConformanceTests`.
public protocol ChatStore: Sendable {
    /// Sends a message: finds or creates the pair's conversation for the draft's listing context,
    /// appends the message, moves the sender's read mark to it, and records a message event on both
    /// users' feeds.
    ///
    /// A draft with a `clientMessageID` the sender used before returns the stored message and records
    /// nothing.
    ///
    /// - Throws: ``ChatStoreError/blocked`` when either user blocked the other.
    func sendMessage(_ draft: MessageDraft, conversationID: String, now: Date) async throws -> SentMessage

    /// Finds the pair's conversation for a listing context, or creates it (with `newID`) without a
    /// message.
    func openConversation(
        between firstUserID: String,
        and secondUserID: String,
        listingID: String?,
        newID: String,
        now: Date
    ) async throws -> Conversation

    /// A conversation with its last message, or `nil`.
    func conversation(id: String) async throws -> ConversationSummary?

    /// A user's conversations, most recent activity first (then by id), paged.
    func conversations(userID: String, page: PageRequest) async throws -> Page<ConversationSummary>

    /// Messages of a conversation in ascending sequence order: the newest `limit` below `before`
    /// (or the newest overall when both cursors are `nil`), or the oldest `limit` above `after`.
    /// Returns one more than `limit` when there are more, so callers can tell.
    func messages(conversationID: String, before: Int64?, after: Int64?, limit: Int) async throws -> [ChatMessage]

    /// Moves a participant's read mark up to `sequence` and, when it moved, records a receipt on
    /// both participants' feeds.
    ///
    /// - Throws: ``ChatStoreError/conversationNotFound``, ``ChatStoreError/notParticipant``,
    ///   ``ChatStoreError/beyondLastMessage(_:)``.
    func markRead(
        conversationID: String,
        userID: String,
        upTo sequence: Int64,
        now: Date
    ) async throws
        -> ReadMarkUpdate

    /// Blocks a user (no change when already blocked).
    ///
    /// - Throws: ``ChatStoreError/tooManyBlocks(_:)`` past `limit`.
    func block(blockerID: String, blockedID: String, now: Date, limit: Int) async throws

    /// Unblocks a user (no change when not blocked).
    func unblock(blockerID: String, blockedID: String) async throws

    /// The users a user blocked, most recent first, paged.
    func blockedUsers(blockerID: String, page: PageRequest) async throws -> Page<BlockedUser>

    /// Records notifications on their users' feeds, skipping any whose (user, idempotency key) was
    /// recorded before. Returns the events recorded now, in order.
    func appendNotifications(_ notifications: [FeedNotification], now: Date) async throws -> [FeedEvent]

    /// A user's feed events after `sequence`, ascending, at most `limit`.
    func feedEvents(userID: String, after sequence: Int64, limit: Int) async throws -> [FeedEvent]

    /// The sequence of a user's last feed event (0 for an empty feed).
    func lastFeedSequence(userID: String) async throws -> Int64

    /// Deletes feed events (and notification idempotency keys) recorded before `date`, the end of
    /// the replay window; returns how many events. Numbering continues where it was.
    @discardableResult
    func pruneFeed(before date: Date) async throws -> Int
}

/// Failures the store reports; each carries the message a caller sees.
public enum ChatStoreError {
    public static let conversationNotFound = DomainError(.notFound, "No conversation has this conversation_id.")
    public static let notParticipant = DomainError(
        .permissionDenied,
        "Only the two participants of a conversation can read or mark it."
    )
    public static let blocked = DomainError(
        .permissionDenied,
        "This user does not accept your messages (one of you blocked the other)."
    )

    public static func beyondLastMessage(_ last: Int64) -> DomainError {
        DomainError(.outOfRange, "sequence is beyond the conversation's last message (\(last)).")
    }

    public static func tooManyBlocks(_ limit: Int) -> DomainError {
        DomainError(.resourceExhausted, "You can block at most \(limit) users: unblock someone first.")
    }
}
