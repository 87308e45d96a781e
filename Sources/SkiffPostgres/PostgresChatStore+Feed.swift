import Foundation
import PostgresNIO
import SkiffChat
import SkiffDomain
import SkiffFeed

extension ChatConnection {
    /// A notification's (user, idempotency key).
    struct NotificationKey: Hashable {
        var userID: String
        var key: String

        init(_ notification: FeedNotification) {
            self.userID = notification.userID
            self.key = notification.idempotencyKey
        }

        init(userID: String, key: String) {
            self.userID = userID
            self.key = key
        }
    }

    /// Reserves the next feed sequence number of each user in `userIDs`, in order (a user listed twice
    /// gets two consecutive numbers): the user's last sequence, plus one for each earlier mention.
    ///
    /// One statement moves every user's `feed_head` by the number of times the user is listed
    /// (creating it at the first), locking the heads in user-id order, and returns the new last
    /// sequences. Writers reserve before any other write of theirs, so they lock rows in one order:
    /// feed heads, then the conversation.
    func reserveSequences(for userIDs: [String]) async throws -> [Int64] {
        guard !userIDs.isEmpty else { return [] }
        var counts: [String: Int64] = [:]
        for userID in userIDs { counts[userID, default: 0] += 1 }
        let users = counts.keys.sorted()
        let increments = users.map { counts[$0, default: 0] }
        let heads = try await connection.query(
            """
            INSERT INTO feed_head (user_id, last_sequence)
            SELECT user_id, increment
            FROM unnest(\(users)::text[], \(increments)::bigint[]) WITH ORDINALITY AS i (user_id, increment, ord)
            ORDER BY ord
            ON CONFLICT (user_id) DO UPDATE SET last_sequence = feed_head.last_sequence + excluded.last_sequence
            RETURNING user_id, last_sequence
            """,
            logger: logger
        )
        var next: [String: Int64] = [:]
        for try await (userID, last) in heads.decode((String, Int64).self) {
            next[userID] = last - counts[userID, default: 0] + 1
        }
        return try userIDs.map { userID in
            guard let sequence = next[userID] else {
                throw PostgresStorageError("feed_head returned no sequence for a user it was given")
            }
            next[userID] = sequence + 1
            return sequence
        }
    }

    /// Inserts events whose sequences ``reserveSequences(for:)`` gave, in one statement, with the
    /// notifications' idempotency keys (one per event; `nil` for messages and receipts).
    func insert(_ events: [FeedEvent], idempotencyKeys: [String]? = nil) async throws {
        precondition(idempotencyKeys.map { $0.count == events.count } ?? true, "one idempotency key per event")
        guard !events.isEmpty else { return }
        var sql = "INSERT INTO feed_event (user_id, sequence, occurred_at, payload, idempotency_key) VALUES "
        var binds = PostgresBindings(capacity: events.count * 5)
        for (index, event) in events.enumerated() {
            let first = binds.count + 1
            sql += (index == 0 ? "" : ", ") + "($\(first), $\(first + 1), $\(first + 2), $\(first + 3), $\(first + 4))"
            binds.append(event.userID)
            binds.append(event.sequence)
            binds.append(event.occurredAt.millisecondsSince1970)
            try binds.append(event.payload.storageBytes())
            binds.append(idempotencyKeys?[index])
        }
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        // Every server's live subscribers hear of them (PostgresStorage.feedCommits): NOTIFY is sent at
        // commit, and not at all on rollback. The payload is a hint; the event is read from this table.
        let payloads = events.map { PostgresStorage.feedPayload(userID: $0.userID, sequence: $0.sequence) }
        try await connection.query(
            "SELECT pg_notify(\(PostgresStorage.feedChannel), payload) FROM unnest(\(payloads)::text[]) AS payload",
            logger: logger
        )
    }

    /// Which of the notifications' (user, idempotency key) pairs are already on a feed: one probe of
    /// `feed_event_user_key` each.
    func recordedKeys(of notifications: [FeedNotification]) async throws -> Set<NotificationKey> {
        let rows = try await connection.query(
            """
            SELECT k.user_id, k.key
            FROM unnest(\(notifications.map(\.userID))::text[], \(notifications.map(\.idempotencyKey))::text[])
                AS k (user_id, key)
            WHERE EXISTS (
                SELECT 1 FROM feed_event AS e
                WHERE e.user_id = k.user_id AND e.idempotency_key = k.key AND e.idempotency_key IS NOT NULL
            )
            """,
            logger: logger
        )
        var keys: Set<NotificationKey> = []
        for try await (userID, key) in rows.decode((String, String).self) {
            keys.insert(NotificationKey(userID: userID, key: key))
        }
        return keys
    }

    /// A user's events after `sequence`, ascending, at most `limit` (a primary-key range scan).
    func feedEvents(userID: String, after sequence: Int64, limit: Int64) async throws -> [FeedEvent] {
        let rows = try await connection.query(
            """
            SELECT sequence, occurred_at, payload FROM feed_event
            WHERE user_id = \(userID) AND sequence > \(sequence)
            ORDER BY sequence LIMIT \(limit)
            """,
            logger: logger
        )
        var events: [FeedEvent] = []
        for try await (sequence, occurredAt, payload) in rows.decode((Int64, Int64, Data).self) {
            events.append(
                FeedEvent(
                    userID: userID,
                    sequence: sequence,
                    occurredAt: Date(millisecondsSince1970: occurredAt),
                    payload: try FeedPayload(storageBytes: payload)
                )
            )
        }
        return events
    }

    func lastFeedSequence(userID: String) async throws -> Int64 {
        let rows = try await connection.query(
            "SELECT last_sequence FROM feed_head WHERE user_id = \(userID)",
            logger: logger
        )
        for try await last in rows.decode(Int64.self) { return last }
        return 0
    }
}
