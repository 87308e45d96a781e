public import Foundation
import SkiffDomain
public import SkiffFeed

/// One message in a conversation.
public struct ChatMessage: Hashable, Sendable {
    public var conversationID: String
    /// Its number in the conversation: 1, 2, 3, …
    public var sequence: Int64
    public var senderID: String
    public var recipientID: String
    public var text: String
    /// An uploaded image, or `nil`.
    public var imageID: String?
    /// The listing the conversation is about, or `nil`.
    public var listingID: String?
    /// When the store recorded it.
    public var sentAt: Date
    /// The sender's own id for it (makes retries idempotent), or `nil`.
    public var clientMessageID: String?

    public init(
        conversationID: String,
        sequence: Int64,
        senderID: String,
        recipientID: String,
        text: String,
        imageID: String? = nil,
        listingID: String? = nil,
        sentAt: Date,
        clientMessageID: String? = nil
    ) {
        self.conversationID = conversationID
        self.sequence = sequence
        self.senderID = senderID
        self.recipientID = recipientID
        self.text = text
        self.imageID = imageID
        self.listingID = listingID
        self.sentAt = sentAt
        self.clientMessageID = clientMessageID
    }
}

/// A message about to be sent: what the sender chose.
public struct MessageDraft: Hashable, Sendable {
    public var senderID: String
    public var recipientID: String
    public var text: String
    public var imageID: String?
    public var listingID: String?
    public var clientMessageID: String?

    public init(
        senderID: String,
        recipientID: String,
        text: String,
        imageID: String? = nil,
        listingID: String? = nil,
        clientMessageID: String? = nil
    ) {
        self.senderID = senderID
        self.recipientID = recipientID
        self.text = text
        self.imageID = imageID
        self.listingID = listingID
        self.clientMessageID = clientMessageID
    }
}

/// A conversation between two users, about a listing or not.
///
/// There is one per pair of users and listing context; ``firstUserID`` sorts before
/// ``secondUserID`` so the pair has one spelling.
public struct Conversation: Hashable, Sendable {
    public var id: String
    public var firstUserID: String
    public var secondUserID: String
    /// The listing it is about, or `nil`.
    public var listingID: String?
    public var createdAt: Date
    /// The sequence of the last message (0 before the first).
    public var lastSequence: Int64
    /// The time of the last message, or the creation time.
    public var lastActivityAt: Date
    /// The read marks: the last sequence each participant read (or sent).
    public var firstReadUpTo: Int64
    public var secondReadUpTo: Int64

    public init(
        id: String,
        firstUserID: String,
        secondUserID: String,
        listingID: String?,
        createdAt: Date,
        lastSequence: Int64 = 0,
        lastActivityAt: Date? = nil,
        firstReadUpTo: Int64 = 0,
        secondReadUpTo: Int64 = 0
    ) {
        self.id = id
        self.firstUserID = firstUserID
        self.secondUserID = secondUserID
        self.listingID = listingID
        self.createdAt = createdAt
        self.lastSequence = lastSequence
        self.lastActivityAt = lastActivityAt ?? createdAt
        self.firstReadUpTo = firstReadUpTo
        self.secondReadUpTo = secondReadUpTo
    }

    /// The pair in canonical order.
    public static func pair(_ a: String, _ b: String) -> (first: String, second: String) {
        a < b ? (a, b) : (b, a)
    }

    /// Whether the user takes part.
    public func includes(_ userID: String) -> Bool { userID == firstUserID || userID == secondUserID }

    /// The participant who is not `userID`.
    public func otherUser(than userID: String) -> String { userID == firstUserID ? secondUserID : firstUserID }

    /// The read mark of a participant.
    public func readUpTo(_ userID: String) -> Int64 { userID == firstUserID ? firstReadUpTo : secondReadUpTo }

    /// Sets the read mark of a participant.
    public mutating func setReadUpTo(_ sequence: Int64, for userID: String) {
        if userID == firstUserID { firstReadUpTo = sequence } else { secondReadUpTo = sequence }
    }

    /// Appends a message from a draft: the next sequence number, the activity time, and the
    /// sender's read mark moved to it (replying means having read). Stores call it inside their
    /// transaction, then save both.
    public mutating func append(_ draft: MessageDraft, at now: Date) -> ChatMessage {
        let message = ChatMessage(
            conversationID: id,
            sequence: lastSequence + 1,
            senderID: draft.senderID,
            recipientID: draft.recipientID,
            text: draft.text,
            imageID: draft.imageID,
            listingID: draft.listingID,
            sentAt: now,
            clientMessageID: draft.clientMessageID
        )
        lastSequence = message.sequence
        lastActivityAt = now
        setReadUpTo(message.sequence, for: draft.senderID)
        return message
    }
}

/// A conversation as one participant lists it.
public struct ConversationSummary: Hashable, Sendable {
    public var conversation: Conversation
    /// The last message, or `nil` for a conversation opened without one.
    public var lastMessage: ChatMessage?

    public init(conversation: Conversation, lastMessage: ChatMessage?) {
        self.conversation = conversation
        self.lastMessage = lastMessage
    }

    /// Messages after the user's read mark (their own messages move their mark, so these are the
    /// other participant's).
    public func unreadCount(for userID: String) -> Int64 {
        max(0, conversation.lastSequence - conversation.readUpTo(userID))
    }
}

/// A participant marked a conversation read up to a message.
public struct ReadReceipt: Hashable, Sendable {
    public var conversationID: String
    public var readerID: String
    public var readUpTo: Int64

    public init(conversationID: String, readerID: String, readUpTo: Int64) {
        self.conversationID = conversationID
        self.readerID = readerID
        self.readUpTo = readUpTo
    }
}

/// What a feed event is about.
public enum FeedPayload: Hashable, Sendable {
    case message(ChatMessage)
    case readReceipt(ReadReceipt)
    case notification(FeedNotification.Kind)
}

/// One event on a user's feed, numbered per user 1, 2, 3, … without gaps.
public struct FeedEvent: Hashable, Sendable {
    public var userID: String
    public var sequence: Int64
    public var occurredAt: Date
    public var payload: FeedPayload

    public init(userID: String, sequence: Int64, occurredAt: Date, payload: FeedPayload) {
        self.userID = userID
        self.sequence = sequence
        self.occurredAt = occurredAt
        self.payload = payload
    }
}

/// A user someone blocked.
public struct BlockedUser: Hashable, Sendable {
    public var userID: String
    public var blockedAt: Date

    public init(userID: String, blockedAt: Date) {
        self.userID = userID
        self.blockedAt = blockedAt
    }
}

/// The outcome of sending a message.
public struct SentMessage: Hashable, Sendable {
    public var message: ChatMessage
    /// The feed events recorded (empty when the message had been sent before under the same
    /// client message id).
    public var events: [FeedEvent]

    public init(message: ChatMessage, events: [FeedEvent]) {
        self.message = message
        self.events = events
    }
}

/// The outcome of marking a conversation read.
public struct ReadMarkUpdate: Hashable, Sendable {
    /// The reader's mark after the call.
    public var readUpTo: Int64
    /// The receipts recorded on the participants' feeds (empty when the mark did not move).
    public var events: [FeedEvent]

    public init(readUpTo: Int64, events: [FeedEvent]) {
        self.readUpTo = readUpTo
        self.events = events
    }
}
