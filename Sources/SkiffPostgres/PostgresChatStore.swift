public import Foundation
import PostgresNIO
public import SkiffChat
public import SkiffDomain
public import SkiffFeed

/// The PostgreSQL ``SkiffChat/ChatStore``.
///
/// Each use case is one ``PostgresStorage`` transaction: writes are SERIALIZABLE (run again when
/// PostgreSQL aborts them for a conflict), reads one read-only snapshot. So a send's
/// find-or-create of the conversation, its message number and its feed events are atomic across
/// every server on the database, as on SQLite's single writer.
///
/// Feed sequence numbers come from one `feed_head` row per user, moved in the transaction that
/// inserts the events, so they are unique and gapless across servers (a rolled-back transaction
/// gives its numbers back, unlike a PostgreSQL sequence). Writers lock rows in one order (the feed
/// heads they append to, in user-id order and in one statement, then at most one conversation), so
/// they never wait on each other in a cycle.
///
/// Concurrent appends for one user conflict: one commits, the others are aborted and run again. So
/// that a busy feed cannot starve a writer through every attempt, a write that appends feed events
/// and is run again begins by locking out every other feed writer (`LOCK TABLE feed_head`, which
/// takes no snapshot, so the transaction then sees every writer it waited for): writes are
/// optimistic and per row until they conflict, then take turns.
///
/// Feed payloads are stored as protobuf (``SkiffChat/FeedPayload/storageBytes()``), as on SQLite.
///
/// Get one from ``PostgresStorage/chatStore()``.
public struct PostgresChatStore: ChatStore {
    let storage: PostgresStorage

    init(storage: PostgresStorage) {
        self.storage = storage
    }

    public func sendMessage(_ draft: MessageDraft, conversationID: String, now: Date) async throws -> SentMessage {
        let now = now.roundedToMilliseconds
        return try await feedWrite { db in
            if let clientID = draft.clientMessageID,
                let sent = try await db.message(senderID: draft.senderID, clientMessageID: clientID)
            {
                return SentMessage(message: sent, events: [])
            }
            guard try await !db.isBlocked(draft.senderID, draft.recipientID) else { throw ChatStoreError.blocked }
            let pair = Conversation.pair(draft.senderID, draft.recipientID)
            let existing = try await db.conversation(pair: pair, listingID: draft.listingID)
            let feeds = [draft.senderID, draft.recipientID]
            let sequences = try await db.reserveSequences(for: feeds)
            var conversation =
                existing
                ?? Conversation(
                    id: conversationID,
                    firstUserID: pair.first,
                    secondUserID: pair.second,
                    listingID: draft.listingID,
                    createdAt: now
                )
            let message = conversation.append(draft, at: now)
            if existing == nil { try await db.insert(conversation) } else { try await db.save(conversation) }
            try await db.insert(message)
            let events = zip(feeds, sequences).map { userID, sequence in
                FeedEvent(userID: userID, sequence: sequence, occurredAt: now, payload: .message(message))
            }
            try await db.insert(events)
            return SentMessage(message: message, events: events)
        }
    }

    public func openConversation(
        between firstUserID: String,
        and secondUserID: String,
        listingID: String?,
        newID: String,
        now: Date
    ) async throws -> Conversation {
        let now = now.roundedToMilliseconds
        return try await storage.write { connection in
            let db = ChatConnection(connection, logger: storage.logger)
            let pair = Conversation.pair(firstUserID, secondUserID)
            if let existing = try await db.conversation(pair: pair, listingID: listingID) { return existing }
            let created = Conversation(
                id: newID,
                firstUserID: pair.first,
                secondUserID: pair.second,
                listingID: listingID,
                createdAt: now
            )
            try await db.insert(created)
            return created
        }
    }

    public func conversation(id: String) async throws -> ConversationSummary? {
        try await storage.read { connection in
            try await ChatConnection(connection, logger: storage.logger).summary(id: id)
        }
    }

    public func conversations(userID: String, page: PageRequest) async throws -> Page<ConversationSummary> {
        let after = try page.token.map { token throws(DomainError) in try ConversationCursor.decode(token) }
        let fetched = try await storage.read { connection in
            try await ChatConnection(connection, logger: storage.logger)
                .summaries(userID: userID, after: after, limit: page.size + 1)
        }
        return Page(fetched: fetched, size: page.size) { ConversationCursor($0.conversation).token }
    }

    public func messages(
        conversationID: String,
        before: Int64?,
        after: Int64?,
        limit: Int
    ) async throws
        -> [ChatMessage]
    {
        let limit = Int64(max(limit, 0)) + 1
        return try await storage.read { connection in
            let db = ChatConnection(connection, logger: storage.logger)
            if let after {
                return try await db.messages(conversationID: conversationID, after: after, limit: limit)
            }
            return try await db.messages(conversationID: conversationID, before: before ?? .max, limit: limit)
        }
    }

    public func markRead(
        conversationID: String,
        userID: String,
        upTo sequence: Int64,
        now: Date
    ) async throws
        -> ReadMarkUpdate
    {
        let now = now.roundedToMilliseconds
        return try await feedWrite { db in
            let loaded = try await db.conversation(id: conversationID)
            switch try ChatRules.markRead(loaded, by: userID, upTo: sequence) {
            case .unchanged(let current):
                return ReadMarkUpdate(readUpTo: current, events: [])
            case .moved(let conversation, let receipt, let feeds):
                let sequences = try await db.reserveSequences(for: feeds)
                try await db.save(conversation)
                let events = zip(feeds, sequences).map { userID, sequence in
                    FeedEvent(userID: userID, sequence: sequence, occurredAt: now, payload: .readReceipt(receipt))
                }
                try await db.insert(events)
                return ReadMarkUpdate(readUpTo: sequence, events: events)
            }
        }
    }

    public func block(blockerID: String, blockedID: String, now: Date, limit: Int) async throws {
        let now = now.roundedToMilliseconds
        try await storage.write { connection in
            let db = ChatConnection(connection, logger: storage.logger)
            let exists = try await db.blockExists(blockerID: blockerID, blockedID: blockedID)
            let held = exists ? 0 : try await db.blockCount(blockerID: blockerID)
            guard try ChatRules.block(alreadyBlocked: exists, blocksHeld: held, limit: limit) else { return }
            try await db.insertBlock(blockerID: blockerID, blockedID: blockedID, at: now)
        }
    }

    public func unblock(blockerID: String, blockedID: String) async throws {
        try await storage.write { connection in
            try await ChatConnection(connection, logger: storage.logger)
                .deleteBlock(blockerID: blockerID, blockedID: blockedID)
        }
    }

    public func blockedUsers(blockerID: String, page: PageRequest) async throws -> Page<BlockedUser> {
        let after = try page.token.map { token throws(DomainError) in try BlockCursor.decode(token) }
        let fetched = try await storage.read { connection in
            try await ChatConnection(connection, logger: storage.logger)
                .blockedUsers(blockerID: blockerID, after: after, limit: page.size + 1)
        }
        return Page(fetched: fetched, size: page.size) { BlockCursor($0).token }
    }

    public func appendNotifications(_ notifications: [FeedNotification], now: Date) async throws -> [FeedEvent] {
        let now = now.roundedToMilliseconds
        guard !notifications.isEmpty else { return [] }
        return try await feedWrite { db in
            var recorded = try await db.recordedKeys(of: notifications)
            let fresh = notifications.filter { notification in
                recorded.insert(ChatConnection.NotificationKey(notification)).inserted
            }
            let sequences = try await db.reserveSequences(for: fresh.map(\.userID))
            let events = zip(fresh, sequences).map { notification, sequence in
                FeedEvent(
                    userID: notification.userID,
                    sequence: sequence,
                    occurredAt: now,
                    payload: .notification(notification.kind)
                )
            }
            try await db.insert(events, idempotencyKeys: fresh.map(\.idempotencyKey))
            return events
        }
    }

    public func feedEvents(userID: String, after sequence: Int64, limit: Int) async throws -> [FeedEvent] {
        try await storage.read { connection in
            try await ChatConnection(connection, logger: storage.logger)
                .feedEvents(userID: userID, after: sequence, limit: Int64(max(limit, 0)))
        }
    }

    public func lastFeedSequence(userID: String) async throws -> Int64 {
        try await storage.read { connection in
            try await ChatConnection(connection, logger: storage.logger).lastFeedSequence(userID: userID)
        }
    }

    @discardableResult
    public func pruneFeed(before date: Date) async throws -> Int {
        let before = date.roundedToMilliseconds.millisecondsSince1970
        return try await storage.deleteInBatches { limit in
            """
            WITH deleted AS (
                DELETE FROM feed_event WHERE (user_id, sequence) IN
                    (SELECT user_id, sequence FROM feed_event WHERE occurred_at < \(before) LIMIT \(limit))
                RETURNING 1
            )
            SELECT count(*) FROM deleted
            """
        }
    }

    /// Runs a write that appends feed events: run again after a conflict, it first locks out every other
    /// feed writer (SHARE ROW EXCLUSIVE on `feed_head` conflicts with itself and with the ROW EXCLUSIVE
    /// lock any write of `feed_head` takes).
    private func feedWrite<T: Sendable>(_ body: (ChatConnection) async throws -> T) async throws -> T {
        try await storage.write(lockingOnRetry: .init(table: "feed_head", mode: "SHARE ROW EXCLUSIVE")) {
            try await body(ChatConnection($0, logger: storage.logger))
        }
    }
}

extension PostgresStorage {
    /// The Chat service's store on this database.
    public func chatStore() -> PostgresChatStore {
        PostgresChatStore(storage: self)
    }
}
