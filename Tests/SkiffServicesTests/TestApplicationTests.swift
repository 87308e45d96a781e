import SkiffAPI
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The test kit's one-call application start, over a socket and in process alike.
@Suite("SkiffTesting: the application started for a test")
struct TestApplicationTests {
    @Test("a signed-in user lists, another finds it and bids; a guest is refused", arguments: TestTransport.allCases)
    func story(transport: TestTransport) async throws {
        try await withTestApplication(transport: transport) { test in
            #expect((test.connection != nil) == (transport == .socket))
            let seller = try await test.signedInUser(email: "seller@campus.edu", name: "Sam")
            let buyer = try await test.signedInUser(email: "buyer@campus.edu", name: "Bea")
            #expect(seller.id != buyer.id)
            let listing = try await test.listings.createListing(
                .with {
                    $0.listing.title = "Desk lamp"
                    $0.listing.priceCents = 1_000
                    $0.listing.category = .furniture
                    $0.listing.condition = .lightlyUsed
                    $0.listing.biddingEnabled = true
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            ).listing
            let found = try await test.listings.getListing(
                .with { $0.listingID = listing.listingID },
                metadata: buyer.auth
            )
            #expect(found.listing.title == "Desk lamp")
            let bid = try await test.bids.placeBid(
                .with {
                    $0.listingID = listing.listingID
                    $0.amountCents = 1_100
                },
                metadata: buyer.auth
            )
            #expect(bid.bid.amountCents == 1_100)
            await expectStatus(.unauthenticated) {
                _ = try await test.bids.placeBid(
                    .with {
                        $0.listingID = listing.listingID
                        $0.amountCents = 1_200
                    }
                )
            }
        }
    }

    @Test("a missing e-mail is an error that names the address and what was looked for")
    func missingMail() async throws {
        try await withTestApplication { test in
            let error = #expect(throws: MissingMail.self) {
                try test.mailedToken(to: "nobody@campus.edu", label: "Verification token")
            }
            #expect(error?.description == "no e-mail to nobody@campus.edu with a Verification token")
        }
    }
}
