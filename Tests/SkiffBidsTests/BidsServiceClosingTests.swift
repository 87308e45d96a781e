import Foundation
import SkiffAPI
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffTesting
import SwiftProtobuf
import Testing

/// What happens to bids when their listing leaves the market outside the bid flow: the service-only
/// CloseListing and CountPendingBids, and an acceptance that finds its listing closed.
@Suite("Bids: closing listings")
struct BidsServiceClosingTests {
    @Test("CloseListing rejects the live bids and puts each bidder's rejection on their feed at once")
    func closeDeliversEvents() async throws {
        let harness = BidsTestHarness()
        let ann = try await harness.bid("ann", 2_500)
        let bob = try await harness.bid("bob", 2_600)
        #expect(
            try await harness.client.countPendingBids(
                .with { $0.listingID = "lst_jacket" },
                metadata: BidsTestHarness.serviceAuth
            ).count == 2
        )

        let closed = try await harness.client.closeListing(
            .with {
                $0.listingID = "lst_jacket"
                $0.closure = .withdrawn
            },
            metadata: BidsTestHarness.serviceAuth
        )
        #expect(Set(closed.rejectedBids.map(\.bidID)) == [ann.bidID, bob.bidID])
        #expect(closed.rejectedBids.allSatisfy { $0.state == .rejected })
        #expect(closed.rejectedBids.allSatisfy { $0.rejectionReason == BidsService.withdrawnReason })

        // Published to the feed before CloseListing answers, not left for the relay.
        #expect(harness.feed.bids(of: "usr_ann").map { [$0.kind, $0.bidID] } == [["rejected", ann.bidID]])
        #expect(harness.feed.bids(of: "usr_bob").map { [$0.kind, $0.bidID] } == [["rejected", bob.bidID]])
        #expect(
            try await harness.store.events(userID: "usr_ann", afterSequence: 0, limit: 10).map(\.kind) == [.rejected]
        )
        #expect(
            try await harness.client.countPendingBids(
                .with { $0.listingID = "lst_jacket" },
                metadata: BidsTestHarness.serviceAuth
            ).count == 0
        )
    }

    @Test("Users and guests cannot make the service-only calls")
    func serviceOnly() async throws {
        let harness = BidsTestHarness()
        let close = Skiff_Bids_V1_CloseListingRequest.with {
            $0.listingID = "lst_jacket"
            $0.closure = .sold
        }
        await expectStatus(.permissionDenied) {
            _ = try await harness.client.closeListing(close, metadata: BidsTestHarness.auth("seller"))
        }
        await expectStatus(.unauthenticated) { _ = try await harness.client.closeListing(close) }
        await expectStatus(.permissionDenied) {
            _ = try await harness.client.countPendingBids(
                .with { $0.listingID = "lst_jacket" },
                metadata: BidsTestHarness.auth("ann")
            )
        }
    }

    @Test("An acceptance that finds its listing closed fails and rejects the bids left live")
    func acceptOnClosedListing() async throws {
        let harness = BidsTestHarness()
        let ann = try await harness.bid("ann", 2_500)
        let bob = try await harness.bid("bob", 2_600)
        // The seller withdrew the listing in Listings while (as far as Bids knows) nobody told Bids.
        harness.listings.setStatus("lst_jacket", .withdrawn)
        await expectStatus(.failedPrecondition) { _ = try await harness.accept(ann.bidID) }
        for id in [ann.bidID, bob.bidID] {
            let bid = try #require(try await harness.store.bid(id: id))
            #expect(bid.state == .rejected)
            #expect(bid.rejectionReason == BidsService.closedReason)
        }
        #expect(harness.listings.buyers.isEmpty)
    }
}
