public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every Bids request, checked first in each RPC — before authentication, any store
/// access or rule — in time linear in the limits, not in the request.
///
/// Each limit is in UTF-8 bytes (strings) or elements (repeated fields) and documented on the field in
/// `bids.proto`; the character limits of the service apply afterwards. Violations are INVALID_ARGUMENT
/// naming the field and its limit.
public enum BidsRequestBounds {
    /// The longest id (listing, bid, sale) and the longest `request_id`.
    public static let idBytes = RequestBounds.idBytes
    /// The longest rejection reason (500 characters of up to 4 bytes).
    public static let reasonBytes = 2_000
    /// The most states in ListMyBids' filter, duplicates included.
    public static let enumValues = 16

    /// PlaceBid: the listing id and the request id.
    public static func check(_ request: Skiff_Bids_V1_PlaceBidRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
        try RequestBounds.check(request.requestID, "request_id", atMost: idBytes)
    }

    /// WithdrawBid: the bid id.
    public static func check(_ request: Skiff_Bids_V1_WithdrawBidRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
    }

    /// AcceptBid: the bid id.
    public static func check(_ request: Skiff_Bids_V1_AcceptBidRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
    }

    /// RejectBid: the bid id and the reason.
    public static func check(_ request: Skiff_Bids_V1_RejectBidRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
        try RequestBounds.check(request.reason, "reason", atMost: reasonBytes)
    }

    /// CounterBid: the bid id.
    public static func check(_ request: Skiff_Bids_V1_CounterBidRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
    }

    /// AcceptCounter: the bid id.
    public static func check(_ request: Skiff_Bids_V1_AcceptCounterRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
    }

    /// DeclineCounter: the bid id.
    public static func check(_ request: Skiff_Bids_V1_DeclineCounterRequest) throws(DomainError) {
        try RequestBounds.check(request.bidID, "bid_id", atMost: idBytes)
    }

    /// ConfirmHandoff: the sale id and the hand-off place id.
    public static func check(_ request: Skiff_Bids_V1_ConfirmHandoffRequest) throws(DomainError) {
        try RequestBounds.check(request.saleID, "sale_id", atMost: idBytes)
        try RequestBounds.check(request.handoffPlaceID, "handoff_place_id", atMost: idBytes)
    }

    /// ListBidsForListing: the listing id, page size and page token.
    public static func check(_ request: Skiff_Bids_V1_ListBidsForListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMyBids: the states, page size and page token.
    public static func check(_ request: Skiff_Bids_V1_ListMyBidsRequest) throws(DomainError) {
        try RequestBounds.checkCount(request.states.count, "states", atMost: enumValues)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMyPurchases: page size and page token.
    public static func check(_ request: Skiff_Bids_V1_ListMyPurchasesRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMySales: page size and page token.
    public static func check(_ request: Skiff_Bids_V1_ListMySalesRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// GetSale: the sale id.
    public static func check(_ request: Skiff_Bids_V1_GetSaleRequest) throws(DomainError) {
        try RequestBounds.check(request.saleID, "sale_id", atMost: idBytes)
    }

    /// CountPendingBids: the listing id.
    public static func check(_ request: Skiff_Bids_V1_CountPendingBidsRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// CloseListing: the listing id.
    public static func check(_ request: Skiff_Bids_V1_CloseListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// WithdrawBidderBids: the bidder id.
    public static func check(_ request: Skiff_Bids_V1_WithdrawBidderBidsRequest) throws(DomainError) {
        try RequestBounds.check(request.bidderID, "bidder_id", atMost: idBytes)
    }
}
