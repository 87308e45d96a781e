import Foundation
import SkiffBids
import SkiffDomain
import Testing

/// The one conformance suite for ``BidsStore``: every test runs against every backend (``StoreKind``)
/// with exact expected values. Split by topic: `+Acceptance`, `+Lists`, `+Concurrency`.
@Suite("BidsStore conformance")
struct BidsStoreConformanceTests {
    typealias F = BidsFixture

    @Test("Place a bid and read it back; the seller is notified", arguments: StoreKind.allCases)
    func placeAndRead(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let input = F.newBid("usr_ann", 1_200, requestID: "req-1")
            let recorded = try await store.placeBid(input, now: Fixture.t0.addingTimeInterval(0.000_4))
            let expected = Bid(
                id: input.id,
                listingID: F.listing,
                sellerID: F.seller,
                bidderID: "usr_ann",
                amountCents: 1_200,
                requestID: "req-1",
                createdAt: Fixture.t0
            )
            #expect(recorded.value == BidPlacement(bid: expected))
            #expect(
                recorded.events == [
                    BidEvent(
                        userID: F.seller,
                        sequence: 1,
                        kind: .placed,
                        bidID: input.id,
                        listingID: F.listing,
                        amountCents: 1_200,
                        createdAt: Fixture.t0
                    )
                ]
            )
            #expect(try await store.bid(id: input.id) == expected)
            #expect(try await store.bid(bidderID: "usr_ann", requestID: "req-1") == expected)
            #expect(try await store.bid(bidderID: "usr_bob", requestID: "req-1") == nil)
            #expect(try await store.bid(id: "bid_missing") == nil)
            #expect(try await store.events(userID: F.seller, afterSequence: 0, limit: 10) == recorded.events)
        }
    }

    @Test("Events of every user since a time, oldest first", arguments: StoreKind.allCases)
    func eventsSince(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let early = try await store.place("usr_ann", 1_000, at: 0)
            let later = try await store.place("usr_bob", 1_100, at: 10)
            let laterStill = try await store.place("usr_ann", 1_200, at: 20)
            let all = try await store.events(recordedSince: Fixture.t0, limit: 100)
            // The seller hears of the replaced bid, then of the new one, in one transaction.
            #expect(all.map(\.bidID) == [early.id, later.id, early.id, laterStill.id])
            #expect(all.map(\.kind) == [.placed, .placed, .withdrawn, .placed])
            let recent = try await store.events(recordedSince: Fixture.date(plusSeconds: 10), limit: 100)
            #expect(recent.map(\.bidID) == [later.id, early.id, laterStill.id])
            #expect(
                try await store.events(recordedSince: Fixture.date(plusSeconds: 10), limit: 1).map(\.bidID) == [
                    later.id
                ]
            )
            #expect(try await store.events(recordedSince: Fixture.date(plusSeconds: 21), limit: 100).isEmpty)
        }
    }

    @Test("Amount rules: asking price, above one's live bid, not one's own listing", arguments: StoreKind.allCases)
    func amountRules(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            await #expect(throws: BidsStoreError.amountTooLow(minimum: 1_000)) {
                _ = try await store.place("usr_ann", 999)
            }
            await #expect(throws: BidsStoreError.ownListing) {
                _ = try await store.place(F.seller, 5_000)
            }
            let first = try await store.place("usr_ann", 1_000)
            await #expect(throws: BidsStoreError.amountTooLow(minimum: 1_001)) {
                _ = try await store.place("usr_ann", 1_000, at: 1)
            }
            let recorded = try await store.placeBid(F.newBid("usr_ann", 1_500), now: Fixture.date(plusSeconds: 2))
            var replaced = first
            replaced.state = .withdrawn
            replaced.updatedAt = Fixture.date(plusSeconds: 2)
            #expect(recorded.value.replaced == replaced)
            #expect(try await store.bid(id: first.id) == replaced)
            #expect(recorded.events.map(\.kind) == [.withdrawn, .placed])
            #expect(recorded.events.map(\.sequence) == [2, 3])
            // Another bidder's bids do not raise the minimum.
            _ = try await store.place("usr_bob", 1_000, at: 3)
            #expect(
                try await store.liveBidSummary(listingID: F.listing)
                    == LiveBidSummary(count: 2, highestAmountCents: 1_500)
            )
        }
    }

    @Test(
        "A retry with the same request id returns the first bid; a different bid is refused",
        arguments: StoreKind.allCases
    )
    func requestIDs(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let first = try await store.placeBid(F.newBid("usr_ann", 1_200, requestID: "r"), now: Fixture.t0)
            let retry = try await store.placeBid(
                F.newBid("usr_ann", 1_200, requestID: "r"),
                now: Fixture.date(plusSeconds: 5)
            )
            #expect(retry.value == BidPlacement(bid: first.value.bid, isRetry: true))
            #expect(retry.events.isEmpty)
            await #expect(throws: BidsStoreError.requestIDReused) {
                _ = try await store.placeBid(F.newBid("usr_ann", 1_300, requestID: "r"), now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.requestIDReused) {
                _ = try await store.placeBid(
                    F.newBid("usr_ann", 1_200, listing: "lst_two", requestID: "r"),
                    now: Fixture.t0
                )
            }
            // Request ids are per bidder.
            _ = try await store.placeBid(F.newBid("usr_bob", 1_300, requestID: "r"), now: Fixture.t0)
            // Even after the listing sold, the retry answers with the first bid.
            _ = try await store.accept(first.value.bid)
            let late = try await store.placeBid(F.newBid("usr_ann", 1_200, requestID: "r"), now: Fixture.t0)
            #expect(late.value.bid.id == first.value.bid.id)
            #expect(late.value.bid.state == .accepted)
            #expect(try await store.eventKinds(F.seller) == [.placed, .placed])
        }
    }

    @Test("Withdraw: the bidder only, idempotent, not once final", arguments: StoreKind.allCases)
    func withdraw(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            await #expect(throws: BidsStoreError.notYourBid) {
                _ = try await store.withdrawBid(id: bid.id, bidderID: "usr_bob", now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.bidNotFound) {
                _ = try await store.withdrawBid(id: "bid_missing", bidderID: "usr_ann", now: Fixture.t0)
            }
            let withdrawn = try await store.withdrawBid(
                id: bid.id,
                bidderID: "usr_ann",
                now: Fixture.date(plusSeconds: 1)
            )
            #expect(withdrawn.value.state == .withdrawn)
            #expect(withdrawn.value.updatedAt == Fixture.date(plusSeconds: 1))
            #expect(withdrawn.events.map(\.kind) == [.withdrawn])
            let again = try await store.withdrawBid(id: bid.id, bidderID: "usr_ann", now: Fixture.date(plusSeconds: 2))
            #expect(again.value == withdrawn.value)
            #expect(again.events.isEmpty)

            let rejected = try await store.place("usr_bob", 1_200)
            _ = try await store.rejectBid(id: rejected.id, sellerID: F.seller, reason: "", now: Fixture.t0)
            await #expect(throws: BidsStoreError.wrongState(.rejected, "withdrawn")) {
                _ = try await store.withdrawBid(id: rejected.id, bidderID: "usr_bob", now: Fixture.t0)
            }
        }
    }

    @Test("Reject: the seller only, with a reason; the other party's end is ABORTED", arguments: StoreKind.allCases)
    func reject(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            await #expect(throws: BidsStoreError.notYourListing) {
                _ = try await store.rejectBid(id: bid.id, sellerID: "usr_ann", reason: "", now: Fixture.t0)
            }
            let rejected = try await store.rejectBid(id: bid.id, sellerID: F.seller, reason: "Too low", now: Fixture.t0)
            #expect(rejected.value.state == .rejected)
            #expect(rejected.value.rejectionReason == "Too low")
            #expect(rejected.events.map(\.userID) == ["usr_ann"])
            #expect(rejected.events.map(\.kind) == [.rejected])
            await #expect(throws: BidsStoreError.wrongState(.rejected, "rejected")) {
                _ = try await store.rejectBid(id: bid.id, sellerID: F.seller, reason: "", now: Fixture.t0)
            }
            let gone = try await store.place("usr_bob", 1_200)
            _ = try await store.withdrawBid(id: gone.id, bidderID: "usr_bob", now: Fixture.t0)
            await #expect(throws: BidsStoreError.endedMeanwhile(.withdrawn)) {
                _ = try await store.rejectBid(id: gone.id, sellerID: F.seller, reason: "", now: Fixture.t0)
            }
        }
    }

    @Test("Counter, revise, decline: the counter amount is kept", arguments: StoreKind.allCases)
    func counterOffers(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            await #expect(throws: BidsStoreError.counterTooLow(minimum: 1_201)) {
                _ = try await store.counterBid(id: bid.id, sellerID: F.seller, amountCents: 1_200, now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.notYourListing) {
                _ = try await store.counterBid(id: bid.id, sellerID: "usr_ann", amountCents: 1_500, now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.noCounterOffer) {
                _ = try await store.declineCounter(id: bid.id, bidderID: "usr_ann", now: Fixture.t0)
            }
            let countered = try await store.counterBid(
                id: bid.id,
                sellerID: F.seller,
                amountCents: 1_500,
                now: Fixture.t0
            )
            #expect(countered.value.state == .countered)
            #expect(countered.value.counterAmountCents == 1_500)
            #expect(countered.events.map(\.amountCents) == [1_500])
            #expect(countered.events.map(\.userID) == ["usr_ann"])
            let revised = try await store.counterBid(
                id: bid.id,
                sellerID: F.seller,
                amountCents: 1_400,
                now: Fixture.t0
            )
            #expect(revised.value.counterAmountCents == 1_400)
            await #expect(throws: BidsStoreError.notYourBid) {
                _ = try await store.declineCounter(id: bid.id, bidderID: "usr_bob", now: Fixture.t0)
            }
            let declined = try await store.declineCounter(
                id: bid.id,
                bidderID: "usr_ann",
                now: Fixture.date(plusSeconds: 1)
            )
            #expect(declined.value.state == .pending)
            #expect(declined.value.counterAmountCents == 1_400)
            #expect(declined.events.map(\.kind) == [.counterDeclined])
            #expect(try await store.eventKinds(F.seller) == [.placed, .counterDeclined])
            #expect(try await store.eventKinds("usr_ann") == [.countered, .countered])
        }
    }
}
