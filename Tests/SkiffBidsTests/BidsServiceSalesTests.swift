import Foundation
import SkiffAPI
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffTesting
import SwiftProtobuf
import Testing

/// The Bids service in process: acceptance, hand-off, sales and lists.
@Suite("Bids service: sales")
struct BidsServiceSalesTests {
    typealias H = BidsTestHarness

    @Test("AcceptBid: listing sold, others superseded, sale with impact, conversation opened")
    func acceptBid() async throws {
        let h = H()
        let ann = try await h.bid("ann", 2_500)
        let bob = try await h.bid("bob", 2_700)
        let response = try await h.accept(ann.bidID)
        #expect(response.bid.state == .accepted)
        #expect(response.bid.acceptedAmountCents == 2_500)
        #expect(response.bid.saleID == response.sale.saleID)
        #expect(response.conversationID == "cnv_1")
        #expect(h.conversations.opened == ["usr_ann|usr_seller|lst_jacket"])
        #expect(h.listings.buyers == ["lst_jacket": "usr_ann"])
        let sale = response.sale
        #expect(sale.state == .pendingHandoff)
        #expect(sale.buyerID == "usr_ann")
        #expect(sale.sellerID == "usr_seller")
        #expect(sale.listingTitle == "Rain jacket")
        #expect(sale.amountCents == 2_500)
        #expect(sale.conversationID == "cnv_1")
        #expect(sale.sellerPaymentHandle == "@seller-pays")
        #expect(!sale.hasReceipt && !sale.hasRateBy && !sale.hasBuyerConfirmedAt)
        #expect(sale.sustainabilityImpact.category == .clothing)
        #expect(sale.sustainabilityImpact.co2EGramsSaved == 20_000)
        #expect(sale.sustainabilityImpact.waterLitersSaved == 2_700)
        #expect(
            sale.sustainabilityImpact.explanation
                == "Buying “Rain jacket” second-hand saves about 20 kg of CO2e and 2,700 litres of water."
        )
        #expect(h.feed.bids(of: "usr_bob").map(\.kind) == ["superseded"])
        let bobBids = try await h.client.listMyBids(.init(), metadata: H.auth("bob")).bids
        #expect(bobBids.map(\.bidID) == [bob.bidID])
        #expect(bobBids.map(\.state) == [.superseded])
        // The listing is sold: further bids fail.
        await expectStatus(.failedPrecondition) { _ = try await h.bid("cat", 9_000) }
    }

    @Test("AcceptBid errors, with exact status codes")
    func acceptBidErrors() async throws {
        let h = H()
        let ann = try await h.bid("ann", 2_500)
        await expectStatus(.unauthenticated) { _ = try await h.client.acceptBid(.with { $0.bidID = ann.bidID }) }
        await expectStatus(.invalidArgument) { _ = try await h.client.acceptBid(.init(), metadata: H.auth("seller")) }
        await expectStatus(.notFound) { _ = try await h.accept("bid_nope") }
        await expectStatus(.permissionDenied) {
            _ = try await h.client.acceptBid(.with { $0.bidID = ann.bidID }, metadata: H.auth("ann"))
        }
        _ = try await h.client.counterBid(
            .with {
                $0.bidID = ann.bidID
                $0.amountCents = 3_000
            },
            metadata: H.auth("seller")
        )
        await expectStatus(.failedPrecondition) { _ = try await h.accept(ann.bidID) }
        let bob = try await h.bid("bob", 2_600)
        // The seller withdrew the listing in Listings: markSold fails, the claim is released, and the bids
        // left live on the closed listing are rejected (a held claim would have kept Bob's bid PENDING).
        h.listings.setStatus("lst_jacket", .withdrawn)
        await expectStatus(.failedPrecondition, "The listing is no longer for sale.") {
            _ = try await h.accept(bob.bidID)
        }
        for id in [ann.bidID, bob.bidID] {
            let settled = try await h.store.bid(id: id)
            #expect(settled?.state == .rejected)
            #expect(settled?.rejectionReason == BidsService.closedReason)
        }
        await expectStatus(.failedPrecondition, "The bid is rejected, so it cannot be accepted.") {
            _ = try await h.accept(bob.bidID)
        }
        #expect(h.conversations.opened.isEmpty)
    }

    @Test("AcceptCounter: ACCEPTED at the counter amount; errors")
    func acceptCounter() async throws {
        let h = H()
        let ann = try await h.bid("ann", 2_500)
        let accept = { (user: String) in
            try await h.client.acceptCounter(.with { $0.bidID = ann.bidID }, metadata: H.auth(user))
        }
        await expectStatus(.failedPrecondition) { _ = try await accept("ann") }
        _ = try await h.client.counterBid(
            .with {
                $0.bidID = ann.bidID
                $0.amountCents = 3_000
            },
            metadata: H.auth("seller")
        )
        await expectStatus(.permissionDenied) { _ = try await accept("seller") }
        await expectStatus(.unauthenticated) { _ = try await h.client.acceptCounter(.with { $0.bidID = ann.bidID }) }
        let response = try await accept("ann")
        #expect(response.bid.state == .accepted)
        #expect(response.bid.acceptedAmountCents == 3_000)
        #expect(response.sale.amountCents == 3_000)
        #expect(response.conversationID == response.sale.conversationID)
        #expect(h.feed.bids(of: "usr_seller").last?.kind == "counter_accepted")
        await expectStatus(.failedPrecondition) { _ = try await accept("ann") }
    }

    @Test("ConfirmHandoff by both parties completes the sale with a receipt, once")
    func confirmHandoff() async throws {
        let h = H()
        let sale = try await h.accept(try await h.bid("ann", 2_500).bidID).sale
        let confirm = { (user: String) in
            try await h.client.confirmHandoff(.with { $0.saleID = sale.saleID }, metadata: H.auth(user)).sale
        }
        await expectStatus(.permissionDenied) { _ = try await confirm("bob") }
        await expectStatus(.notFound) {
            _ = try await h.client.confirmHandoff(.with { $0.saleID = "sale_x" }, metadata: H.auth("ann"))
        }
        await expectStatus(.invalidArgument) { _ = try await h.client.confirmHandoff(.init(), metadata: H.auth("ann")) }
        await expectStatus(.unauthenticated) {
            _ = try await h.client.confirmHandoff(.with { $0.saleID = sale.saleID })
        }
        let afterBuyer = try await confirm("ann")
        #expect(afterBuyer.state == .pendingHandoff)
        #expect(afterBuyer.buyerConfirmedAt.date == h.time.now())
        #expect(h.completed.all.isEmpty)
        h.time.advance(by: .seconds(3600))
        let done = try await confirm("seller")
        #expect(done.state == .completed)
        #expect(done.receipt.saleID == sale.saleID)
        #expect(done.receipt.amountCents == 2_500)
        #expect(done.receipt.listingTitle == "Rain jacket")
        #expect(done.receipt.completedAt.date == h.time.now())
        #expect(done.rateBy.date == h.time.now().addingTimeInterval(14 * 24 * 3600))
        #expect(try await confirm("seller") == done)
        #expect(try await confirm("ann") == done)
        #expect(h.completed.all == [sale.saleID])
        // Accounts sees the completed sale through GetSale with the service token.
        let seen = try await h.client.getSale(.with { $0.saleID = sale.saleID }, metadata: H.serviceAuth).sale
        #expect(seen.buyerID == "usr_ann" && seen.sellerID == "usr_seller")
        #expect(seen.receipt.completedAt.date == h.time.now())
        await expectStatus(.notFound) {
            _ = try await h.client.getSale(.with { $0.saleID = "sale_x" }, metadata: H.serviceAuth)
        }
    }

    @Test("GetSale: parties only; a conversation that failed to open is opened later")
    func getSale() async throws {
        let h = H()
        h.conversations.setFailing(true)
        let accepted = try await h.accept(try await h.bid("ann", 2_500).bidID)
        #expect(accepted.conversationID == "")
        let get = { (user: String) in
            try await h.client.getSale(.with { $0.saleID = accepted.sale.saleID }, metadata: H.auth(user)).sale
        }
        #expect(try await get("ann").conversationID == "")
        h.conversations.setFailing(false)
        #expect(try await get("seller").conversationID == "cnv_1")
        #expect(try await get("ann").conversationID == "cnv_1")
        await expectStatus(.permissionDenied) { _ = try await get("bob") }
        await expectStatus(.notFound) {
            _ = try await h.client.getSale(.with { $0.saleID = "sale_x" }, metadata: H.auth("ann"))
        }
        await expectStatus(.invalidArgument) { _ = try await h.client.getSale(.init(), metadata: H.auth("ann")) }
        await expectStatus(.unauthenticated) { _ = try await h.client.getSale(.with { $0.saleID = "sale_x" }) }
    }

    @Test("ListBidsForListing: the seller sees bids, everyone else count and highest")
    func listBidsForListing() async throws {
        let h = H()
        let ann = try await h.bid("ann", 2_500)
        let bob = try await h.bid("bob", 3_000)
        let cat = try await h.bid("cat", 2_800)
        _ = try await h.client.withdrawBid(.with { $0.bidID = bob.bidID }, metadata: H.auth("bob"))
        let request = { (size: Int32, token: String) in
            Skiff_Bids_V1_ListBidsForListingRequest.with {
                $0.listingID = "lst_jacket"
                $0.pageSize = size
                $0.pageToken = token
            }
        }
        let first = try await h.client.listBidsForListing(request(2, ""), metadata: H.auth("seller"))
        #expect(first.bids.map(\.bidID) == [bob.bidID, cat.bidID])
        #expect(first.bidCount == 2)
        #expect(first.highestAmountCents == 2_800)
        let second = try await h.client.listBidsForListing(request(2, first.nextPageToken), metadata: H.auth("seller"))
        #expect(second.bids.map(\.bidID) == [ann.bidID])
        #expect(second.nextPageToken == "")
        for metadata: Metadata in [[:], H.auth("ann")] {
            let other = try await h.client.listBidsForListing(request(0, ""), metadata: metadata)
            #expect(other.bids.isEmpty && other.nextPageToken == "")
            #expect(other.bidCount == 2 && other.highestAmountCents == 2_800)
        }
        await expectStatus(.invalidArgument) { _ = try await h.client.listBidsForListing(.init()) }
        await expectStatus(.invalidArgument) { _ = try await h.client.listBidsForListing(request(-1, "")) }
        await expectStatus(.invalidArgument) {
            _ = try await h.client.listBidsForListing(request(2, "garbage"), metadata: H.auth("seller"))
        }
        await expectStatus(.notFound) {
            _ = try await h.client.listBidsForListing(.with { $0.listingID = "lst_missing" })
        }
        h.listings.setStatus("lst_jacket", .withdrawn)
        await expectStatus(.notFound) {
            _ = try await h.client.listBidsForListing(request(0, ""), metadata: H.auth("ann"))
        }
        #expect(try await h.client.listBidsForListing(request(0, ""), metadata: H.auth("seller")).bids.count == 3)
    }

    @Test("ListMyBids, ListMyPurchases, ListMySales: newest first, paged; errors")
    func myLists() async throws {
        let h = H()
        var saleIDs: [String] = []
        for index in 0..<3 {
            h.listings.put(H.listing("lst_\(index)", price: 1_000))
            h.time.advance(by: .seconds(1))
            let bid = try await h.bid("ann", 1_000, listing: "lst_\(index)")
            saleIDs.append(try await h.accept(bid.bidID).sale.saleID)
        }
        h.time.advance(by: .seconds(1))
        let pending = try await h.bid("ann", 2_500)
        let bids = try await h.client.listMyBids(
            .with {
                $0.states = [.accepted]
                $0.pageSize = 2
            },
            metadata: H.auth("ann")
        )
        #expect(bids.bids.count == 2 && bids.bids.allSatisfy { $0.state == .accepted })
        let rest = try await h.client.listMyBids(
            .with {
                $0.states = [.accepted]
                $0.pageSize = 2
                $0.pageToken = bids.nextPageToken
            },
            metadata: H.auth("ann")
        )
        #expect(rest.bids.count == 1 && rest.nextPageToken == "")
        #expect(
            try await h.client.listMyBids(.with { $0.states = [.pending] }, metadata: H.auth("ann")).bids.map(\.bidID)
                == [pending.bidID]
        )
        await expectStatus(.invalidArgument) {
            _ = try await h.client.listMyBids(.with { $0.states = [.unspecified] }, metadata: H.auth("ann"))
        }
        await expectStatus(.invalidArgument) {
            _ = try await h.client.listMyBids(.with { $0.pageToken = bids.nextPageToken }, metadata: H.auth("ann"))
        }
        await expectStatus(.unauthenticated) { _ = try await h.client.listMyBids(.init()) }

        let purchases = try await h.client.listMyPurchases(.init(), metadata: H.auth("ann"))
        #expect(purchases.sales.map(\.saleID) == saleIDs.reversed())
        #expect(purchases.sales.allSatisfy { $0.sellerPaymentHandle == "@seller-pays" })
        let sales = try await h.client.listMySales(.with { $0.pageSize = 1 }, metadata: H.auth("seller"))
        #expect(sales.sales.map(\.saleID) == [saleIDs[2]])
        let more = try await h.client.listMySales(
            .with {
                $0.pageToken = sales.nextPageToken
                $0.pageSize = 5
            },
            metadata: H.auth("seller")
        )
        #expect(more.sales.map(\.saleID) == [saleIDs[1], saleIDs[0]])
        #expect(try await h.client.listMySales(.init(), metadata: H.auth("ann")).sales.isEmpty)
        await expectStatus(.invalidArgument) {
            _ = try await h.client.listMyPurchases(
                .with { $0.pageToken = sales.nextPageToken },
                metadata: H.auth("ann")
            )
        }
        await expectStatus(.invalidArgument) {
            _ = try await h.client.listMySales(.with { $0.pageSize = -1 }, metadata: H.auth("seller"))
        }
        await expectStatus(.unauthenticated) { _ = try await h.client.listMyPurchases(.init()) }
        await expectStatus(.unauthenticated) { _ = try await h.client.listMySales(.init()) }
    }

    @Test("50 concurrent AcceptBid calls on one listing: exactly one wins, markSold once")
    func concurrentAccepts() async throws {
        let h = H()
        var bidIDs: [String] = []
        // 50 bidders would need 50 sessions: their bids go straight into the store.
        for index in 0..<50 {
            let placed = try await h.store.placeBid(
                NewBid(
                    id: EntityID.make(.bid),
                    listingID: "lst_jacket",
                    sellerID: "usr_seller",
                    bidderID: "usr_bidder\(index)",
                    amountCents: 2_500 + Int64(index),
                    askingPriceCents: 2_500
                ),
                now: h.time.now()
            )
            bidIDs.append(placed.value.bid.id)
        }
        let ids = bidIDs
        let codes = await withTaskGroup(of: StatusCode.self) { group in
            for id in ids {
                group.addTask {
                    do {
                        _ = try await h.accept(id)
                        return .ok
                    } catch let error as RPCError {
                        return error.code
                    } catch {
                        return .unknown
                    }
                }
            }
            return await group.reduce(into: [StatusCode]()) { $0.append($1) }
        }
        #expect(codes.filter { $0 == .ok }.count == 1)
        #expect(codes.allSatisfy { $0 == .ok || $0 == .aborted || $0 == .failedPrecondition })
        #expect(h.listings.buyers.count == 1)
        #expect(h.conversations.opened.count == 1)
        #expect(try await h.client.listMySales(.init(), metadata: H.auth("seller")).sales.count == 1)
    }
}
