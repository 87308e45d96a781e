import Foundation
import Logging
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension BidsService {
    // MARK: Acceptance

    public func acceptBid(
        request: Skiff_Bids_V1_AcceptBidRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_AcceptBidResponse {
        try BidsRequestBounds.check(request)
        let acceptance = try await accept(bidID: request.bidID, kind: .bid, context: context)
        let sale = try await render(acceptance.sale)
        return .with {
            $0.bid = acceptance.bid.proto
            $0.sale = sale
            $0.conversationID = acceptance.sale.conversationID
        }
    }

    public func acceptCounter(
        request: Skiff_Bids_V1_AcceptCounterRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_AcceptCounterResponse {
        try BidsRequestBounds.check(request)
        let acceptance = try await accept(bidID: request.bidID, kind: .counter, context: context)
        let sale = try await render(acceptance.sale)
        return .with {
            $0.bid = acceptance.bid.proto
            $0.sale = sale
            $0.conversationID = acceptance.sale.conversationID
        }
    }

    /// Accepts a bid in three steps, so that concurrent acceptances and bid changes are settled by the
    /// store and no listing is ever sold twice:
    ///
    /// 1. The store claims the listing's acceptance for the bid (ABORTED if another is under way or
    ///    done; the bid's state is checked here too).
    /// 2. Listings marks the listing sold (exactly one caller can); if that fails the claim is released
    ///    and the call fails with FAILED_PRECONDITION.
    /// 3. The conversation is opened (a failure is logged and retried on the next GetSale), and the
    ///    store completes the acceptance: bid ACCEPTED, the other live bids SUPERSEDED, the sale created.
    func accept(bidID: String, kind: AcceptanceKind, context: ServerContext) async throws -> Acceptance {
        let user = try context.requireUser()
        let claim = try await store.claimAcceptance(
            bidID: try Self.requireBidID(bidID),
            callerID: user.id,
            kind: kind,
            now: time.now()
        )
        let bid = claim.bid
        let listing: ListingSnapshot
        do {
            guard let found = try await listings.listing(id: bid.listingID), found.status == .active else {
                throw BidsStoreError.listingSold
            }
            listing = found
            do {
                try await listings.markSold(listingID: bid.listingID, buyerID: bid.bidderID)
            } catch  where Self.isLostRace(error) {
                throw BidsStoreError.listingSold
            }
        } catch {
            try? await store.releaseAcceptance(claim)
            if let error = error as? DomainError, error == BidsStoreError.listingSold {
                // The seller closed the listing meanwhile; Listings' CloseListing left this bid to its
                // acceptance, so settle it (and any other live bid) now.
                await rejectBidsOfClosedListing(bid.listingID)
            }
            throw error
        }
        // The listing is sold: from here on the sale must be recorded.
        let conversationID = await openConversation(
            buyerID: bid.bidderID,
            sellerID: bid.sellerID,
            listingID: bid.listingID
        )
        do {
            let recorded = try await store.completeAcceptance(
                claim,
                sale: SaleDraft(
                    id: EntityID.make(.sale),
                    listingTitle: listing.title,
                    category: listing.category,
                    conversationID: conversationID ?? ""
                ),
                now: time.now()
            )
            await announce(recorded.events)
            return recorded.value
        } catch {
            logger.error(
                "A listing was marked sold but its sale could not be recorded",
                metadata: ["listing": "\(bid.listingID)", "bid": "\(bid.id)", "error": "\(LogText.bounded(error))"]
            )
            throw error
        }
    }

    /// Whether a `markSold` failure means the listing was not active (a lost race), not a fault.
    static func isLostRace(_ error: any Error) -> Bool {
        let code: StatusCode? =
            if let error = error as? DomainError { error.code.statusCode } else { (error as? RPCError)?.code }
        return code == .failedPrecondition || code == .notFound || code == .aborted
    }

    private func openConversation(buyerID: String, sellerID: String, listingID: String) async -> String? {
        do {
            return try await conversations.openConversation(buyerID: buyerID, sellerID: sellerID, listingID: listingID)
        } catch {
            logger.warning(
                "Could not open the buyer-seller conversation; it will be retried",
                metadata: ["listing": "\(listingID)", "error": "\(LogText.bounded(error))"]
            )
            return nil
        }
    }

    // MARK: Sales

    public func confirmHandoff(
        request: Skiff_Bids_V1_ConfirmHandoffRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ConfirmHandoffResponse {
        try BidsRequestBounds.check(request)
        let user = try context.requireUser()
        let saleID = try Self.requireSaleID(request.saleID)
        var place: HandoffPlace?
        if !request.handoffPlaceID.isEmpty {
            try handoffPlaceLimiter.acquire(userID: user.id, now: time.now())
            if let picked = handoffPlacesByID[request.handoffPlaceID] {
                place = picked
            } else {
                // A place the operator has since removed is still the sale's own: naming it keeps it.
                guard let sale = try await store.sale(id: saleID), sale.isParty(user.id) else {
                    throw BidsStoreError.unknownHandoffPlace
                }
                guard sale.handoffPlace?.id == request.handoffPlaceID else { throw BidsStoreError.unknownHandoffPlace }
            }
        }
        let recorded = try await store.confirmHandoff(saleID: saleID, userID: user.id, place: place, now: time.now())
        await announce(recorded.events)
        var sale = recorded.value.sale
        if recorded.value.completedNow {
            do {
                try await onSaleCompleted(sale)
            } catch {
                logger.error(
                    "The sale-completed hook failed",
                    metadata: ["sale": "\(sale.id)", "error": "\(LogText.bounded(error))"]
                )
            }
        }
        sale = try await repairingConversation(sale)
        let rendered = try await render(sale)
        return .with { $0.sale = rendered }
    }

    public func listHandoffPlaces(
        request: Skiff_Bids_V1_ListHandoffPlacesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_ListHandoffPlacesResponse {
        .with { $0.places = handoffPlaces.map(\.proto) }
    }

    public func getSale(
        request: Skiff_Bids_V1_GetSaleRequest,
        context: ServerContext
    ) async throws -> Skiff_Bids_V1_GetSaleResponse {
        try BidsRequestBounds.check(request)
        // Other Skiff services (Accounts, before accepting a rating) may read any sale.
        let user = try context.user ?? context.requireUser()
        let saleID = try Self.requireSaleID(request.saleID)
        guard let sale = try await store.sale(id: saleID) else { throw BidsStoreError.saleNotFound }
        guard user.isService || sale.isParty(user.id) else { throw BidsStoreError.notAParty }
        let rendered = try await render(try await repairingConversation(sale))
        return .with { $0.sale = rendered }
    }

    /// Opens the conversation of a sale whose opening failed at acceptance, if it can now.
    private func repairingConversation(_ sale: Sale) async throws -> Sale {
        guard sale.conversationID.isEmpty,
            let id = await openConversation(buyerID: sale.buyerID, sellerID: sale.sellerID, listingID: sale.listingID)
        else { return sale }
        return try await store.setConversation(saleID: sale.id, conversationID: id)
    }

    /// The wire sale, with the seller's payment handle.
    func render(_ sale: Sale) async throws -> Skiff_Bids_V1_Sale {
        let handle = try await paymentHandles.paymentHandle(userID: sale.sellerID)
        return sale.proto(paymentHandle: handle, ratingWindow: Self.ratingWindow)
    }

    /// Wire sales, looking each seller's payment handle up once.
    func render(_ sales: [Sale]) async throws -> [Skiff_Bids_V1_Sale] {
        var handles: [String: String?] = [:]
        var rendered: [Skiff_Bids_V1_Sale] = []
        for sale in sales {
            if handles[sale.sellerID] == nil {
                handles[sale.sellerID] = .some(try await paymentHandles.paymentHandle(userID: sale.sellerID))
            }
            rendered.append(sale.proto(paymentHandle: handles[sale.sellerID] ?? nil, ratingWindow: Self.ratingWindow))
        }
        return rendered
    }

    static func requireSaleID(_ id: String) throws(DomainError) -> String {
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "sale_id is empty.") }
        return id
    }
}
