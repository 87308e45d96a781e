extension PostgresSchema {
    /// The Chat service's tables: conversations, their messages, user blocks, and each user's live
    /// feed (its events and the head that numbers them).
    ///
    /// As on SQLite: user and listing ids are not foreign keys (those rows belong to other services);
    /// a conversation is unique per ordered pair and listing (`''` for none); feed payloads are
    /// `skiff.chat.storage.v1.StoredFeedPayload` bytes; `feed_head` keeps each user's last feed
    /// sequence, so numbering continues after old events are pruned and concurrent appends for one user
    /// contend on one row. Ordered or compared text columns use the "C" collation, so pages come in
    /// byte order (Swift's and SQLite's) whatever the database's locale.
    ///
    /// Every list is answered by an index in its order: a user's conversations by the two
    /// `conversation_*_activity` indexes (one per side of the pair), a conversation's messages and a
    /// user's feed by their primary keys, a user's blocks by `user_block_blocker_time`, pruning by
    /// `feed_event_occurred_at`.
    static let chatMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "chat-v1",
            statements: [
                """
                CREATE TABLE conversation (
                    id text COLLATE "C" PRIMARY KEY,
                    first_user_id text COLLATE "C" NOT NULL,
                    second_user_id text COLLATE "C" NOT NULL,
                    listing_id text COLLATE "C" NOT NULL DEFAULT '',
                    created_at bigint NOT NULL,
                    last_sequence bigint NOT NULL DEFAULT 0 CHECK (last_sequence >= 0),
                    last_activity_at bigint NOT NULL,
                    first_read_up_to bigint NOT NULL DEFAULT 0,
                    second_read_up_to bigint NOT NULL DEFAULT 0,
                    CHECK (first_user_id < second_user_id),
                    UNIQUE (first_user_id, second_user_id, listing_id)
                )
                """,
                """
                CREATE INDEX conversation_first_activity
                    ON conversation (first_user_id, last_activity_at DESC, id)
                """,
                """
                CREATE INDEX conversation_second_activity
                    ON conversation (second_user_id, last_activity_at DESC, id)
                """,
                """
                CREATE TABLE message (
                    conversation_id text COLLATE "C" NOT NULL REFERENCES conversation (id),
                    sequence bigint NOT NULL CHECK (sequence > 0),
                    sender_id text COLLATE "C" NOT NULL,
                    recipient_id text COLLATE "C" NOT NULL,
                    text text NOT NULL,
                    image_id text,
                    listing_id text,
                    sent_at bigint NOT NULL,
                    client_message_id text COLLATE "C",
                    PRIMARY KEY (conversation_id, sequence)
                )
                """,
                """
                CREATE UNIQUE INDEX message_sender_client
                    ON message (sender_id, client_message_id) WHERE client_message_id IS NOT NULL
                """,
                """
                CREATE TABLE user_block (
                    blocker_id text COLLATE "C" NOT NULL,
                    blocked_id text COLLATE "C" NOT NULL,
                    blocked_at bigint NOT NULL,
                    PRIMARY KEY (blocker_id, blocked_id)
                )
                """,
                "CREATE INDEX user_block_blocker_time ON user_block (blocker_id, blocked_at DESC, blocked_id)",
                """
                CREATE TABLE feed_head (
                    user_id text COLLATE "C" PRIMARY KEY,
                    last_sequence bigint NOT NULL CHECK (last_sequence > 0)
                )
                """,
                """
                CREATE TABLE feed_event (
                    user_id text COLLATE "C" NOT NULL,
                    sequence bigint NOT NULL CHECK (sequence > 0),
                    occurred_at bigint NOT NULL,
                    payload bytea NOT NULL,
                    idempotency_key text COLLATE "C",
                    PRIMARY KEY (user_id, sequence)
                )
                """,
                """
                CREATE UNIQUE INDEX feed_event_user_key
                    ON feed_event (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL
                """,
                "CREATE INDEX feed_event_occurred_at ON feed_event (occurred_at)",
            ]
        )
    ]
}
