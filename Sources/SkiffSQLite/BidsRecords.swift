import Foundation
import GRDB
import SkiffBids
import SkiffDomain

// GRDB records for the Bids tables (see `SQLiteSchema+Bids`, migration "bids-v1").
// Internal: they never cross the `BidsStore` protocol. Dates are INTEGER milliseconds since 1970.

struct BidRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "bid"

    var id: String
    var listingID: String
    var sellerID: String
    var bidderID: String
    var amountCents: Int64
    var state: String
    var counterAmountCents: Int64
    var rejectionReason: String
    var acceptedAmountCents: Int64
    var saleID: String?
    var requestID: String?
    var createdAt: Int64
    var updatedAt: Int64

    init(_ bid: Bid) {
        id = bid.id
        listingID = bid.listingID
        sellerID = bid.sellerID
        bidderID = bid.bidderID
        amountCents = bid.amountCents
        state = bid.state.rawValue
        counterAmountCents = bid.counterAmountCents
        rejectionReason = bid.rejectionReason
        acceptedAmountCents = bid.acceptedAmountCents
        saleID = bid.saleID
        requestID = bid.requestID
        createdAt = bid.createdAt.millisecondsSince1970
        updatedAt = bid.updatedAt.millisecondsSince1970
    }

    var bid: Bid {
        Bid(
            id: id,
            listingID: listingID,
            sellerID: sellerID,
            bidderID: bidderID,
            amountCents: amountCents,
            state: BidState(rawValue: state) ?? .withdrawn,
            counterAmountCents: counterAmountCents,
            rejectionReason: rejectionReason,
            acceptedAmountCents: acceptedAmountCents,
            saleID: saleID,
            requestID: requestID,
            createdAt: Date(millisecondsSince1970: createdAt),
            updatedAt: Date(millisecondsSince1970: updatedAt)
        )
    }
}

struct SaleRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "sale"

    var id: String
    var listingID: String
    var listingTitle: String
    var category: String
    var bidID: String
    var buyerID: String
    var sellerID: String
    var amountCents: Int64
    var state: String
    var conversationID: String
    var createdAt: Int64
    var buyerConfirmedAt: Int64?
    var sellerConfirmedAt: Int64?
    var completedAt: Int64?
    // The picked hand-off place's copy (bids-v4): all set, or all NULL.
    var handoffPlaceID: String?
    var handoffPlaceName: String?
    var handoffPlaceLatitude: Double?
    var handoffPlaceLongitude: Double?
    var handoffPlaceHours: String?

    init(_ sale: Sale) {
        id = sale.id
        listingID = sale.listingID
        listingTitle = sale.listingTitle
        category = sale.category.rawValue
        bidID = sale.bidID
        buyerID = sale.buyerID
        sellerID = sale.sellerID
        amountCents = sale.amountCents
        state = sale.state.rawValue
        conversationID = sale.conversationID
        createdAt = sale.createdAt.millisecondsSince1970
        buyerConfirmedAt = sale.buyerConfirmedAt?.millisecondsSince1970
        sellerConfirmedAt = sale.sellerConfirmedAt?.millisecondsSince1970
        completedAt = sale.completedAt?.millisecondsSince1970
        handoffPlaceID = sale.handoffPlace?.id
        handoffPlaceName = sale.handoffPlace?.name
        handoffPlaceLatitude = sale.handoffPlace?.latitude
        handoffPlaceLongitude = sale.handoffPlace?.longitude
        handoffPlaceHours = sale.handoffPlace?.hours
    }

    var handoffPlace: HandoffPlace? {
        guard let handoffPlaceID, let handoffPlaceName, let handoffPlaceLatitude, let handoffPlaceLongitude else {
            return nil
        }
        return HandoffPlace(
            id: handoffPlaceID,
            name: handoffPlaceName,
            latitude: handoffPlaceLatitude,
            longitude: handoffPlaceLongitude,
            hours: handoffPlaceHours ?? ""
        )
    }

    var sale: Sale {
        Sale(
            id: id,
            listingID: listingID,
            listingTitle: listingTitle,
            category: ItemCategory(rawValue: category) ?? .other,
            bidID: bidID,
            buyerID: buyerID,
            sellerID: sellerID,
            amountCents: amountCents,
            state: SaleState(rawValue: state) ?? .pendingHandoff,
            conversationID: conversationID,
            createdAt: Date(millisecondsSince1970: createdAt),
            buyerConfirmedAt: buyerConfirmedAt.map(Date.init(millisecondsSince1970:)),
            sellerConfirmedAt: sellerConfirmedAt.map(Date.init(millisecondsSince1970:)),
            completedAt: completedAt.map(Date.init(millisecondsSince1970:)),
            handoffPlace: handoffPlace
        )
    }
}

struct AcceptanceClaimRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "acceptanceClaim"

    var listingID: String
    var bidID: String
    var kind: String
    var claimedAt: Int64
}

struct BidEventRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "bidEvent"

    var userID: String
    var sequence: Int64
    var kind: String
    var bidID: String
    var listingID: String
    var saleID: String?
    var amountCents: Int64
    var createdAt: Int64

    init(_ event: BidEvent) {
        userID = event.userID
        sequence = event.sequence
        kind = event.kind.rawValue
        bidID = event.bidID
        listingID = event.listingID
        saleID = event.saleID
        amountCents = event.amountCents
        createdAt = event.createdAt.millisecondsSince1970
    }

    var event: BidEvent? {
        guard let kind = BidEvent.Kind(rawValue: kind) else { return nil }
        return BidEvent(
            userID: userID,
            sequence: sequence,
            kind: kind,
            bidID: bidID,
            listingID: listingID,
            saleID: saleID,
            amountCents: amountCents,
            createdAt: Date(millisecondsSince1970: createdAt)
        )
    }
}
