import Foundation
public import SkiffAPI
import SwiftProtobuf

// Conversions between the Bids domain types and the generated wire types, at the service edge only.

extension BidState {
    /// The wire state.
    public var proto: Skiff_Bids_V1_BidState {
        switch self {
        case .pending: .pending
        case .countered: .countered
        case .accepted: .accepted
        case .rejected: .rejected
        case .withdrawn: .withdrawn
        case .superseded: .superseded
        }
    }

    /// The domain state of a wire state; `nil` for UNSPECIFIED and unknown values.
    public init?(_ proto: Skiff_Bids_V1_BidState) {
        switch proto {
        case .pending: self = .pending
        case .countered: self = .countered
        case .accepted: self = .accepted
        case .rejected: self = .rejected
        case .withdrawn: self = .withdrawn
        case .superseded: self = .superseded
        case .unspecified, .UNRECOGNIZED: return nil
        }
    }
}

extension ItemCategory {
    /// The Listings wire category.
    public var proto: Skiff_Listings_V1_Category {
        switch self {
        case .clothing: .clothing
        case .shoes: .shoes
        case .accessories: .accessories
        case .electronics: .electronics
        case .books: .books
        case .furniture: .furniture
        case .tickets: .tickets
        case .other: .other
        }
    }

    /// The category of a Listings wire category (UNSPECIFIED and unknown values are ``other``), for
    /// ``ListingDirectory`` implementations over the Listings client.
    public init(_ proto: Skiff_Listings_V1_Category) {
        switch proto {
        case .clothing: self = .clothing
        case .shoes: self = .shoes
        case .accessories: self = .accessories
        case .electronics: self = .electronics
        case .books: self = .books
        case .furniture: self = .furniture
        case .tickets: self = .tickets
        case .other, .unspecified, .UNRECOGNIZED: self = .other
        }
    }
}

extension ListingStatus {
    /// The status of a Listings wire status (UNSPECIFIED and unknown values are treated as ``withdrawn``:
    /// not for sale), for ``ListingDirectory`` implementations over the Listings client.
    public init(_ proto: Skiff_Listings_V1_ListingStatus) {
        switch proto {
        case .active: self = .active
        case .sold: self = .sold
        case .withdrawn, .unspecified, .UNRECOGNIZED: self = .withdrawn
        }
    }
}

extension Bid {
    /// The wire bid.
    var proto: Skiff_Bids_V1_Bid {
        .with {
            $0.bidID = id
            $0.listingID = listingID
            $0.bidderID = bidderID
            $0.amountCents = amountCents
            $0.state = state.proto
            $0.counterAmountCents = counterAmountCents
            $0.rejectionReason = rejectionReason
            $0.acceptedAmountCents = acceptedAmountCents
            $0.saleID = saleID ?? ""
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
            $0.updatedAt = Google_Protobuf_Timestamp(date: updatedAt)
        }
    }
}

extension SustainabilityImpact {
    /// The wire impact, with the sentence for the item `title`.
    func proto(title: String) -> Skiff_Bids_V1_SustainabilityImpact {
        .with {
            $0.co2EGramsSaved = co2eGramsSaved
            $0.waterLitersSaved = waterLitersSaved
            $0.category = category.proto
            $0.explanation = explanation(title: title)
        }
    }
}

extension Sale {
    /// The wire sale.
    ///
    /// - Parameters:
    ///   - paymentHandle: The seller's payment handle, or `nil`.
    ///   - ratingWindow: How long after completion the buyer may rate the seller.
    func proto(paymentHandle: String?, ratingWindow: TimeInterval) -> Skiff_Bids_V1_Sale {
        .with {
            $0.saleID = id
            $0.listingID = listingID
            $0.listingTitle = listingTitle
            $0.bidID = bidID
            $0.buyerID = buyerID
            $0.sellerID = sellerID
            $0.amountCents = amountCents
            $0.state = state == .completed ? .completed : .pendingHandoff
            $0.conversationID = conversationID
            $0.sellerPaymentHandle = paymentHandle ?? ""
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
            if let buyerConfirmedAt { $0.buyerConfirmedAt = Google_Protobuf_Timestamp(date: buyerConfirmedAt) }
            if let sellerConfirmedAt { $0.sellerConfirmedAt = Google_Protobuf_Timestamp(date: sellerConfirmedAt) }
            if state == .completed, let completedAt {
                $0.receipt = .with { receipt in
                    receipt.saleID = id
                    receipt.listingID = listingID
                    receipt.listingTitle = listingTitle
                    receipt.buyerID = buyerID
                    receipt.sellerID = sellerID
                    receipt.amountCents = amountCents
                    receipt.completedAt = Google_Protobuf_Timestamp(date: completedAt)
                }
                $0.rateBy = Google_Protobuf_Timestamp(date: completedAt.addingTimeInterval(ratingWindow))
            }
            $0.sustainabilityImpact = SustainabilityImpact.estimate(for: category).proto(title: listingTitle)
            if let handoffPlace { $0.handoffPlace = handoffPlace.proto }
        }
    }
}

extension HandoffPlace {
    /// The wire place.
    var proto: Skiff_Bids_V1_HandoffPlace {
        .with {
            $0.placeID = id
            $0.name = name
            $0.latitude = latitude
            $0.longitude = longitude
            $0.hours = hours
        }
    }
}
