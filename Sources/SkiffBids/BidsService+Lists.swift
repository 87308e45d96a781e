import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension BidsService {
    public func listBidsForListing(
        request: Skiff_Bids_V1_ListBidsForListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ListBidsForListingResponse {
        try BidsRequestBounds.check(request)
        let listingID = try Self.requireListingID(request.listingID)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let listing = try await requireListing(listingID)
        let isSeller = context.user?.id == listing.sellerID
        guard isSeller || listing.status != .withdrawn else {
            throw DomainError(.notFound, "No listing has the id \"\(listingID)\".")
        }
        let summary = try await store.liveBidSummary(listingID: listingID)
        var response = Skiff_Bids_V1_ListBidsForListingResponse.with {
            $0.bidCount = Int32(clamping: summary.count)
            $0.highestAmountCents = summary.highestAmountCents
        }
        if isSeller {
            let bids = try await store.listingBids(listingID: listingID, page: page)
            response.bids = bids.items.map(\.proto)
            response.nextPageToken = bids.nextPageToken ?? ""
        }
        return response
    }

    public func listMyBids(
        request: Skiff_Bids_V1_ListMyBidsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ListMyBidsResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        var states: Set<BidState> = []
        for state in request.states {
            guard let domain = BidState(state) else {
                throw DomainError(
                    .invalidArgument,
                    "states must contain only BID_STATE_PENDING … BID_STATE_SUPERSEDED."
                )
            }
            states.insert(domain)
        }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let bids = try await store.bids(bidderID: user.id, states: states, page: page)
        return .with {
            $0.bids = bids.items.map(\.proto)
            $0.nextPageToken = bids.nextPageToken ?? ""
        }
    }

    public func listMyPurchases(
        request: Skiff_Bids_V1_ListMyPurchasesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ListMyPurchasesResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let sales = try await store.purchases(buyerID: user.id, page: page)
        let rendered = try await render(sales.items)
        return .with {
            $0.sales = rendered
            $0.nextPageToken = sales.nextPageToken ?? ""
        }
    }

    public func listMySales(
        request: Skiff_Bids_V1_ListMySalesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ListMySalesResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let sales = try await store.sales(sellerID: user.id, page: page)
        let rendered = try await render(sales.items)
        return .with {
            $0.sales = rendered
            $0.nextPageToken = sales.nextPageToken ?? ""
        }
    }
}
