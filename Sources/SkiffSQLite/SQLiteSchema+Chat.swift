import GRDB

extension SQLiteSchema {
    // MARK: Chat

    static func registerChatMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Dates are INTEGER milliseconds since 1970; user and listing ids are not
        // foreign keys (those rows belong to other services). A conversation is unique per ordered
        // pair and listing ('' for none). Feed payloads are JSON of `FeedPayload`; `feedHead` keeps
        // each user's last sequence so numbering continues after old events are pruned.
        migrator.registerMigration("chat-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE conversation (
                        id TEXT NOT NULL PRIMARY KEY,
                        firstUserID TEXT NOT NULL,
                        secondUserID TEXT NOT NULL,
                        listingID TEXT NOT NULL DEFAULT '',
                        createdAt INTEGER NOT NULL,
                        lastSequence INTEGER NOT NULL DEFAULT 0 CHECK (lastSequence >= 0),
                        lastActivityAt INTEGER NOT NULL,
                        firstReadUpTo INTEGER NOT NULL DEFAULT 0,
                        secondReadUpTo INTEGER NOT NULL DEFAULT 0,
                        CHECK (firstUserID < secondUserID),
                        UNIQUE (firstUserID, secondUserID, listingID)
                    ) STRICT;
                    CREATE INDEX conversation_first_activity ON conversation(firstUserID, lastActivityAt DESC, id);
                    CREATE INDEX conversation_second_activity ON conversation(secondUserID, lastActivityAt DESC, id);

                    CREATE TABLE message (
                        conversationID TEXT NOT NULL REFERENCES conversation(id),
                        sequence INTEGER NOT NULL CHECK (sequence > 0),
                        senderID TEXT NOT NULL,
                        recipientID TEXT NOT NULL,
                        text TEXT NOT NULL,
                        imageID TEXT,
                        listingID TEXT,
                        sentAt INTEGER NOT NULL,
                        clientMessageID TEXT,
                        PRIMARY KEY (conversationID, sequence)
                    ) STRICT, WITHOUT ROWID;
                    CREATE UNIQUE INDEX message_sender_client ON message(senderID, clientMessageID)
                        WHERE clientMessageID IS NOT NULL;

                    CREATE TABLE userBlock (
                        blockerID TEXT NOT NULL,
                        blockedID TEXT NOT NULL,
                        blockedAt INTEGER NOT NULL,
                        PRIMARY KEY (blockerID, blockedID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX userBlock_blocker_time ON userBlock(blockerID, blockedAt DESC, blockedID);

                    CREATE TABLE feedHead (
                        userID TEXT NOT NULL PRIMARY KEY,
                        lastSequence INTEGER NOT NULL CHECK (lastSequence > 0)
                    ) STRICT, WITHOUT ROWID;

                    CREATE TABLE feedEvent (
                        userID TEXT NOT NULL,
                        sequence INTEGER NOT NULL CHECK (sequence > 0),
                        occurredAt INTEGER NOT NULL,
                        payload TEXT NOT NULL,
                        idempotencyKey TEXT,
                        PRIMARY KEY (userID, sequence)
                    ) STRICT, WITHOUT ROWID;
                    CREATE UNIQUE INDEX feedEvent_user_key ON feedEvent(userID, idempotencyKey)
                        WHERE idempotencyKey IS NOT NULL;
                    CREATE INDEX feedEvent_occurredAt ON feedEvent(occurredAt);
                    """
            )
        }
    }
}
