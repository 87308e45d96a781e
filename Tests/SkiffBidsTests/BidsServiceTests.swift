import Foundation
import SkiffAPI
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffTesting
import SwiftProtobuf
import Testing

/// The Bids service through its generated typed client, in process: bidding and the seller's answers.
@Suite("Bids service: bidding")
struct BidsServiceTests {
    typealias H = BidsTestHarness

    @Test("PlaceBid: a PENDING bid; the seller is notified at once")
    func placeBid() async throws {
        let h = H()
        let bid = try await h.bid("ann", 2_500)
        #expect(bid.state == .pending)
        #expect(bid.bidderID == "usr_ann")
        #expect(bid.listingID == "lst_jacket")
        #expect(bid.amountCents == 2_500)
        #expect(EntityID.isWellFormed(bid.bidID, prefix: .bid))
        #expect(bid.createdAt.date == h.time.now())
        let events = try await h.store.events(userID: "usr_seller", afterSequence: 0, limit: 10)
        #expect(events.map(\.kind) == [.placed])
        #expect(events.first?.bidID == bid.bidID)
        #expect(events.first?.sequence == 1)
        // On the seller's feed by the time PlaceBid answers.
        #expect(h.feed.notifications == events.map(\.feedNotification))
    }

    @Test("Events reach the feed; those a failing feed missed are published again by the relay, once")
    func feedRelay() async throws {
        let h = H()
        let first = try await h.bid("ann", 2_500)
        #expect(h.feed.notifications.map(\.idempotencyKey) == ["bids:1"])
        #expect(h.feed.notifications.first?.userID == "usr_seller")
        guard case .bid(let update) = h.feed.notifications.first?.kind else {
            Issue.record("expected a bid notification")
            return
        }
        #expect(update.kind == "placed" && update.bidID == first.bidID && update.amountCents == 2_500)

        // The feed is down: the bid still succeeds, and the event waits in the Bids store.
        h.feed.failing = true
        let second = try await h.bid("bob", 2_600)
        #expect(h.feed.notifications.count == 1)
        await #expect(throws: RPCError.self) { _ = try await h.service.republishEvents(since: h.time.now()) }
        h.feed.failing = false
        #expect(try await h.service.republishEvents(since: h.time.now().addingTimeInterval(-60)) == 2)
        #expect(h.feed.notifications.map(\.idempotencyKey) == ["bids:1", "bids:2"])
        guard case .bid(let relayed) = h.feed.notifications.last?.kind else {
            Issue.record("expected a bid notification")
            return
        }
        #expect(relayed.bidID == second.bidID)
        // Running the relay again delivers nothing twice.
        _ = try await h.service.republishEvents(since: h.time.now().addingTimeInterval(-60))
        #expect(h.feed.notifications.count == 2)
    }

    @Test("PlaceBid: a higher bid replaces the caller's live bid; request ids make retries safe")
    func placeBidReplacesAndRetries() async throws {
        let h = H()
        let first = try await h.bid("ann", 2_500, requestID: "r1")
        #expect(try await h.bid("ann", 2_500, requestID: "r1") == first)
        await expectStatus(.alreadyExists) { _ = try await h.bid("ann", 2_600, requestID: "r1") }
        await expectStatus(.invalidArgument, "amount_cents must be at least 2501.") {
            _ = try await h.bid("ann", 2_500)
        }
        h.time.advance(by: .seconds(1))
        let second = try await h.bid("ann", 3_000)
        #expect(second.state == .pending)
        let mine = try await h.client.listMyBids(.init(), metadata: H.auth("ann")).bids
        #expect(mine.map(\.bidID) == [second.bidID, first.bidID])
        #expect(mine.map(\.state) == [.pending, .withdrawn])
    }

    @Test("PlaceBid errors, with exact status codes")
    func placeBidErrors() async throws {
        let h = H()
        h.listings.put(H.listing("lst_nobids", bidding: false))
        h.listings.put(H.listing("lst_sold", status: .sold))
        await expectStatus(.unauthenticated) {
            _ = try await h.client.placeBid(
                .with {
                    $0.listingID = "lst_jacket"
                    $0.amountCents = 2_500
                }
            )
        }
        await expectStatus(.unauthenticated) {
            _ = try await h.client.placeBid(
                .with {
                    $0.listingID = "lst_jacket"
                    $0.amountCents = 2_500
                },
                metadata: ["authorization": "Bearer tok-unknown"]
            )
        }
        await expectStatus(.invalidArgument, "listing_id is empty.") { _ = try await h.bid("ann", 2_500, listing: "") }
        await expectStatus(.invalidArgument, "amount_cents must be at least 2500.") {
            _ = try await h.bid("ann", 2_499)
        }
        await expectStatus(.invalidArgument, "amount_cents must be at least 2500.") { _ = try await h.bid("ann", -5) }
        await expectStatus(.invalidArgument, "amount_cents must be at most 100000000.") {
            _ = try await h.bid("ann", 100_000_001)
        }
        await expectStatus(.invalidArgument) {
            _ = try await h.bid("ann", 2_500, requestID: String(repeating: "x", count: 129))
        }
        await expectStatus(.notFound) { _ = try await h.bid("ann", 2_500, listing: "lst_missing") }
        await expectStatus(.permissionDenied) { _ = try await h.bid("seller", 2_500) }
        await expectStatus(.failedPrecondition) { _ = try await h.bid("ann", 2_500, listing: "lst_nobids") }
        await expectStatus(.failedPrecondition) { _ = try await h.bid("ann", 2_500, listing: "lst_sold") }
    }

    @Test("WithdrawBid: the bidder's own bid, twice is fine; errors")
    func withdrawBid() async throws {
        let h = H()
        let bid = try await h.bid("ann", 2_500)
        await expectStatus(.permissionDenied) {
            _ = try await h.client.withdrawBid(.with { $0.bidID = bid.bidID }, metadata: H.auth("bob"))
        }
        let withdrawn = try await h.client.withdrawBid(.with { $0.bidID = bid.bidID }, metadata: H.auth("ann")).bid
        #expect(withdrawn.state == .withdrawn)
        #expect(
            try await h.client.withdrawBid(.with { $0.bidID = bid.bidID }, metadata: H.auth("ann")).bid == withdrawn
        )
        await expectStatus(.unauthenticated) { _ = try await h.client.withdrawBid(.with { $0.bidID = bid.bidID }) }
        await expectStatus(.invalidArgument) { _ = try await h.client.withdrawBid(.init(), metadata: H.auth("ann")) }
        await expectStatus(.notFound) {
            _ = try await h.client.withdrawBid(.with { $0.bidID = "bid_nope" }, metadata: H.auth("ann"))
        }
        let accepted = try await h.bid("bob", 2_600)
        _ = try await h.accept(accepted.bidID)
        await expectStatus(.failedPrecondition) {
            _ = try await h.client.withdrawBid(.with { $0.bidID = accepted.bidID }, metadata: H.auth("bob"))
        }
    }

    @Test("RejectBid: the seller, with an optional reason; errors")
    func rejectBid() async throws {
        let h = H()
        let bid = try await h.bid("ann", 2_500)
        await expectStatus(.invalidArgument, "reason must be at most 500 characters.") {
            _ = try await h.client.rejectBid(
                .with {
                    $0.bidID = bid.bidID
                    $0.reason = String(repeating: "é", count: 501)
                },
                metadata: H.auth("seller")
            )
        }
        await expectStatus(.permissionDenied) {
            _ = try await h.client.rejectBid(.with { $0.bidID = bid.bidID }, metadata: H.auth("ann"))
        }
        let rejected = try await h.client.rejectBid(
            .with {
                $0.bidID = bid.bidID
                $0.reason = "  Too low  "
            },
            metadata: H.auth("seller")
        ).bid
        #expect(rejected.state == .rejected)
        #expect(rejected.rejectionReason == "Too low")
        #expect(h.feed.bids(of: "usr_ann").map(\.kind) == ["rejected"])
        await expectStatus(.failedPrecondition) {
            _ = try await h.client.rejectBid(.with { $0.bidID = bid.bidID }, metadata: H.auth("seller"))
        }
        let withdrawn = try await h.bid("bob", 2_500)
        _ = try await h.client.withdrawBid(.with { $0.bidID = withdrawn.bidID }, metadata: H.auth("bob"))
        await expectStatus(.aborted) {
            _ = try await h.client.rejectBid(.with { $0.bidID = withdrawn.bidID }, metadata: H.auth("seller"))
        }
        await expectStatus(.notFound) {
            _ = try await h.client.rejectBid(.with { $0.bidID = "bid_nope" }, metadata: H.auth("seller"))
        }
        await expectStatus(.unauthenticated) { _ = try await h.client.rejectBid(.with { $0.bidID = bid.bidID }) }
    }

    @Test("CounterBid, DeclineCounter: back and forth; errors")
    func counterAndDecline() async throws {
        let h = H()
        let bid = try await h.bid("ann", 2_500)
        let counter = { (amount: Int64, user: String) in
            try await h.client.counterBid(
                .with {
                    $0.bidID = bid.bidID
                    $0.amountCents = amount
                },
                metadata: H.auth(user)
            )
        }
        await expectStatus(.invalidArgument) { _ = try await counter(2_500, "seller") }
        await expectStatus(.invalidArgument) { _ = try await counter(100_000_001, "seller") }
        await expectStatus(.permissionDenied) { _ = try await counter(3_000, "ann") }
        await expectStatus(.notFound) {
            _ = try await h.client.counterBid(
                .with {
                    $0.bidID = "bid_x"
                    $0.amountCents = 3_000
                },
                metadata: H.auth("seller")
            )
        }
        let countered = try await counter(3_000, "seller").bid
        #expect(countered.state == .countered)
        #expect(countered.counterAmountCents == 3_000)
        await expectStatus(.permissionDenied) {
            _ = try await h.client.declineCounter(.with { $0.bidID = bid.bidID }, metadata: H.auth("seller"))
        }
        let declined = try await h.client.declineCounter(.with { $0.bidID = bid.bidID }, metadata: H.auth("ann")).bid
        #expect(declined.state == .pending)
        #expect(declined.counterAmountCents == 3_000)
        await expectStatus(.failedPrecondition) {
            _ = try await h.client.declineCounter(.with { $0.bidID = bid.bidID }, metadata: H.auth("ann"))
        }
        // The listing withdrawn by its seller: no more counter-offers.
        h.listings.setStatus("lst_jacket", .withdrawn)
        await expectStatus(.failedPrecondition) { _ = try await counter(3_500, "seller") }
        await expectStatus(.unauthenticated) {
            _ = try await h.client.declineCounter(.with { $0.bidID = bid.bidID })
        }
    }
}
