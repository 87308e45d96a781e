import Foundation
import SkiffAPI
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffTesting
import Testing

@Suite("Bids: rate limits")
struct BidsRateLimitTests {
    @Test("PlaceBid is limited per user: RESOURCE_EXHAUSTED with retry-after, until the window moves on")
    func placeBidLimit() async throws {
        var configuration = BidsConfiguration.defaults
        configuration.placeBidLimit = RateLimit(2, per: .seconds(600))
        let harness = BidsTestHarness(configuration: configuration)
        _ = try await harness.bid("ann", 2_500)
        harness.time.advance(by: .seconds(60))
        _ = try await harness.bid("ann", 2_600)
        harness.time.advance(by: .seconds(60))
        do {
            _ = try await harness.bid("ann", 2_700)
            Issue.record("the third bid within 10 minutes was accepted")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.message == "Too many bids placed (at most 2 per 10 minutes); try again in 480 s.")
            #expect(error.metadata.first("retry-after") == "480")
        }
        // A retry of a placed bid is answered, not counted.
        let placed = try await harness.bid("bob", 2_700, requestID: "req-bob")
        #expect(try await harness.bid("bob", 2_700, requestID: "req-bob") == placed)
        #expect(try await harness.bid("bob", 2_700, requestID: "req-bob") == placed)
        // Bob has his own budget; nothing was recorded for Ann's refused bid.
        _ = try await harness.bid("bob", 2_800)
        #expect(
            try await harness.store.bids(bidderID: "usr_ann", states: [], page: PageRequest(size: 10, token: nil)).items
                .count == 2
        )
        harness.time.advance(by: .seconds(480))
        _ = try await harness.bid("ann", 2_900)
    }

    @Test("The defaults allow a bidding war: 60 bids in 10 minutes")
    func defaults() {
        #expect(BidsConfiguration.defaults.placeBidLimit == RateLimit(60, per: .seconds(600)))
        var off = BidsConfiguration.defaults
        off.scaleRateLimits(by: 0)
        #expect(off.placeBidLimit == nil)
    }
}
