import Foundation
import Logging
import PostgresNIO
import SkiffChat
import SkiffDomain
import SkiffFeed

/// The SQL of ``PostgresChatStore``: one connection inside one of its transactions.
///
/// Every list query is answered by an index in the list's order, with the keyset cursor and the
/// LIMIT inside the SQL, so its cost grows with the page and not with the table.
struct ChatConnection {
    let connection: PostgresConnection
    let logger: Logger

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    private func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await connection.query(query, logger: logger)
    }

    // MARK: Conversations

    /// The columns of a conversation row, in ``Self/conversation(_:)``'s order.
    private static let conversationColumns = """
        id, first_user_id, second_user_id, listing_id, created_at, last_sequence, last_activity_at, \
        first_read_up_to, second_read_up_to
        """

    /// A conversation (`c`) and its last message (`m`, all NULL when it has none).
    private static let summaryColumns = """
        c.id, c.first_user_id, c.second_user_id, c.listing_id, c.created_at, c.last_sequence, \
        c.last_activity_at, c.first_read_up_to, c.second_read_up_to, \
        m.sequence, m.sender_id, m.recipient_id, m.text, m.image_id, m.listing_id, m.sent_at, m.client_message_id
        """

    typealias ConversationRow = (String, String, String, String, Int64, Int64, Int64, Int64, Int64)

    func conversation(id: String) async throws -> Conversation? {
        let rows = try await query(
            "SELECT \(unescaped: Self.conversationColumns) FROM conversation WHERE id = \(id)"
        )
        for try await row in rows.decode(ConversationRow.self) { return Self.conversation(row) }
        return nil
    }

    /// The pair's conversation for a listing context (`nil` for none), if there is one.
    func conversation(pair: (first: String, second: String), listingID: String?) async throws -> Conversation? {
        let rows = try await query(
            """
            SELECT \(unescaped: Self.conversationColumns) FROM conversation
            WHERE first_user_id = \(pair.first) AND second_user_id = \(pair.second) AND listing_id = \(listingID ?? "")
            """
        )
        for try await row in rows.decode(ConversationRow.self) { return Self.conversation(row) }
        return nil
    }

    /// Inserts a new conversation as it is.
    func insert(_ conversation: Conversation) async throws {
        try await query(
            """
            INSERT INTO conversation (\(unescaped: Self.conversationColumns))
            VALUES (\(conversation.id), \(conversation.firstUserID), \(conversation.secondUserID), \
            \(conversation.listingID ?? ""), \(conversation.createdAt.millisecondsSince1970), \
            \(conversation.lastSequence), \(conversation.lastActivityAt.millisecondsSince1970), \
            \(conversation.firstReadUpTo), \(conversation.secondReadUpTo))
            """
        )
    }

    /// Writes what ``SkiffChat/Conversation/append(_:at:)`` and read marks change.
    func save(_ conversation: Conversation) async throws {
        try await query(
            """
            UPDATE conversation SET last_sequence = \(conversation.lastSequence), \
            last_activity_at = \(conversation.lastActivityAt.millisecondsSince1970), \
            first_read_up_to = \(conversation.firstReadUpTo), second_read_up_to = \(conversation.secondReadUpTo)
            WHERE id = \(conversation.id)
            """
        )
    }

    /// A conversation with its last message (one primary-key probe each).
    func summary(id: String) async throws -> ConversationSummary? {
        let rows = try await query(
            """
            SELECT \(unescaped: Self.summaryColumns)
            FROM conversation AS c
            LEFT JOIN message AS m ON m.conversation_id = c.id AND m.sequence = c.last_sequence
            WHERE c.id = \(id)
            """
        )
        return try await Self.summaries(rows).first
    }

    /// Up to `limit` of a user's conversations after the cursor, most recent activity first.
    ///
    /// The user is the first or the second of a pair (never both), so each side is its own ordered
    /// index range scan, cut at `limit`; the two are merged and cut again, then each row's last
    /// message is fetched by primary key.
    func summaries(userID: String, after: ConversationCursor?, limit: Int) async throws -> [ConversationSummary] {
        let limit = Int64(limit)
        let rows: PostgresRowSequence
        if let after {
            rows = try await query(
                """
                SELECT \(unescaped: Self.summaryColumns)
                FROM (
                    (SELECT * FROM conversation
                    WHERE first_user_id = \(userID) AND last_activity_at <= \(after.t)
                        AND (last_activity_at < \(after.t) OR id > \(after.id))
                    ORDER BY last_activity_at DESC, id LIMIT \(limit))
                    UNION ALL
                    (SELECT * FROM conversation
                    WHERE second_user_id = \(userID) AND last_activity_at <= \(after.t)
                        AND (last_activity_at < \(after.t) OR id > \(after.id))
                    ORDER BY last_activity_at DESC, id LIMIT \(limit))
                ) AS c
                LEFT JOIN message AS m ON m.conversation_id = c.id AND m.sequence = c.last_sequence
                ORDER BY c.last_activity_at DESC, c.id
                LIMIT \(limit)
                """
            )
        } else {
            rows = try await query(
                """
                SELECT \(unescaped: Self.summaryColumns)
                FROM (
                    (SELECT * FROM conversation WHERE first_user_id = \(userID)
                    ORDER BY last_activity_at DESC, id LIMIT \(limit))
                    UNION ALL
                    (SELECT * FROM conversation WHERE second_user_id = \(userID)
                    ORDER BY last_activity_at DESC, id LIMIT \(limit))
                ) AS c
                LEFT JOIN message AS m ON m.conversation_id = c.id AND m.sequence = c.last_sequence
                ORDER BY c.last_activity_at DESC, c.id
                LIMIT \(limit)
                """
            )
        }
        return try await Self.summaries(rows)
    }

    private static func summaries(_ rows: PostgresRowSequence) async throws -> [ConversationSummary] {
        var summaries: [ConversationSummary] = []
        let decoded = rows.decode(
            (
                String, String, String, String, Int64, Int64, Int64, Int64, Int64,
                Int64?, String?, String?, String?, String?, String?, Int64?, String?
            ).self
        )
        for try await row in decoded {
            let conversation = Self.conversation((row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8))
            var last: ChatMessage?
            if let sequence = row.9, let senderID = row.10, let recipientID = row.11, let text = row.12,
                let sentAt = row.15
            {
                last = ChatMessage(
                    conversationID: conversation.id,
                    sequence: sequence,
                    senderID: senderID,
                    recipientID: recipientID,
                    text: text,
                    imageID: row.13,
                    listingID: row.14,
                    sentAt: Date(millisecondsSince1970: sentAt),
                    clientMessageID: row.16
                )
            }
            summaries.append(ConversationSummary(conversation: conversation, lastMessage: last))
        }
        return summaries
    }

    private static func conversation(_ row: ConversationRow) -> Conversation {
        Conversation(
            id: row.0,
            firstUserID: row.1,
            secondUserID: row.2,
            listingID: row.3.isEmpty ? nil : row.3,
            createdAt: Date(millisecondsSince1970: row.4),
            lastSequence: row.5,
            lastActivityAt: Date(millisecondsSince1970: row.6),
            firstReadUpTo: row.7,
            secondReadUpTo: row.8
        )
    }

    // MARK: Messages

    private static let messageColumns = """
        conversation_id, sequence, sender_id, recipient_id, text, image_id, listing_id, sent_at, client_message_id
        """

    typealias MessageRow = (String, Int64, String, String, String, String?, String?, Int64, String?)

    func insert(_ message: ChatMessage) async throws {
        try await query(
            """
            INSERT INTO message (\(unescaped: Self.messageColumns))
            VALUES (\(message.conversationID), \(message.sequence), \(message.senderID), \(message.recipientID), \
            \(message.text), \(message.imageID), \(message.listingID), \(message.sentAt.millisecondsSince1970), \
            \(message.clientMessageID))
            """
        )
    }

    /// The message a sender sent under a client message id, if any.
    func message(senderID: String, clientMessageID: String) async throws -> ChatMessage? {
        let rows = try await query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM message
            WHERE sender_id = \(senderID) AND client_message_id = \(clientMessageID)
            """
        )
        return try await Self.messages(rows).first
    }

    /// The oldest `limit` messages above `after`, ascending.
    func messages(conversationID: String, after: Int64, limit: Int64) async throws -> [ChatMessage] {
        let rows = try await query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM message
            WHERE conversation_id = \(conversationID) AND sequence > \(after)
            ORDER BY sequence LIMIT \(limit)
            """
        )
        return try await Self.messages(rows)
    }

    /// The newest `limit` messages below `before`, ascending.
    func messages(conversationID: String, before: Int64, limit: Int64) async throws -> [ChatMessage] {
        let rows = try await query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM message
            WHERE conversation_id = \(conversationID) AND sequence < \(before)
            ORDER BY sequence DESC LIMIT \(limit)
            """
        )
        return try await Self.messages(rows).reversed()
    }

    private static func messages(_ rows: PostgresRowSequence) async throws -> [ChatMessage] {
        var messages: [ChatMessage] = []
        for try await row in rows.decode(MessageRow.self) {
            messages.append(
                ChatMessage(
                    conversationID: row.0,
                    sequence: row.1,
                    senderID: row.2,
                    recipientID: row.3,
                    text: row.4,
                    imageID: row.5,
                    listingID: row.6,
                    sentAt: Date(millisecondsSince1970: row.7),
                    clientMessageID: row.8
                )
            )
        }
        return messages
    }

    // MARK: Blocks

    /// Whether either user blocked the other (two primary-key probes).
    func isBlocked(_ a: String, _ b: String) async throws -> Bool {
        let rows = try await query(
            """
            SELECT EXISTS (SELECT 1 FROM user_block WHERE blocker_id = \(a) AND blocked_id = \(b))
                OR EXISTS (SELECT 1 FROM user_block WHERE blocker_id = \(b) AND blocked_id = \(a))
            """
        )
        for try await blocked in rows.decode(Bool.self) { return blocked }
        return false
    }

    func blockExists(blockerID: String, blockedID: String) async throws -> Bool {
        let rows = try await query(
            """
            SELECT EXISTS (SELECT 1 FROM user_block WHERE blocker_id = \(blockerID) AND blocked_id = \(blockedID))
            """
        )
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// How many users a user blocked (an index-only count of the blocker's range, bounded by the
    /// block limit).
    func blockCount(blockerID: String) async throws -> Int {
        let rows = try await query("SELECT count(*) FROM user_block WHERE blocker_id = \(blockerID)")
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    func insertBlock(blockerID: String, blockedID: String, at now: Date) async throws {
        try await query(
            """
            INSERT INTO user_block (blocker_id, blocked_id, blocked_at)
            VALUES (\(blockerID), \(blockedID), \(now.millisecondsSince1970))
            """
        )
    }

    func deleteBlock(blockerID: String, blockedID: String) async throws {
        try await query("DELETE FROM user_block WHERE blocker_id = \(blockerID) AND blocked_id = \(blockedID)")
    }

    /// Up to `limit` of the users a user blocked after the cursor, most recent first (an index-only
    /// range scan of `user_block_blocker_time`).
    func blockedUsers(blockerID: String, after: BlockCursor?, limit: Int) async throws -> [BlockedUser] {
        let limit = Int64(limit)
        let rows: PostgresRowSequence
        if let after {
            rows = try await query(
                """
                SELECT blocked_id, blocked_at FROM user_block
                WHERE blocker_id = \(blockerID) AND blocked_at <= \(after.t)
                    AND (blocked_at < \(after.t) OR blocked_id > \(after.id))
                ORDER BY blocked_at DESC, blocked_id LIMIT \(limit)
                """
            )
        } else {
            rows = try await query(
                """
                SELECT blocked_id, blocked_at FROM user_block WHERE blocker_id = \(blockerID)
                ORDER BY blocked_at DESC, blocked_id LIMIT \(limit)
                """
            )
        }
        var users: [BlockedUser] = []
        for try await (userID, blockedAt) in rows.decode((String, Int64).self) {
            users.append(BlockedUser(userID: userID, blockedAt: Date(millisecondsSince1970: blockedAt)))
        }
        return users
    }
}
