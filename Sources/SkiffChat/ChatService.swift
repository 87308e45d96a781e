import Foundation
public import Logging
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
import SkiffFeed
import SwiftProtobuf

/// The Chat service: conversations, messages, read receipts, blocks and the live feed.
///
/// Storage goes through ``ChatStore``; whether users and listings exist through ``ChatDirectory``.
/// Every event the store records is handed to ``hub`` after its transaction commits; feed calls
/// subscribe to the hub, replay the store, then follow the hub (see ``FeedFollower``). Wire types
/// are converted at this edge only.
public struct ChatService: Skiff_Chat_V1_Chat.ServiceProtocol {
    let store: any ChatStore
    let directory: any ChatDirectory
    let configuration: ChatConfiguration
    let time: any TimeSource
    let logger: Logger
    let sendLimiter: UserRateLimiter
    /// Live delivery of feed events in this process.
    public let hub: LiveBroadcaster<FeedDelivery>

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - store: Where conversations, messages, blocks and feeds are kept.
    ///   - directory: Tells whether recipients and listings exist.
    ///   - configuration: Limits.
    ///   - time: The clock.
    ///   - logger: For failures that do not fail the call.
    public init(
        store: any ChatStore,
        directory: any ChatDirectory,
        configuration: ChatConfiguration = .defaults,
        time: any TimeSource = SystemTimeSource(),
        logger: Logger = Logger(label: "skiff.chat")
    ) {
        self.store = store
        self.directory = directory
        self.configuration = configuration
        self.time = time
        self.logger = logger
        self.hub = LiveBroadcaster(bufferSize: configuration.feedBufferSize)
        self.sendLimiter = UserRateLimiter(configuration.sendMessageLimit, what: "messages sent")
    }

    /// Hands events the store recorded to live subscribers.
    func deliver(_ events: [FeedEvent]) {
        for event in events { hub.publish(.event(event), to: CollectionOfOne(event.userID)) }
    }

    // MARK: Messages

    public func sendMessage(
        request: Skiff_Chat_V1_SendMessageRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_SendMessageResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let message = try await send(request, from: user.id)
        return .with { $0.message = message.proto }
    }

    /// Validates and sends a message (SendMessage, and sends on Connect).
    func send(_ request: Skiff_Chat_V1_SendMessageRequest, from senderID: String) async throws -> ChatMessage {
        let draft = try validatedDraft(request, from: senderID)
        try sendLimiter.acquire(userID: senderID, now: time.now())
        // A sender who deleted their account may still hold an open Connect stream: it sends nothing more.
        guard try await directory.userExists(senderID) else {
            throw DomainError(.unauthenticated, "Your account no longer exists.")
        }
        guard try await directory.userExists(draft.recipientID) else {
            throw DomainError(.notFound, "No user has this recipient_id.")
        }
        if let listingID = draft.listingID, try await !directory.listingExists(listingID) {
            throw DomainError(.notFound, "No listing has this listing_id.")
        }
        let sent = try await store.sendMessage(draft, conversationID: Self.newConversationID(), now: time.now())
        deliver(sent.events)
        return sent.message
    }

    func validatedDraft(
        _ request: Skiff_Chat_V1_SendMessageRequest,
        from senderID: String
    ) throws(DomainError)
        -> MessageDraft
    {
        let recipientID = try requireID(request.recipientID, field: "recipient_id")
        guard recipientID != senderID else {
            throw DomainError(.invalidArgument, "recipient_id is your own id: messages go to another user.")
        }
        let imageID = try optionalID(request.imageID, field: "image_id")
        let listingID = try optionalID(request.listingID, field: "listing_id")
        let text = request.text
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || imageID != nil else {
            throw DomainError(.invalidArgument, "text is empty: write something or attach an image_id.")
        }
        guard text.count <= configuration.maximumTextLength else {
            throw DomainError(
                .invalidArgument,
                "text must be at most \(configuration.maximumTextLength) characters (it has \(text.count))."
            )
        }
        guard request.clientMessageID.count <= configuration.maximumClientMessageIDLength else {
            throw DomainError(
                .invalidArgument,
                "client_message_id must be at most \(configuration.maximumClientMessageIDLength) characters."
            )
        }
        return MessageDraft(
            senderID: senderID,
            recipientID: recipientID,
            text: text,
            imageID: imageID,
            listingID: listingID,
            clientMessageID: request.clientMessageID.isEmpty ? nil : request.clientMessageID
        )
    }

    public func listMessages(
        request: Skiff_Chat_V1_ListMessagesRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_ListMessagesResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let conversationID = try requireID(request.conversationID, field: "conversation_id")
        guard request.beforeSequence >= 0, request.afterSequence >= 0 else {
            throw DomainError(.invalidArgument, "before_sequence and after_sequence must not be negative.")
        }
        guard request.beforeSequence == 0 || request.afterSequence == 0 else {
            throw DomainError(.invalidArgument, "Set before_sequence or after_sequence, not both.")
        }
        guard request.pageSize >= 0 else { throw DomainError(.invalidArgument, "page_size must not be negative.") }
        let size =
            request.pageSize == 0
            ? configuration.defaultMessagePageSize
            : min(Int(request.pageSize), configuration.maximumMessagePageSize)
        _ = try await participantConversation(conversationID, userID: user.id)
        let after = request.afterSequence > 0 ? request.afterSequence : nil
        let before = request.beforeSequence > 0 ? request.beforeSequence : nil
        var messages = try await store.messages(
            conversationID: conversationID,
            before: before,
            after: after,
            limit: size
        )
        let hasMore = messages.count > size
        if hasMore {
            if after != nil { messages.removeLast() } else { messages.removeFirst() }
        }
        return .with {
            $0.messages = messages.map(\.proto)
            $0.hasMore_p = hasMore
        }
    }

    public func markRead(
        request: Skiff_Chat_V1_MarkReadRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_MarkReadResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let readUpTo = try await markRead(request, by: user.id)
        return .with { $0.readUpTo = readUpTo }
    }

    /// Validates and applies a read mark (MarkRead, and marks on Connect).
    func markRead(_ request: Skiff_Chat_V1_MarkReadRequest, by userID: String) async throws -> Int64 {
        let conversationID = try requireID(request.conversationID, field: "conversation_id")
        guard request.sequence >= 1 else {
            throw DomainError(.invalidArgument, "sequence must be at least 1 (the first message).")
        }
        let update = try await store.markRead(
            conversationID: conversationID,
            userID: userID,
            upTo: request.sequence,
            now: time.now()
        )
        deliver(update.events)
        return update.readUpTo
    }

    // MARK: Conversations

    public func listConversations(
        request: Skiff_Chat_V1_ListConversationsRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_ListConversationsResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.conversations(userID: user.id, page: page)
        return .with {
            $0.conversations = result.items.map { $0.proto(viewerID: user.id) }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func getConversation(
        request: Skiff_Chat_V1_GetConversationRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_GetConversationResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let conversationID = try requireID(request.conversationID, field: "conversation_id")
        let summary = try await participantConversation(conversationID, userID: user.id)
        return .with { $0.conversation = summary.proto(viewerID: user.id) }
    }

    /// A conversation the user takes part in.
    func participantConversation(_ id: String, userID: String) async throws -> ConversationSummary {
        guard let summary = try await store.conversation(id: id) else { throw ChatStoreError.conversationNotFound }
        guard summary.conversation.includes(userID) else { throw ChatStoreError.notParticipant }
        return summary
    }

    public func openConversation(
        request: Skiff_Chat_V1_OpenConversationRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_OpenConversationResponse {
        try ChatRequestBounds.check(request)
        try context.requireService()
        let first = try requireID(request.firstUserID, field: "first_user_id")
        let second = try requireID(request.secondUserID, field: "second_user_id")
        guard first != second else {
            throw DomainError(.invalidArgument, "first_user_id and second_user_id must differ.")
        }
        let listingID = try optionalID(request.listingID, field: "listing_id")
        let conversation = try await store.openConversation(
            between: first,
            and: second,
            listingID: listingID,
            newID: Self.newConversationID(),
            now: time.now()
        )
        return .with { $0.conversationID = conversation.id }
    }

    // MARK: Blocking

    public func blockUser(
        request: Skiff_Chat_V1_BlockUserRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_BlockUserResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let blockedID = try requireID(request.userID, field: "user_id")
        guard blockedID != user.id else { throw DomainError(.invalidArgument, "user_id is your own id.") }
        guard try await directory.userExists(blockedID) else {
            throw DomainError(.notFound, "No user has this user_id.")
        }
        try await store.block(
            blockerID: user.id,
            blockedID: blockedID,
            now: time.now(),
            limit: configuration.maximumBlockedUsers
        )
        return Skiff_Chat_V1_BlockUserResponse()
    }

    public func unblockUser(
        request: Skiff_Chat_V1_UnblockUserRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_UnblockUserResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let blockedID = try requireID(request.userID, field: "user_id")
        try await store.unblock(blockerID: user.id, blockedID: blockedID)
        return Skiff_Chat_V1_UnblockUserResponse()
    }

    public func listBlockedUsers(
        request: Skiff_Chat_V1_ListBlockedUsersRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_ListBlockedUsersResponse {
        try ChatRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.blockedUsers(blockerID: user.id, page: page)
        return .with {
            $0.blockedUsers = result.items.map { blocked in
                .with {
                    $0.userID = blocked.userID
                    $0.blockedAt = Google_Protobuf_Timestamp(date: blocked.blockedAt)
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    // MARK: Notifications from other services

    public func publishNotifications(
        request: Skiff_Chat_V1_PublishNotificationsRequest,
        context: ServerContext
    ) async throws -> Skiff_Chat_V1_PublishNotificationsResponse {
        try ChatRequestBounds.check(request)
        try context.requireService()
        guard request.notifications.count <= configuration.maximumNotificationsPerPublish else {
            throw DomainError(
                .invalidArgument,
                "notifications holds \(request.notifications.count): at most \(configuration.maximumNotificationsPerPublish) per call."
            )
        }
        let notifications = try request.notifications.enumerated().map { index, notification in
            try FeedNotification(proto: notification, index: index, maximumIDLength: configuration.maximumIDLength)
        }
        let events = try await store.appendNotifications(notifications, now: time.now())
        deliver(events)
        return .with { $0.recorded = Int32(events.count) }
    }

    // MARK: Validation

    func requireID(_ value: String, field: String) throws(DomainError) -> String {
        guard !value.isEmpty else { throw DomainError(.invalidArgument, "\(field) is empty.") }
        guard value.count <= configuration.maximumIDLength else {
            throw DomainError(.invalidArgument, "\(field) is longer than \(configuration.maximumIDLength) characters.")
        }
        return value
    }

    func optionalID(_ value: String, field: String) throws(DomainError) -> String? {
        value.isEmpty ? nil : try requireID(value, field: field)
    }

    static func newConversationID() -> String { EntityID.make(.conversation) }
}

extension EntityID.Prefix {
    /// Conversations.
    public static let conversation = EntityID.Prefix("cnv")
}
