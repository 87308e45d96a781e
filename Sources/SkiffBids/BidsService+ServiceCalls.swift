import Foundation
import Logging
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// The calls only other Skiff services make (with the service token): Listings asks whether a listing
/// has live bids, and tells Bids when a listing leaves the market outside the bid flow.
extension BidsService {
    public func countPendingBids(
        request: Skiff_Bids_V1_CountPendingBidsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_CountPendingBidsResponse {
        try BidsRequestBounds.check(request)
        try context.requireService()
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let summary = try await store.liveBidSummary(listingID: request.listingID)
        return .with { $0.count = Int32(clamping: summary.count) }
    }

    public func closeListing(
        request: Skiff_Bids_V1_CloseListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_CloseListingResponse {
        try BidsRequestBounds.check(request)
        try context.requireService()
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        let reason: String
        switch request.closure {
        case .sold: reason = Self.soldElsewhereReason
        case .withdrawn: reason = Self.withdrawnReason
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "closure must be LISTING_CLOSURE_SOLD or LISTING_CLOSURE_WITHDRAWN."
            )
        }
        let recorded = try await store.closeListing(listingID: request.listingID, reason: reason, now: time.now())
        await announce(recorded.events)
        return .with { $0.rejectedBids = recorded.value.map(\.proto) }
    }

    public func withdrawBidderBids(
        request: Skiff_Bids_V1_WithdrawBidderBidsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_WithdrawBidderBidsResponse {
        try BidsRequestBounds.check(request)
        try context.requireService()
        guard !request.bidderID.isEmpty else { throw DomainError(.invalidArgument, "bidder_id is empty.") }
        var withdrawn: [Bid] = []
        var page = try PageRequest(size: PageRequest.maximumSize)
        while true {
            let live = try await store.bids(bidderID: request.bidderID, states: [.pending, .countered], page: page)
            for bid in live.items {
                let recorded: Recorded<Bid>
                do {
                    recorded = try await store.withdrawBid(id: bid.id, bidderID: request.bidderID, now: time.now())
                } catch let error as DomainError
                    where [.failedPrecondition, .aborted, .notFound].contains(error.code)
                {
                    continue  // accepted, rejected or superseded meanwhile: left as it is
                }
                await announce(recorded.events)
                if recorded.value.state == .withdrawn, !recorded.events.isEmpty { withdrawn.append(recorded.value) }
            }
            guard let token = live.nextPageToken else { break }
            page = try PageRequest(size: PageRequest.maximumSize, token: token)
        }
        return .with { $0.withdrawnBids = withdrawn.map(\.proto) }
    }

    /// The rejection reason of bids on a listing its seller withdrew.
    public static let withdrawnReason = "The seller withdrew the listing."
    /// The rejection reason of bids on a listing its seller marked sold outside the app.
    public static let soldElsewhereReason = "The seller marked the listing sold."
    /// The rejection reason of bids left on a listing found closed while accepting one of them.
    public static let closedReason = "The listing is no longer for sale."

    /// Rejects the live bids of a listing found closed (best effort: a failure is logged).
    func rejectBidsOfClosedListing(_ listingID: String) async {
        do {
            let recorded = try await store.closeListing(
                listingID: listingID,
                reason: Self.closedReason,
                now: time.now()
            )
            await announce(recorded.events)
        } catch {
            logger.warning(
                "Could not reject the bids of a closed listing",
                metadata: ["listing": "\(listingID)", "error": "\(LogText.bounded(error))"]
            )
        }
    }
}
