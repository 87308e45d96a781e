import Foundation
import SkiffBids
import SkiffDomain
import Testing

extension BidsStoreConformanceTests {
    @Test(
        "Accepting: bid ACCEPTED, sale created, other live bids SUPERSEDED and notified",
        arguments: StoreKind.allCases
    )
    func accept(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let ann = try await store.place("usr_ann", 1_200)
            let bob = try await store.place("usr_bob", 1_100, at: 1)
            let cat = try await store.place("usr_cat", 1_300, at: 2)
            _ = try await store.withdrawBid(id: cat.id, bidderID: "usr_cat", now: Fixture.date(plusSeconds: 3))
            let now = Fixture.date(plusSeconds: 10)
            let claim = try await store.claimAcceptance(bidID: ann.id, callerID: F.seller, kind: .bid, now: now)
            #expect(claim == AcceptanceClaim(bid: ann, kind: .bid, claimedAt: now))
            let draft = F.draft()
            let recorded = try await store.completeAcceptance(claim, sale: draft, now: now)

            var accepted = ann
            accepted.state = .accepted
            accepted.acceptedAmountCents = 1_200
            accepted.saleID = draft.id
            accepted.updatedAt = now
            var superseded = bob
            superseded.state = .superseded
            superseded.updatedAt = now
            let sale = Sale(
                id: draft.id,
                listingID: F.listing,
                listingTitle: "Rain jacket",
                category: .clothing,
                bidID: ann.id,
                buyerID: "usr_ann",
                sellerID: F.seller,
                amountCents: 1_200,
                conversationID: "cnv_1",
                createdAt: now
            )
            #expect(recorded.value == Acceptance(bid: accepted, sale: sale, superseded: [superseded]))
            #expect(recorded.events.map(\.kind) == [.accepted, .superseded])
            #expect(recorded.events.map(\.userID) == ["usr_ann", "usr_bob"])
            #expect(recorded.events[0].saleID == draft.id)
            #expect(try await store.bid(id: ann.id) == accepted)
            #expect(try await store.bid(id: bob.id) == superseded)
            #expect(try await store.bid(id: cat.id)?.state == .withdrawn)
            #expect(try await store.sale(id: draft.id) == sale)
            #expect(
                try await store.liveBidSummary(listingID: F.listing) == LiveBidSummary(count: 0, highestAmountCents: 0)
            )

            // The listing is sold: no new bid, no second acceptance, no changes to final bids.
            await #expect(throws: BidsStoreError.listingSold) { _ = try await store.place("usr_dan", 5_000) }
            await #expect(throws: BidsStoreError.endedMeanwhile(.superseded)) {
                _ = try await store.claimAcceptance(bidID: bob.id, callerID: F.seller, kind: .bid, now: now)
            }
            await #expect(throws: BidsStoreError.wrongState(.accepted, "accepted")) {
                _ = try await store.claimAcceptance(bidID: ann.id, callerID: F.seller, kind: .bid, now: now)
            }
            await #expect(throws: BidsStoreError.wrongState(.accepted, "withdrawn")) {
                _ = try await store.withdrawBid(id: ann.id, bidderID: "usr_ann", now: now)
            }
            await #expect(throws: BidsStoreError.wrongState(.superseded, "withdrawn")) {
                _ = try await store.withdrawBid(id: bob.id, bidderID: "usr_bob", now: now)
            }
            // Other listings are unaffected.
            _ = try await store.place("usr_dan", 5_000, listing: "lst_two")
        }
    }

    @Test("Claim checks: seller only, PENDING only, one claim per listing", arguments: StoreKind.allCases)
    func claims(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let ann = try await store.place("usr_ann", 1_200)
            let bob = try await store.place("usr_bob", 1_300)
            await #expect(throws: BidsStoreError.notYourListing) {
                _ = try await store.claimAcceptance(bidID: ann.id, callerID: "usr_ann", kind: .bid, now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.bidNotFound) {
                _ = try await store.claimAcceptance(
                    bidID: "bid_missing",
                    callerID: F.seller,
                    kind: .bid,
                    now: Fixture.t0
                )
            }
            _ = try await store.counterBid(id: bob.id, sellerID: F.seller, amountCents: 2_000, now: Fixture.t0)
            await #expect(throws: BidsStoreError.waitsForBidder) {
                _ = try await store.claimAcceptance(bidID: bob.id, callerID: F.seller, kind: .bid, now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.noCounterOffer) {
                _ = try await store.claimAcceptance(bidID: ann.id, callerID: "usr_ann", kind: .counter, now: Fixture.t0)
            }

            let claim = try await store.claimAcceptance(bidID: ann.id, callerID: F.seller, kind: .bid, now: Fixture.t0)
            // While claimed: the claimed bid cannot change, and no other acceptance may start.
            await #expect(throws: BidsStoreError.acceptanceInProgress) {
                _ = try await store.withdrawBid(id: ann.id, bidderID: "usr_ann", now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.acceptanceInProgress) {
                _ = try await store.place("usr_ann", 5_000)
            }
            await #expect(throws: BidsStoreError.acceptanceInProgress) {
                _ = try await store.rejectBid(id: ann.id, sellerID: F.seller, reason: "", now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.acceptanceInProgress) {
                _ = try await store.claimAcceptance(bidID: bob.id, callerID: "usr_bob", kind: .counter, now: Fixture.t0)
            }
            // Other bids may still change; a new bidder may still bid.
            _ = try await store.declineCounter(id: bob.id, bidderID: "usr_bob", now: Fixture.t0)
            _ = try await store.place("usr_cat", 1_000)

            // Released (e.g. the listing could not be marked sold): everything is open again.
            try await store.releaseAcceptance(claim)
            try await store.releaseAcceptance(claim)
            _ = try await store.counterBid(id: ann.id, sellerID: F.seller, amountCents: 1_500, now: Fixture.t0)
            let second = try await store.claimAcceptance(bidID: bob.id, callerID: F.seller, kind: .bid, now: Fixture.t0)
            // An old claim's release does not remove a newer claim.
            try await store.releaseAcceptance(claim)
            await #expect(throws: BidsStoreError.acceptanceInProgress) {
                _ = try await store.claimAcceptance(bidID: ann.id, callerID: "usr_ann", kind: .counter, now: Fixture.t0)
            }
            // A claim abandoned for longer than its lifetime no longer blocks.
            let later = Fixture.t0.addingTimeInterval(BidLifecycle.claimLifetime + 1)
            let third = try await store.claimAcceptance(bidID: ann.id, callerID: "usr_ann", kind: .counter, now: later)
            await #expect(throws: BidsStoreError.anotherBidAccepted) {
                _ = try await store.completeAcceptance(second, sale: F.draft(), now: later)
            }
            let done = try await store.completeAcceptance(third, sale: F.draft(), now: later)
            #expect(done.value.sale.amountCents == 1_500)
            #expect(done.value.bid.acceptedAmountCents == 1_500)
            #expect(done.events.map(\.kind) == [.counterAccepted, .superseded, .superseded])
            #expect(done.events.map(\.userID).first == F.seller)
        }
    }

    @Test("Hand-off: each party once; the second completes the sale exactly once", arguments: StoreKind.allCases)
    func handoff(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            let sale = try await store.accept(bid).value.sale
            await #expect(throws: BidsStoreError.notAParty) {
                _ = try await store.confirmHandoff(saleID: sale.id, userID: "usr_bob", place: nil, now: Fixture.t0)
            }
            await #expect(throws: BidsStoreError.saleNotFound) {
                _ = try await store.confirmHandoff(
                    saleID: "sale_missing",
                    userID: "usr_ann",
                    place: nil,
                    now: Fixture.t0
                )
            }
            let t1 = Fixture.date(plusSeconds: 60)
            let buyer = try await store.confirmHandoff(saleID: sale.id, userID: "usr_ann", place: nil, now: t1)
            #expect(buyer.value.completedNow == false)
            #expect(buyer.value.sale.buyerConfirmedAt == t1)
            #expect(buyer.value.sale.state == .pendingHandoff)
            #expect(buyer.events.map(\.kind) == [.handoffConfirmed])
            #expect(buyer.events.map(\.userID) == [F.seller])
            let twice = try await store.confirmHandoff(
                saleID: sale.id,
                userID: "usr_ann",
                place: nil,
                now: Fixture.date(plusSeconds: 90)
            )
            #expect(twice.value == HandoffConfirmation(sale: buyer.value.sale, completedNow: false))
            #expect(twice.events.isEmpty)

            let t2 = Fixture.date(plusSeconds: 120)
            let seller = try await store.confirmHandoff(saleID: sale.id, userID: F.seller, place: nil, now: t2)
            var completed = buyer.value.sale
            completed.sellerConfirmedAt = t2
            completed.completedAt = t2
            completed.state = .completed
            #expect(seller.value == HandoffConfirmation(sale: completed, completedNow: true))
            #expect(seller.events.map(\.kind) == [.handoffConfirmed, .completed, .completed])
            #expect(seller.events.map(\.userID) == ["usr_ann", "usr_ann", F.seller])
            #expect(try await store.sale(id: sale.id) == completed)
            let after = try await store.confirmHandoff(saleID: sale.id, userID: F.seller, place: nil, now: t2)
            #expect(after.value.completedNow == false)
            #expect(try await store.eventKinds(F.seller) == [.placed, .handoffConfirmed, .completed])
            #expect(
                try await store.events(userID: "usr_ann", afterSequence: 0, limit: 10).map(\.sequence) == [1, 2, 3]
            )
        }
    }

    @Test(
        "Hand-off place: the latest pick while pending is kept (the other party told), final once completed",
        arguments: StoreKind.allCases
    )
    func handoffPlace(kind: StoreKind) async throws {
        let steps = HandoffPlace(
            id: "steps",
            name: "Library steps",
            latitude: 32.88,
            longitude: -117.24,
            hours: "Daily"
        )
        let desk = HandoffPlace(id: "desk", name: "Police desk", latitude: -33.5, longitude: 151.25)
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            let sale = try await store.accept(bid).value.sale
            #expect(sale.handoffPlace == nil)
            let picked = try await store.confirmHandoff(
                saleID: sale.id,
                userID: "usr_ann",
                place: steps,
                now: Fixture.t0
            )
            #expect(picked.value.sale.handoffPlace == steps)
            #expect(picked.events.map(\.userID) == [F.seller])
            // The buyer, already confirmed, changes the place: the seller is told again.
            let changed = try await store.confirmHandoff(
                saleID: sale.id,
                userID: "usr_ann",
                place: desk,
                now: Fixture.t0
            )
            #expect(changed.value.sale.handoffPlace == desk)
            #expect(changed.events.map(\.kind) == [.handoffConfirmed])
            #expect(changed.events.map(\.userID) == [F.seller])
            // Picking the same place again changes nothing.
            let same = try await store.confirmHandoff(saleID: sale.id, userID: "usr_ann", place: desk, now: Fixture.t0)
            #expect(same.events.isEmpty)
            // The seller confirms without a place: the buyer's stands, and the sale completes with it.
            let done = try await store.confirmHandoff(saleID: sale.id, userID: F.seller, place: nil, now: Fixture.t0)
            #expect(done.value.completedNow)
            #expect(done.value.sale.handoffPlace == desk)
            #expect(try await store.sale(id: sale.id)?.handoffPlace == desk)
            await #expect(throws: BidsStoreError.handoffPlaceFinal) {
                _ = try await store.confirmHandoff(saleID: sale.id, userID: F.seller, place: steps, now: Fixture.t0)
            }
            let again = try await store.confirmHandoff(saleID: sale.id, userID: F.seller, place: desk, now: Fixture.t0)
            #expect(again.events.isEmpty && again.value.sale.handoffPlace == desk)
            #expect(try await store.sale(id: sale.id)?.handoffPlace == desk)
        }
    }

    @Test("A sale's conversation is set only while it has none", arguments: StoreKind.allCases)
    func conversation(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_200)
            let now = Fixture.t0
            let claim = try await store.claimAcceptance(bidID: bid.id, callerID: F.seller, kind: .bid, now: now)
            let sale = try await store.completeAcceptance(claim, sale: F.draft(conversation: ""), now: now).value.sale
            #expect(sale.conversationID == "")
            #expect(try await store.setConversation(saleID: sale.id, conversationID: "cnv_a").conversationID == "cnv_a")
            #expect(try await store.setConversation(saleID: sale.id, conversationID: "cnv_b").conversationID == "cnv_a")
            #expect(try await store.sale(id: sale.id)?.conversationID == "cnv_a")
            await #expect(throws: BidsStoreError.saleNotFound) {
                _ = try await store.setConversation(saleID: "sale_missing", conversationID: "x")
            }
        }
    }
}
