import Foundation
import GRDB
import SkiffChat
import SwiftProtobuf

extension SQLiteSchema {
    // MARK: Chat feed payloads as protobuf

    /// Shipped: do not edit. Feed payloads were JSON of the Swift enum `FeedPayload`, so renaming a
    /// case or a field would have made every stored event unreadable. From "chat-v2" on they are
    /// `skiff.chat.storage.v1.StoredFeedPayload` bytes (Protos/skiff/chat/storage/v1), which follow
    /// protobuf's compatibility rules. Rows already stored are converted here, through the frozen
    /// copy of the JSON shape below (never the app's types, which may change).
    static func registerChatFeedPayloadsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("chat-v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE feedEventV2 (
                        userID TEXT NOT NULL,
                        sequence INTEGER NOT NULL CHECK (sequence > 0),
                        occurredAt INTEGER NOT NULL,
                        payload BLOB NOT NULL,
                        idempotencyKey TEXT,
                        PRIMARY KEY (userID, sequence)
                    ) STRICT, WITHOUT ROWID;
                    """
            )
            let insert = try db.makeStatement(
                sql:
                    "INSERT INTO feedEventV2 (userID, sequence, occurredAt, payload, idempotencyKey) VALUES (?, ?, ?, ?, ?)"
            )
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT userID, sequence, occurredAt, payload, idempotencyKey FROM feedEvent"
            )
            while let row = try rows.next() {
                let json: String = row["payload"]
                let sequence: Int64 = row["sequence"]
                let bytes: Data
                do {
                    bytes = try ChatV1FeedPayload.storedBytes(fromJSON: json)
                } catch {
                    throw DatabaseError(
                        message:
                            "chat-v2: feed event \(sequence) of a user has a payload that is not chat-v1 JSON: \(error)"
                    )
                }
                try insert.execute(arguments: [
                    row["userID"], sequence, row["occurredAt"], bytes, row["idempotencyKey"],
                ])
            }
            try db.execute(
                sql: """
                    DROP TABLE feedEvent;
                    ALTER TABLE feedEventV2 RENAME TO feedEvent;
                    CREATE UNIQUE INDEX feedEvent_user_key ON feedEvent(userID, idempotencyKey)
                        WHERE idempotencyKey IS NOT NULL;
                    CREATE INDEX feedEvent_occurredAt ON feedEvent(occurredAt);
                    """
            )
        }
    }
}

/// The JSON the "chat-v1" schema stored for a feed payload: Swift's synthesized coding of the enum
/// as it was then (`{"message":{"_0":{…}}}`, dates as milliseconds since 1970). Frozen: this is
/// what databases in the field hold, whatever the app's types become.
enum ChatV1FeedPayload: Decodable {
    case message(Message)
    case readReceipt(ReadReceipt)
    case notification(Notification)

    struct Message: Decodable {
        var conversationID: String
        var sequence: Int64
        var senderID: String
        var recipientID: String
        var text: String
        var imageID: String?
        var listingID: String?
        var sentAt: Double
        var clientMessageID: String?
    }

    struct ReadReceipt: Decodable {
        var conversationID: String
        var readerID: String
        var readUpTo: Int64
    }

    enum Notification: Decodable {
        case bid(Bid)
        case listing(Listing)
        case lostFoundMatch(LostFoundMatch)
        case listingComment(ListingComment)
    }

    struct Bid: Decodable {
        var kind: String
        var bidID: String
        var listingID: String
        var saleID: String?
        var amountCents: Int64
    }

    struct Listing: Decodable {
        var kind: String
        var listingID: String
        var title: String
        var newPriceCents: Int64
        var oldPriceCents: Int64
    }

    struct LostFoundMatch: Decodable {
        var lostItemID: String
        var foundItemID: String
        var foundItemTitle: String
        var score: Double
    }

    struct ListingComment: Decodable {
        var kind: String
        var listingID: String
        var listingTitle: String
        var commentID: String
        var authorID: String
        var excerpt: String
    }

    /// The protobuf bytes of the stored payload `json` holds.
    static func storedBytes(fromJSON json: String) throws -> Data {
        let old = try JSONDecoder().decode(ChatV1FeedPayload.self, from: Data(json.utf8))
        var stored = Skiff_Chat_Storage_V1_StoredFeedPayload()
        switch old {
        case .message(let m):
            stored.message = .with {
                $0.conversationID = m.conversationID
                $0.sequence = m.sequence
                $0.senderID = m.senderID
                $0.recipientID = m.recipientID
                $0.text = m.text
                if let imageID = m.imageID { $0.imageID = imageID }
                if let listingID = m.listingID { $0.listingID = listingID }
                $0.sentAtMs = Int64(m.sentAt.rounded())
                if let clientID = m.clientMessageID { $0.clientMessageID = clientID }
            }
        case .readReceipt(let r):
            stored.readReceipt = .with {
                $0.conversationID = r.conversationID
                $0.readerID = r.readerID
                $0.readUpTo = r.readUpTo
            }
        case .notification(.bid(let b)):
            stored.bid = .with {
                $0.kind = b.kind
                $0.bidID = b.bidID
                $0.listingID = b.listingID
                if let saleID = b.saleID { $0.saleID = saleID }
                $0.amountCents = b.amountCents
            }
        case .notification(.listing(let l)):
            stored.listing = .with {
                $0.kind = l.kind
                $0.listingID = l.listingID
                $0.title = l.title
                $0.newPriceCents = l.newPriceCents
                $0.oldPriceCents = l.oldPriceCents
            }
        case .notification(.lostFoundMatch(let m)):
            stored.lostFoundMatch = .with {
                $0.lostItemID = m.lostItemID
                $0.foundItemID = m.foundItemID
                $0.foundItemTitle = m.foundItemTitle
                $0.score = m.score
            }
        case .notification(.listingComment(let c)):
            stored.listingComment = .with {
                $0.kind = c.kind
                $0.listingID = c.listingID
                $0.listingTitle = c.listingTitle
                $0.commentID = c.commentID
                $0.authorID = c.authorID
                $0.excerpt = c.excerpt
            }
        }
        return try stored.serializedData()
    }
}
