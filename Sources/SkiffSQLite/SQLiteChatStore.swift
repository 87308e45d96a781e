public import Foundation
import GRDB
public import SkiffChat
public import SkiffDomain
public import SkiffFeed

/// The SQLite ``SkiffChat/ChatStore``.
///
/// Each use case is one `pool.write { }` transaction (or one `pool.read { }` snapshot). Writes are
/// serialized by the single writer connection, so message and feed sequence numbers are allocated
/// without gaps or clashes, and events commit in sequence order per user. Feed payloads are stored
/// as protobuf (``SkiffChat/FeedPayload/storageBytes()``).
///
/// Get one from ``SQLiteDatabase/chatStore()``.
public struct SQLiteChatStore: ChatStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    public func sendMessage(_ draft: MessageDraft, conversationID: String, now: Date) async throws -> SentMessage {
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            if let clientID = draft.clientMessageID,
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM message WHERE senderID = ? AND clientMessageID = ?"),
                    arguments: [draft.senderID, clientID]
                )
            {
                return SentMessage(message: Self.message(row), events: [])
            }
            guard try !Self.isBlocked(db, draft.senderID, draft.recipientID) else { throw ChatStoreError.blocked }
            var conversation = try Self.conversation(
                db,
                draft.senderID,
                draft.recipientID,
                listingID: draft.listingID,
                newID: conversationID,
                now: now
            )
            let message = conversation.append(draft, at: now)
            try Self.save(db, conversation)
            try db.executeCached(
                sql: """
                    INSERT INTO message (conversationID, sequence, senderID, recipientID, text, imageID, listingID,
                        sentAt, clientMessageID)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    message.conversationID, message.sequence, message.senderID, message.recipientID, message.text,
                    message.imageID, message.listingID, now.millisecondsSince1970, message.clientMessageID,
                ]
            )
            let events = try [draft.senderID, draft.recipientID].map {
                try Self.append(db, .message(message), to: $0, key: nil, at: now)
            }
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
        return try await pool.domainWrite { db in
            try Self.conversation(db, firstUserID, secondUserID, listingID: listingID, newID: newID, now: now)
        }
    }

    public func conversation(id: String) async throws -> ConversationSummary? {
        try await pool.domainRead { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM conversation WHERE id = ?"), arguments: [id])
                .map { try Self.summary(db, Self.conversation($0)) }
        }
    }

    public func conversations(userID: String, page: PageRequest) async throws -> Page<ConversationSummary> {
        let after = try page.token.map { token throws(DomainError) in try ConversationCursor.decode(token) }
        return try await pool.domainRead { db in
            var sql = "SELECT * FROM conversation WHERE (firstUserID = ? OR secondUserID = ?)"
            var arguments: StatementArguments = [userID, userID]
            if let after {
                sql += " AND lastActivityAt <= ? AND (lastActivityAt < ? OR (lastActivityAt = ? AND id > ?))"
                arguments += [after.t, after.t, after.t, after.id]
            }
            sql += " ORDER BY lastActivityAt DESC, id LIMIT ?"
            arguments += [page.size + 1]
            let conversations = try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.conversation)
            let items = try conversations.prefix(page.size).map { try Self.summary(db, $0) }
            let next =
                conversations.count > page.size ? items.last.map { ConversationCursor($0.conversation).token } : nil
            return Page(items: items, nextPageToken: next)
        }
    }

    public func messages(
        conversationID: String,
        before: Int64?,
        after: Int64?,
        limit: Int
    ) async throws
        -> [ChatMessage]
    {
        let limit = max(limit, 0) + 1
        return try await pool.domainRead { db in
            if let after {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT * FROM message WHERE conversationID = ? AND sequence > ? ORDER BY sequence LIMIT ?"
                    ),
                    arguments: [conversationID, after, limit]
                ).map(Self.message)
            }
            return try Row.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT * FROM message WHERE conversationID = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?"
                ),
                arguments: [conversationID, before ?? Int64.max, limit]
            ).map(Self.message).reversed()
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
        return try await pool.domainWrite { db in
            let loaded = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM conversation WHERE id = ?"),
                arguments: [conversationID]
            ).map(Self.conversation)
            switch try ChatRules.markRead(loaded, by: userID, upTo: sequence) {
            case .unchanged(let current):
                return ReadMarkUpdate(readUpTo: current, events: [])
            case .moved(let conversation, let receipt, let feeds):
                try Self.save(db, conversation)
                let events = try feeds.map { try Self.append(db, .readReceipt(receipt), to: $0, key: nil, at: now) }
                return ReadMarkUpdate(readUpTo: sequence, events: events)
            }
        }
    }

    public func block(blockerID: String, blockedID: String, now: Date, limit: Int) async throws {
        let now = now.roundedToMilliseconds
        try await pool.domainWrite { db in
            let exists =
                try Bool.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT EXISTS (SELECT 1 FROM userBlock WHERE blockerID = ? AND blockedID = ?)"
                    ),
                    arguments: [blockerID, blockedID]
                ) ?? false
            let count =
                exists
                ? 0
                : try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM userBlock WHERE blockerID = ?"),
                    arguments: [blockerID]
                ) ?? 0
            guard try ChatRules.block(alreadyBlocked: exists, blocksHeld: count, limit: limit) else { return }
            try db.executeCached(
                sql: "INSERT INTO userBlock (blockerID, blockedID, blockedAt) VALUES (?, ?, ?)",
                arguments: [blockerID, blockedID, now.millisecondsSince1970]
            )
        }
    }

    public func unblock(blockerID: String, blockedID: String) async throws {
        try await pool.domainWrite { db in
            try db.executeCached(
                sql: "DELETE FROM userBlock WHERE blockerID = ? AND blockedID = ?",
                arguments: [blockerID, blockedID]
            )
        }
    }

    public func blockedUsers(blockerID: String, page: PageRequest) async throws -> Page<BlockedUser> {
        let after = try page.token.map { token throws(DomainError) in try BlockCursor.decode(token) }
        return try await pool.domainRead { db in
            var sql = "SELECT blockedID, blockedAt FROM userBlock WHERE blockerID = ?"
            var arguments: StatementArguments = [blockerID]
            if let after {
                sql += " AND blockedAt <= ? AND (blockedAt < ? OR (blockedAt = ? AND blockedID > ?))"
                arguments += [after.t, after.t, after.t, after.id]
            }
            sql += " ORDER BY blockedAt DESC, blockedID LIMIT ?"
            arguments += [page.size + 1]
            let users = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                BlockedUser(userID: row["blockedID"], blockedAt: Date(millisecondsSince1970: row["blockedAt"]))
            }
            let items = Array(users.prefix(page.size))
            let next = users.count > page.size ? items.last.map { BlockCursor($0).token } : nil
            return Page(items: items, nextPageToken: next)
        }
    }

    public func appendNotifications(_ notifications: [FeedNotification], now: Date) async throws -> [FeedEvent] {
        let now = now.roundedToMilliseconds
        return try await pool.domainWrite { db in
            try notifications.compactMap { notification in
                let seen =
                    try Bool.fetchOne(
                        db.cachedStatement(
                            sql: "SELECT EXISTS (SELECT 1 FROM feedEvent WHERE userID = ? AND idempotencyKey = ?)"
                        ),
                        arguments: [notification.userID, notification.idempotencyKey]
                    ) ?? false
                guard !seen else { return nil }
                return try Self.append(
                    db,
                    .notification(notification.kind),
                    to: notification.userID,
                    key: notification.idempotencyKey,
                    at: now
                )
            }
        }
    }

    public func feedEvents(userID: String, after sequence: Int64, limit: Int) async throws -> [FeedEvent] {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT * FROM feedEvent WHERE userID = ? AND sequence > ? ORDER BY sequence LIMIT ?"
                ),
                arguments: [userID, sequence, max(limit, 0)]
            ).map(Self.event)
        }
    }

    public func lastFeedSequence(userID: String) async throws -> Int64 {
        try await pool.domainRead { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT lastSequence FROM feedHead WHERE userID = ?"),
                arguments: [userID]
            ) ?? 0
        }
    }

    @discardableResult
    public func pruneFeed(before date: Date) async throws -> Int {
        try await pool.deleteInBatches(
            """
            DELETE FROM feedEvent WHERE (userID, sequence) IN
                (SELECT userID, sequence FROM feedEvent WHERE occurredAt < ? LIMIT ?)
            """,
            [date.roundedToMilliseconds.millisecondsSince1970]
        )
    }

    // MARK: Rows

    private static func isBlocked(_ db: Database, _ a: String, _ b: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM userBlock
                        WHERE (blockerID = ? AND blockedID = ?) OR (blockerID = ? AND blockedID = ?))
                    """
            ),
            arguments: [a, b, b, a]
        ) ?? false
    }

    private static func conversation(
        _ db: Database,
        _ a: String,
        _ b: String,
        listingID: String?,
        newID: String,
        now: Date
    ) throws -> Conversation {
        let (first, second) = Conversation.pair(a, b)
        if let row = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT * FROM conversation WHERE firstUserID = ? AND secondUserID = ? AND listingID = ?"
            ),
            arguments: [first, second, listingID ?? ""]
        ) {
            return conversation(row)
        }
        let created = Conversation(
            id: newID,
            firstUserID: first,
            secondUserID: second,
            listingID: listingID,
            createdAt: now
        )
        try db.executeCached(
            sql: """
                INSERT INTO conversation (id, firstUserID, secondUserID, listingID, createdAt, lastActivityAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [newID, first, second, listingID ?? "", now.millisecondsSince1970, now.millisecondsSince1970]
        )
        return created
    }

    private static func save(_ db: Database, _ conversation: Conversation) throws {
        try db.executeCached(
            sql: """
                UPDATE conversation SET lastSequence = ?, lastActivityAt = ?, firstReadUpTo = ?, secondReadUpTo = ?
                WHERE id = ?
                """,
            arguments: [
                conversation.lastSequence, conversation.lastActivityAt.millisecondsSince1970,
                conversation.firstReadUpTo, conversation.secondReadUpTo, conversation.id,
            ]
        )
    }

    private static func append(
        _ db: Database,
        _ payload: FeedPayload,
        to userID: String,
        key: String?,
        at now: Date
    ) throws -> FeedEvent {
        let last = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT lastSequence FROM feedHead WHERE userID = ?"),
            arguments: [userID]
        )
        let sequence = (last ?? 0) + 1
        try db.executeCached(
            sql: """
                INSERT INTO feedHead (userID, lastSequence) VALUES (?, ?)
                ON CONFLICT (userID) DO UPDATE SET lastSequence = excluded.lastSequence
                """,
            arguments: [userID, sequence]
        )
        try db.executeCached(
            sql: "INSERT INTO feedEvent (userID, sequence, occurredAt, payload, idempotencyKey) VALUES (?, ?, ?, ?, ?)",
            arguments: [userID, sequence, now.millisecondsSince1970, try payload.storageBytes(), key]
        )
        return FeedEvent(userID: userID, sequence: sequence, occurredAt: now, payload: payload)
    }

    private static func summary(_ db: Database, _ conversation: Conversation) throws -> ConversationSummary {
        let last =
            conversation.lastSequence == 0
            ? nil
            : try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM message WHERE conversationID = ? AND sequence = ?"),
                arguments: [conversation.id, conversation.lastSequence]
            ).map(message)
        return ConversationSummary(conversation: conversation, lastMessage: last)
    }

    private static func conversation(_ row: Row) -> Conversation {
        let listingID: String = row["listingID"]
        return Conversation(
            id: row["id"],
            firstUserID: row["firstUserID"],
            secondUserID: row["secondUserID"],
            listingID: listingID.isEmpty ? nil : listingID,
            createdAt: Date(millisecondsSince1970: row["createdAt"]),
            lastSequence: row["lastSequence"],
            lastActivityAt: Date(millisecondsSince1970: row["lastActivityAt"]),
            firstReadUpTo: row["firstReadUpTo"],
            secondReadUpTo: row["secondReadUpTo"]
        )
    }

    private static func message(_ row: Row) -> ChatMessage {
        ChatMessage(
            conversationID: row["conversationID"],
            sequence: row["sequence"],
            senderID: row["senderID"],
            recipientID: row["recipientID"],
            text: row["text"],
            imageID: row["imageID"],
            listingID: row["listingID"],
            sentAt: Date(millisecondsSince1970: row["sentAt"]),
            clientMessageID: row["clientMessageID"]
        )
    }

    private static func event(_ row: Row) throws -> FeedEvent {
        let bytes: Data = row["payload"]
        return FeedEvent(
            userID: row["userID"],
            sequence: row["sequence"],
            occurredAt: Date(millisecondsSince1970: row["occurredAt"]),
            payload: try FeedPayload(storageBytes: bytes)
        )
    }
}
