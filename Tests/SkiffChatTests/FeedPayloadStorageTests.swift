import Foundation
import SkiffChat
import SkiffDomain
import SkiffFeed
import Testing

@Suite("Feed payloads in storage")
struct FeedPayloadStorageTests {
    static let payloads: [FeedPayload] = [
        .message(
            ChatMessage(
                conversationID: "cnv_1",
                sequence: 3,
                senderID: "usr_a",
                recipientID: "usr_b",
                text: "Hi 👋",
                imageID: "img_1",
                listingID: "lst_1",
                sentAt: Date(millisecondsSince1970: 1_767_225_600_123),
                clientMessageID: "c-1"
            )
        ),
        .message(
            ChatMessage(
                conversationID: "cnv_1",
                sequence: 4,
                senderID: "usr_b",
                recipientID: "usr_a",
                text: "",
                sentAt: Date(millisecondsSince1970: 0)
            )
        ),
        .readReceipt(ReadReceipt(conversationID: "cnv_1", readerID: "usr_a", readUpTo: 4)),
        .notification(.bid(.init(kind: "countered", bidID: "bid_1", listingID: "lst_1", amountCents: 1))),
        .notification(.bid(.init(kind: "completed", bidID: "bid_1", listingID: "lst_1", saleID: "", amountCents: 0))),
        .notification(
            .listing(.init(kind: "sold", listingID: "lst_1", title: "Bike", newPriceCents: 0, oldPriceCents: 9))
        ),
        .notification(.lostFoundMatch(.init(lostItemID: "a", foundItemID: "b", foundItemTitle: "Keys", score: 1))),
        .notification(
            .listingComment(
                .init(kind: "commented", listingID: "l", listingTitle: "t", commentID: "c", authorID: "u", excerpt: "e")
            )
        ),
    ]

    @Test("every payload kind reads back as it was stored, optional fields told apart from empty ones")
    func roundTrip() throws {
        for payload in Self.payloads {
            #expect(try FeedPayload(storageBytes: payload.storageBytes()) == payload)
        }
    }

    @Test("the stored form is protobuf with fixed field numbers: a bid notice is field 3")
    func wireForm() throws {
        let bytes = try FeedPayload.notification(
            .bid(.init(kind: "placed", bidID: "b", listingID: "l", amountCents: 5))
        ).storageBytes()
        // Field 3, length-delimited (0x1a), then the notice: kind=1 "placed", bid_id=2 "b", listing_id=3 "l", amount_cents=5 5.
        #expect(
            Array(bytes) == [0x1A, 0x10, 0x0A, 0x06] + Array("placed".utf8) + [
                0x12, 0x01, 0x62, 0x1A, 0x01, 0x6C, 0x28, 0x05,
            ]
        )
    }

    @Test("bytes that are not a stored payload, or of a kind this version does not know, are refused")
    func refused() {
        #expect(throws: FeedPayloadStorageError.self) { try FeedPayload(storageBytes: Data([0xFF, 0xFF])) }
        // An empty payload, and one with only a field a later version added (field 99).
        #expect(throws: FeedPayloadStorageError.self) { try FeedPayload(storageBytes: Data()) }
        #expect(throws: FeedPayloadStorageError.self) { try FeedPayload(storageBytes: Data([0x98, 0x06, 0x01])) }
    }
}
