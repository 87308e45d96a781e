import Foundation
import GRDB
import SkiffChat
import SkiffDomain
import SkiffFeed
import SkiffTesting
import Testing

@testable import SkiffSQLite

@Suite("SQLite: chat-v2 (feed payloads as protobuf)")
struct SQLiteChatMigrationTests {
    /// Feed payloads exactly as "chat-v1" stored them: JSON of the Swift enum, dates in milliseconds.
    static let oldRows: [(user: String, sequence: Int64, key: String?, json: String)] = [
        (
            "usr_a", 1, nil,
            #"{"message":{"_0":{"conversationID":"cnv_1","sequence":1,"senderID":"usr_a","recipientID":"usr_b","#
                + #""text":"Is it still for sale?","listingID":"lst_1","sentAt":1767225600123,"clientMessageID":"c-1"}}}"#
        ),
        (
            "usr_a", 2, nil,
            #"{"message":{"_0":{"conversationID":"cnv_1","sequence":2,"senderID":"usr_b","recipientID":"usr_a","#
                + #""text":"Yes","imageID":"img_9","sentAt":1767225601000}}}"#
        ),
        ("usr_a", 3, nil, #"{"readReceipt":{"_0":{"conversationID":"cnv_1","readerID":"usr_b","readUpTo":1}}}"#),
        (
            "usr_a", 4, "bids:7",
            #"{"notification":{"_0":{"bid":{"_0":{"kind":"accepted","bidID":"bid_1","listingID":"lst_1","#
                + #""saleID":"sal_1","amountCents":2500}}}}}"#
        ),
        (
            "usr_a", 5, "bids:8",
            #"{"notification":{"_0":{"bid":{"_0":{"kind":"placed","bidID":"bid_2","listingID":"lst_1","amountCents":900}}}}}"#
        ),
        (
            "usr_a", 6, "listings:3",
            #"{"notification":{"_0":{"listing":{"_0":{"kind":"price_changed","listingID":"lst_2","title":"Desk","#
                + #""newPriceCents":1500,"oldPriceCents":2000}}}}}"#
        ),
        (
            "usr_b", 1, "lostfound:1",
            #"{"notification":{"_0":{"lostFoundMatch":{"_0":{"lostItemID":"lst_l","foundItemID":"fnd_1","#
                + #""foundItemTitle":"Blue umbrella","score":0.875}}}}}"#
        ),
        (
            "usr_b", 2, "comments:1",
            #"{"notification":{"_0":{"listingComment":{"_0":{"kind":"replied","listingID":"lst_3","#
                + #""listingTitle":"Lamp","commentID":"cmt_1","authorID":"","excerpt":"Still here"}}}}}"#
        ),
    ]

    static let expected: [String: [FeedPayload]] = [
        "usr_a": [
            .message(
                ChatMessage(
                    conversationID: "cnv_1",
                    sequence: 1,
                    senderID: "usr_a",
                    recipientID: "usr_b",
                    text: "Is it still for sale?",
                    listingID: "lst_1",
                    sentAt: Date(millisecondsSince1970: 1_767_225_600_123),
                    clientMessageID: "c-1"
                )
            ),
            .message(
                ChatMessage(
                    conversationID: "cnv_1",
                    sequence: 2,
                    senderID: "usr_b",
                    recipientID: "usr_a",
                    text: "Yes",
                    imageID: "img_9",
                    sentAt: Date(millisecondsSince1970: 1_767_225_601_000)
                )
            ),
            .readReceipt(ReadReceipt(conversationID: "cnv_1", readerID: "usr_b", readUpTo: 1)),
            .notification(
                .bid(.init(kind: "accepted", bidID: "bid_1", listingID: "lst_1", saleID: "sal_1", amountCents: 2_500))
            ),
            .notification(.bid(.init(kind: "placed", bidID: "bid_2", listingID: "lst_1", amountCents: 900))),
            .notification(
                .listing(
                    .init(
                        kind: "price_changed",
                        listingID: "lst_2",
                        title: "Desk",
                        newPriceCents: 1_500,
                        oldPriceCents: 2_000
                    )
                )
            ),
        ],
        "usr_b": [
            .notification(
                .lostFoundMatch(
                    .init(lostItemID: "lst_l", foundItemID: "fnd_1", foundItemTitle: "Blue umbrella", score: 0.875)
                )
            ),
            .notification(
                .listingComment(
                    .init(
                        kind: "replied",
                        listingID: "lst_3",
                        listingTitle: "Lamp",
                        commentID: "cmt_1",
                        authorID: "",
                        excerpt: "Still here"
                    )
                )
            ),
        ],
    ]

    @Test("every kind of stored feed event survives the move from JSON to protobuf, with its key and time")
    func upgrade() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("skiff.sqlite").path
            try await makeDatabase(path, before: "chat-v2") { db in
                for row in Self.oldRows {
                    try db.execute(
                        sql: """
                            INSERT INTO feedEvent (userID, sequence, occurredAt, payload, idempotencyKey)
                            VALUES (?, ?, ?, ?, ?)
                            """,
                        arguments: [row.user, row.sequence, 1_767_225_600_000 + row.sequence, row.json, row.key]
                    )
                }
                try db.execute(sql: "INSERT INTO feedHead (userID, lastSequence) VALUES ('usr_a', 6), ('usr_b', 2)")
            }
            let database = try await SQLiteDatabase.open(atPath: path)
            defer { try? database.close() }
            let store = database.chatStore()
            for (user, payloads) in Self.expected {
                let events = try await store.feedEvents(userID: user, after: 0, limit: 100)
                #expect(events.map(\.payload) == payloads)
                #expect(events.map(\.sequence) == Array(1...Int64(payloads.count)))
                #expect(
                    events.map(\.occurredAt)
                        == events.map { Date(millisecondsSince1970: 1_767_225_600_000 + $0.sequence) }
                )
            }
            // The idempotency keys came along: publishing a converted notification again adds nothing.
            let again = try await store.appendNotifications(
                [
                    FeedNotification(
                        userID: "usr_a",
                        idempotencyKey: "bids:8",
                        kind: .bid(.init(kind: "placed", bidID: "bid_2", listingID: "lst_1", amountCents: 900)),
                        occurredAt: Date(millisecondsSince1970: 1_767_225_700_000)
                    )
                ],
                now: Date(millisecondsSince1970: 1_767_225_700_000)
            )
            #expect(again.isEmpty)
            #expect(try await store.lastFeedSequence(userID: "usr_a") == 6)
            // The column is a BLOB now, and its indexes are back.
            let (type, indexes) = try await database.pool.read { db in
                (
                    try String.fetchOne(db, sql: "SELECT typeof(payload) FROM feedEvent LIMIT 1"),
                    try String.fetchAll(
                        db,
                        sql:
                            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'feedEvent' ORDER BY name"
                    )
                )
            }
            #expect(type == "blob")
            #expect(indexes == ["feedEvent_occurredAt", "feedEvent_user_key"])
        }
    }

    @Test("a payload that is not chat-v1 JSON stops the migration with a message, and changes nothing")
    func corruptRow() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("skiff.sqlite").path
            try await makeDatabase(path, before: "chat-v2") { db in
                try db.execute(
                    sql:
                        "INSERT INTO feedEvent (userID, sequence, occurredAt, payload) VALUES ('usr_a', 1, 0, '{\"gone\":{}}')"
                )
            }
            await #expect(throws: (any Error).self) { try await SQLiteDatabase.open(atPath: path) }
            let old = try DatabasePool(path: path)
            defer { try? old.close() }
            let payload = try await old.read { db in try String.fetchOne(db, sql: "SELECT payload FROM feedEvent") }
            #expect(payload == #"{"gone":{}}"#)
        }
    }
}
