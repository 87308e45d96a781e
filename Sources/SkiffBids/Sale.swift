public import Foundation

/// Where a sale is in its life.
public enum SaleState: String, CaseIterable, Hashable, Sendable, Codable {
    /// Accepted; buyer and seller still have to meet and confirm the hand-off.
    case pendingHandoff
    /// Both parties confirmed the hand-off. Final.
    case completed
}

/// A sale between a buyer and a seller, created by an accepted bid.
public struct Sale: Hashable, Sendable {
    /// The opaque id (`sale_…`).
    public var id: String
    /// The listing sold.
    public var listingID: String
    /// The listing's title at the time of acceptance.
    public var listingTitle: String
    /// The listing's category at the time of acceptance (for the sustainability impact).
    public var category: ItemCategory
    /// The accepted bid.
    public var bidID: String
    /// The buyer's user id.
    public var buyerID: String
    /// The seller's user id.
    public var sellerID: String
    /// The agreed price in cents.
    public var amountCents: Int64
    /// Where the sale is in its life.
    public var state: SaleState
    /// The conversation opened between buyer and seller; empty if opening it failed (retried on read).
    public var conversationID: String
    /// When the bid was accepted.
    public var createdAt: Date
    /// When the buyer confirmed the hand-off.
    public var buyerConfirmedAt: Date?
    /// When the seller confirmed the hand-off.
    public var sellerConfirmedAt: Date?
    /// When the second party confirmed (the receipt's date); `nil` until completed.
    public var completedAt: Date?
    /// Where buyer and seller hand the item over, as picked by a party when confirming; `nil` until one
    /// picks a place.
    public var handoffPlace: HandoffPlace?

    /// Creates a sale.
    public init(
        id: String,
        listingID: String,
        listingTitle: String,
        category: ItemCategory,
        bidID: String,
        buyerID: String,
        sellerID: String,
        amountCents: Int64,
        state: SaleState = .pendingHandoff,
        conversationID: String = "",
        createdAt: Date,
        buyerConfirmedAt: Date? = nil,
        sellerConfirmedAt: Date? = nil,
        completedAt: Date? = nil,
        handoffPlace: HandoffPlace? = nil
    ) {
        self.id = id
        self.listingID = listingID
        self.listingTitle = listingTitle
        self.category = category
        self.bidID = bidID
        self.buyerID = buyerID
        self.sellerID = sellerID
        self.amountCents = amountCents
        self.state = state
        self.conversationID = conversationID
        self.createdAt = createdAt
        self.buyerConfirmedAt = buyerConfirmedAt
        self.sellerConfirmedAt = sellerConfirmedAt
        self.completedAt = completedAt
        self.handoffPlace = handoffPlace
    }

    /// Whether `userID` is the buyer or the seller.
    public func isParty(_ userID: String) -> Bool { userID == buyerID || userID == sellerID }
}

/// What the service knows of a sale before the store creates it at acceptance.
public struct SaleDraft: Hashable, Sendable {
    /// The new sale's id (`sale_…`).
    public var id: String
    /// The listing's title now.
    public var listingTitle: String
    /// The listing's category now.
    public var category: ItemCategory
    /// The conversation opened between the parties (may be empty).
    public var conversationID: String

    /// Creates a draft.
    public init(id: String, listingTitle: String, category: ItemCategory, conversationID: String) {
        self.id = id
        self.listingTitle = listingTitle
        self.category = category
        self.conversationID = conversationID
    }
}
