public import Foundation
public import SkiffDomain

extension EntityID.Prefix {
    /// Bids (`bid_`).
    public static let bid = EntityID.Prefix("bid")
    /// Sales (`sale_`).
    public static let sale = EntityID.Prefix("sale")
}

/// Where a bid is in its life: PENDING (back and forth with COUNTERED) until it ends ACCEPTED, REJECTED,
/// WITHDRAWN or SUPERSEDED.
public enum BidState: String, CaseIterable, Hashable, Sendable, Codable {
    /// Waiting for the seller.
    case pending
    /// The seller proposed a counter-offer; waiting for the bidder.
    case countered
    /// Accepted: a sale exists. Final.
    case accepted
    /// Turned down by the seller. Final.
    case rejected
    /// Withdrawn by the bidder, or replaced by the bidder's higher bid. Final.
    case withdrawn
    /// Another bid on the listing was accepted. Final.
    case superseded

    /// Whether the bid is still open (PENDING or COUNTERED).
    public var isLive: Bool { self == .pending || self == .countered }
}

/// An offer to buy a listing.
public struct Bid: Hashable, Sendable {
    /// The opaque id (`bid_…`).
    public var id: String
    /// The listing bid on.
    public var listingID: String
    /// The listing's seller, captured when the bid was placed.
    public var sellerID: String
    /// The bidder's user id.
    public var bidderID: String
    /// The offered amount in cents.
    public var amountCents: Int64
    /// Where the bid is in its life.
    public var state: BidState
    /// The seller's counter-offer in cents; 0 if there never was one.
    public var counterAmountCents: Int64
    /// The seller's reason when rejected; may be empty.
    public var rejectionReason: String
    /// The amount the sale was made at, when accepted; else 0.
    public var acceptedAmountCents: Int64
    /// The sale this bid led to, when accepted.
    public var saleID: String?
    /// The bidder's idempotency key, if the bid was placed with one.
    public var requestID: String?
    /// When the bid was placed.
    public var createdAt: Date
    /// When the bid last changed state or counter-offer.
    public var updatedAt: Date

    /// Creates a bid.
    public init(
        id: String,
        listingID: String,
        sellerID: String,
        bidderID: String,
        amountCents: Int64,
        state: BidState = .pending,
        counterAmountCents: Int64 = 0,
        rejectionReason: String = "",
        acceptedAmountCents: Int64 = 0,
        saleID: String? = nil,
        requestID: String? = nil,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.listingID = listingID
        self.sellerID = sellerID
        self.bidderID = bidderID
        self.amountCents = amountCents
        self.state = state
        self.counterAmountCents = counterAmountCents
        self.rejectionReason = rejectionReason
        self.acceptedAmountCents = acceptedAmountCents
        self.saleID = saleID
        self.requestID = requestID
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// The bid with its dates rounded to the millisecond precision stores keep.
    public var rounded: Bid {
        var bid = self
        bid.createdAt = createdAt.roundedToMilliseconds
        bid.updatedAt = updatedAt.roundedToMilliseconds
        return bid
    }
}

/// What a store needs to place a new bid; the service has checked the listing and the amount's range.
public struct NewBid: Hashable, Sendable {
    /// The new bid's id (`bid_…`).
    public var id: String
    /// The listing bid on.
    public var listingID: String
    /// The listing's seller.
    public var sellerID: String
    /// The bidder.
    public var bidderID: String
    /// The offer in cents.
    public var amountCents: Int64
    /// The listing's asking price in cents: the lowest acceptable amount.
    public var askingPriceCents: Int64
    /// The bidder's optional idempotency key.
    public var requestID: String?

    /// Creates the input of ``BidsStore/placeBid(_:now:)``.
    public init(
        id: String,
        listingID: String,
        sellerID: String,
        bidderID: String,
        amountCents: Int64,
        askingPriceCents: Int64,
        requestID: String? = nil
    ) {
        self.id = id
        self.listingID = listingID
        self.sellerID = sellerID
        self.bidderID = bidderID
        self.amountCents = amountCents
        self.askingPriceCents = askingPriceCents
        self.requestID = requestID
    }
}
