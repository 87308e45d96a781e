import Foundation
import SkiffBids
import SkiffDomain
import Testing

extension BidsStoreConformanceTests {
    @Test(
        "Closing a listing rejects its live bids with the reason and notifies each bidder",
        arguments: StoreKind.allCases
    )
    func closeListing(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let ann = try await store.place("usr_ann", 1_200)
            let bob = try await store.place("usr_bob", 1_100, at: 1)
            let cat = try await store.place("usr_cat", 1_300, at: 2)
            let other = try await store.place("usr_dan", 1_000, listing: "lst_other", at: 3)
            _ = try await store.counterBid(
                id: bob.id,
                sellerID: F.seller,
                amountCents: 1_500,
                now: Fixture.date(plusSeconds: 4)
            )
            _ = try await store.withdrawBid(id: cat.id, bidderID: "usr_cat", now: Fixture.date(plusSeconds: 5))

            let now = Fixture.date(plusSeconds: 10)
            let recorded = try await store.closeListing(listingID: F.listing, reason: "Withdrawn.", now: now)
            var annRejected = ann
            annRejected.state = .rejected
            annRejected.rejectionReason = "Withdrawn."
            annRejected.updatedAt = now
            let bobRejected = try #require(try await store.bid(id: bob.id))
            #expect(bobRejected.state == .rejected)
            #expect(bobRejected.rejectionReason == "Withdrawn.")
            #expect(bobRejected.counterAmountCents == 1_500)
            #expect(bobRejected.updatedAt == now)
            let expected = [annRejected, bobRejected].sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            #expect(recorded.value == expected)
            #expect(try await store.bid(id: ann.id) == annRejected)
            #expect(recorded.events.map(\.kind) == [.rejected, .rejected])
            #expect(Set(recorded.events.map(\.userID)) == ["usr_ann", "usr_bob"])
            #expect(recorded.events.allSatisfy { $0.listingID == F.listing && $0.createdAt == now })
            #expect(try await store.eventKinds("usr_ann") == [.rejected])
            #expect(try await store.eventKinds("usr_bob") == [.countered, .rejected])
            // Final bids and other listings are untouched.
            #expect(try await store.bid(id: cat.id)?.state == .withdrawn)
            #expect(try await store.bid(id: other.id) == other)
            #expect(
                try await store.liveBidSummary(listingID: F.listing) == LiveBidSummary(count: 0, highestAmountCents: 0)
            )

            // Closing again rejects nothing and records nothing.
            let again = try await store.closeListing(listingID: F.listing, reason: "Withdrawn.", now: now)
            #expect(again.value.isEmpty)
            #expect(again.events.isEmpty)
            #expect(try await store.eventKinds("usr_ann") == [.rejected])
            // The listing stays closed: a bid that raced the close is refused; other listings take bids.
            await #expect(throws: BidsStoreError.listingSold) {
                _ = try await store.place("usr_eve", 5_000, at: 11)
            }
            _ = try await store.place("usr_eve", 5_000, listing: "lst_other", at: 11)
            // A listing with no bids closes without error.
            #expect(try await store.closeListing(listingID: "lst_none", reason: "x", now: now).value.isEmpty)
        }
    }

    @Test(
        "Closing during an acceptance leaves the claimed bid to it: it is ACCEPTED, the others REJECTED",
        arguments: StoreKind.allCases
    )
    func closeDuringAcceptance(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let ann = try await store.place("usr_ann", 1_200)
            let bob = try await store.place("usr_bob", 1_100, at: 1)
            let now = Fixture.date(plusSeconds: 10)
            let claim = try await store.claimAcceptance(bidID: ann.id, callerID: F.seller, kind: .bid, now: now)

            let closed = try await store.closeListing(listingID: F.listing, reason: "Sold.", now: now)
            #expect(closed.value.map(\.id) == [bob.id])
            #expect(try await store.bid(id: ann.id) == ann)

            let accepted = try await store.completeAcceptance(claim, sale: F.draft(), now: now)
            #expect(accepted.value.bid.state == .accepted)
            #expect(accepted.value.superseded.isEmpty)
            #expect(try await store.bid(id: bob.id)?.state == .rejected)

            // After the sale, closing changes nothing: the accepted bid stays accepted.
            let after = try await store.closeListing(listingID: F.listing, reason: "Sold.", now: now)
            #expect(after.value.isEmpty)
            #expect(try await store.bid(id: ann.id)?.state == .accepted)
        }
    }

    @Test("Closing after an expired claim rejects the claimed bid too", arguments: StoreKind.allCases)
    func closeAfterExpiredClaim(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let ann = try await store.place("usr_ann", 1_200)
            let claimedAt = Fixture.date(plusSeconds: 10)
            _ = try await store.claimAcceptance(bidID: ann.id, callerID: F.seller, kind: .bid, now: claimedAt)
            let later = claimedAt.addingTimeInterval(BidLifecycle.claimLifetime + 1)
            let closed = try await store.closeListing(listingID: F.listing, reason: "Withdrawn.", now: later)
            #expect(closed.value.map(\.id) == [ann.id])
        }
    }
}
