public import Foundation
import SkiffDomain
import SkiffFeed
import SwiftProtobuf

/// The stored form of feed payloads: `skiff.chat.storage.v1.StoredFeedPayload` (Protos/skiff/chat/
/// storage/v1), so that rows written by one version of Skiff are read by every later one whatever
/// the Swift types are called. Stores keep these bytes; nothing else reads them.
extension FeedPayload {
    /// The payload as stored.
    public func storageBytes() throws -> Data {
        try storedForm.serializedData()
    }

    /// A payload read back from its stored bytes. Throws ``FeedPayloadStorageError`` when the bytes
    /// are not a stored payload, or one of a kind this version does not know.
    public init(storageBytes bytes: Data) throws {
        let stored: Skiff_Chat_Storage_V1_StoredFeedPayload
        do {
            stored = try Skiff_Chat_Storage_V1_StoredFeedPayload(serializedBytes: bytes)
        } catch {
            throw FeedPayloadStorageError(reason: "not a stored feed payload: \(error)")
        }
        guard let payload = stored.payload else {
            throw FeedPayloadStorageError(reason: "a stored feed payload of a kind this version does not know")
        }
        self = Self(payload)
    }

    private var storedForm: Skiff_Chat_Storage_V1_StoredFeedPayload {
        var stored = Skiff_Chat_Storage_V1_StoredFeedPayload()
        switch self {
        case .message(let message):
            stored.message = .with {
                $0.conversationID = message.conversationID
                $0.sequence = message.sequence
                $0.senderID = message.senderID
                $0.recipientID = message.recipientID
                $0.text = message.text
                if let imageID = message.imageID { $0.imageID = imageID }
                if let listingID = message.listingID { $0.listingID = listingID }
                $0.sentAtMs = message.sentAt.millisecondsSince1970
                if let clientID = message.clientMessageID { $0.clientMessageID = clientID }
            }
        case .readReceipt(let receipt):
            stored.readReceipt = .with {
                $0.conversationID = receipt.conversationID
                $0.readerID = receipt.readerID
                $0.readUpTo = receipt.readUpTo
            }
        case .notification(.bid(let bid)):
            stored.bid = .with {
                $0.kind = bid.kind
                $0.bidID = bid.bidID
                $0.listingID = bid.listingID
                if let saleID = bid.saleID { $0.saleID = saleID }
                $0.amountCents = bid.amountCents
            }
        case .notification(.listing(let listing)):
            stored.listing = .with {
                $0.kind = listing.kind
                $0.listingID = listing.listingID
                $0.title = listing.title
                $0.newPriceCents = listing.newPriceCents
                $0.oldPriceCents = listing.oldPriceCents
            }
        case .notification(.lostFoundMatch(let match)):
            stored.lostFoundMatch = .with {
                $0.lostItemID = match.lostItemID
                $0.foundItemID = match.foundItemID
                $0.foundItemTitle = match.foundItemTitle
                $0.score = match.score
            }
        case .notification(.listingComment(let comment)):
            stored.listingComment = .with {
                $0.kind = comment.kind
                $0.listingID = comment.listingID
                $0.listingTitle = comment.listingTitle
                $0.commentID = comment.commentID
                $0.authorID = comment.authorID
                $0.excerpt = comment.excerpt
            }
        }
        return stored
    }

    private init(_ stored: Skiff_Chat_Storage_V1_StoredFeedPayload.OneOf_Payload) {
        switch stored {
        case .message(let m):
            self = .message(
                ChatMessage(
                    conversationID: m.conversationID,
                    sequence: m.sequence,
                    senderID: m.senderID,
                    recipientID: m.recipientID,
                    text: m.text,
                    imageID: m.hasImageID ? m.imageID : nil,
                    listingID: m.hasListingID ? m.listingID : nil,
                    sentAt: Date(millisecondsSince1970: m.sentAtMs),
                    clientMessageID: m.hasClientMessageID ? m.clientMessageID : nil
                )
            )
        case .readReceipt(let r):
            self = .readReceipt(
                ReadReceipt(conversationID: r.conversationID, readerID: r.readerID, readUpTo: r.readUpTo)
            )
        case .bid(let b):
            self = .notification(
                .bid(
                    FeedNotification.Bid(
                        kind: b.kind,
                        bidID: b.bidID,
                        listingID: b.listingID,
                        saleID: b.hasSaleID ? b.saleID : nil,
                        amountCents: b.amountCents
                    )
                )
            )
        case .listing(let l):
            self = .notification(
                .listing(
                    FeedNotification.Listing(
                        kind: l.kind,
                        listingID: l.listingID,
                        title: l.title,
                        newPriceCents: l.newPriceCents,
                        oldPriceCents: l.oldPriceCents
                    )
                )
            )
        case .lostFoundMatch(let m):
            self = .notification(
                .lostFoundMatch(
                    FeedNotification.LostFoundMatch(
                        lostItemID: m.lostItemID,
                        foundItemID: m.foundItemID,
                        foundItemTitle: m.foundItemTitle,
                        score: m.score
                    )
                )
            )
        case .listingComment(let c):
            self = .notification(
                .listingComment(
                    FeedNotification.ListingComment(
                        kind: c.kind,
                        listingID: c.listingID,
                        listingTitle: c.listingTitle,
                        commentID: c.commentID,
                        authorID: c.authorID,
                        excerpt: c.excerpt
                    )
                )
            )
        }
    }
}

/// Stored feed-payload bytes that cannot be read.
public struct FeedPayloadStorageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { "feed payload storage: \(reason)" }
}
