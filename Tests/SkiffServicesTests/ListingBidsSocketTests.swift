import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The service token the test servers are started with (`--service-token`), so tests can make the
/// calls only Skiff services may make.
let serviceAuth: Metadata = ["authorization": .string("Bearer \(testServiceToken)")]

/// Listings and Bids together: what happens to bids when a listing leaves the market, and the
/// service-only Bids calls Listings makes, over a real socket on both backends.
@Suite("Listings and Bids over a socket")
struct ListingBidsSocketTests {
    static func newListing(
        _ listings: ListingsClient,
        _ seller: Metadata,
        title: String = "Desk lamp"
    ) async throws -> Skiff_Listings_V1_Listing {
        try await listings.createListing(
            .with {
                $0.listing.title = title
                $0.listing.priceCents = 1_000
                $0.listing.category = .furniture
                $0.listing.condition = .lightlyUsed
                $0.listing.biddingEnabled = true
                $0.listing.location.zipCode = "37235"
            },
            metadata: seller
        ).listing
    }

    static func bid(
        _ bids: BidsClient,
        _ listingID: String,
        _ amount: Int64,
        _ who: Metadata
    ) async throws
        -> Skiff_Bids_V1_Bid
    {
        try await bids.placeBid(
            .with {
                $0.listingID = listingID
                $0.amountCents = amount
            },
            metadata: who
        ).bid
    }

    static func myBid(_ bids: BidsClient, _ who: Metadata, _ id: String) async throws -> Skiff_Bids_V1_Bid? {
        try await bids.listMyBids(.init(), metadata: who).bids.first { $0.bidID == id }
    }

    @Test(
        "withdrawing or marking sold rejects the live bids; bidding stays on while bids are pending",
        arguments: Backend.allCases
    )
    func closing(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")

            let lamp = try await Self.newListing(listings, seller.auth)
            let annBid = try await Self.bid(bids, lamp.listingID, 1_000, ann.auth)
            let bobBid = try await Self.bid(bids, lamp.listingID, 1_200, bob.auth)
            _ = try await bids.counterBid(
                .with {
                    $0.bidID = bobBid.bidID
                    $0.amountCents = 1_500
                },
                metadata: seller.auth
            )

            // Bidding cannot be turned off while bids wait for an answer.
            func biddingOff(_ id: String) async throws {
                _ = try await listings.updateListing(
                    .with {
                        $0.listing.listingID = id
                        $0.listing.biddingEnabled = false
                        $0.updateMask.paths = ["bidding_enabled"]
                    },
                    metadata: seller.auth
                )
            }
            let refused = await expectStatus(.failedPrecondition) { try await biddingOff(lamp.listingID) }
            #expect(refused?.message.contains("bids are pending") == true)
            #expect(
                try await bids.countPendingBids(.with { $0.listingID = lamp.listingID }, metadata: serviceAuth).count
                    == 2
            )

            // Withdrawing rejects both live bids (pending and countered), with the reason.
            _ = try await listings.withdrawListing(.with { $0.listingID = lamp.listingID }, metadata: seller.auth)
            for (who, id) in [(ann.auth, annBid.bidID), (bob.auth, bobBid.bidID)] {
                let bid = try #require(try await Self.myBid(bids, who, id))
                #expect(bid.state == .rejected)
                #expect(bid.rejectionReason == "The seller withdrew the listing.")
            }
            #expect(
                try await bids.countPendingBids(.with { $0.listingID = lamp.listingID }, metadata: serviceAuth).count
                    == 0
            )
            // Closing again (a retry by Listings) rejects nothing more.
            let again = try await bids.closeListing(
                .with {
                    $0.listingID = lamp.listingID
                    $0.closure = .withdrawn
                },
                metadata: serviceAuth
            )
            #expect(again.rejectedBids.isEmpty)

            // Marked sold by the seller outside the app: the live bid is rejected.
            let chair = try await Self.newListing(listings, seller.auth, title: "Chair")
            let annChair = try await Self.bid(bids, chair.listingID, 1_100, ann.auth)
            _ = try await listings.markSold(.with { $0.listingID = chair.listingID }, metadata: seller.auth)
            let soldBid = try #require(try await Self.myBid(bids, ann.auth, annChair.bidID))
            #expect(soldBid.state == .rejected)
            #expect(soldBid.rejectionReason == "The seller marked the listing sold.")

            // Once no bid is pending, bidding may be turned off.
            let table = try await Self.newListing(listings, seller.auth, title: "Table")
            let annTable = try await Self.bid(bids, table.listingID, 1_000, ann.auth)
            _ = try await bids.rejectBid(.with { $0.bidID = annTable.bidID }, metadata: seller.auth)
            try await biddingOff(table.listingID)
        }
    }

    @Test(
        "accepting a bid sells the listing: the bid stays ACCEPTED, the others are SUPERSEDED",
        arguments: Backend.allCases
    )
    func acceptance(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")
            let lamp = try await Self.newListing(listings, seller.auth)
            let annBid = try await Self.bid(bids, lamp.listingID, 1_000, ann.auth)
            let bobBid = try await Self.bid(bids, lamp.listingID, 1_200, bob.auth)

            let accepted = try await bids.acceptBid(.with { $0.bidID = bobBid.bidID }, metadata: seller.auth)
            #expect(accepted.bid.state == .accepted)
            #expect(try await Self.myBid(bids, bob.auth, bobBid.bidID)?.state == .accepted)
            #expect(try await Self.myBid(bids, ann.auth, annBid.bidID)?.state == .superseded)
            let listing = try await listings.getListing(.with { $0.listingID = lamp.listingID }).listing
            #expect(listing.status == .sold)
            // Marking it sold again as the seller changes no bid.
            _ = try await listings.markSold(.with { $0.listingID = lamp.listingID }, metadata: seller.auth)
            #expect(try await Self.myBid(bids, bob.auth, bobBid.bidID)?.state == .accepted)
            #expect(try await Self.myBid(bids, ann.auth, annBid.bidID)?.state == .superseded)
            // A service reads any sale; a user only their own.
            let sale = try await bids.getSale(.with { $0.saleID = accepted.sale.saleID }, metadata: serviceAuth).sale
            #expect(sale.buyerID == bob.id)
            await expectStatus(.permissionDenied) {
                _ = try await bids.getSale(.with { $0.saleID = accepted.sale.saleID }, metadata: ann.auth)
            }
        }
    }

    @Test("service-only Bids calls: exact codes for guests, users and bad input", arguments: Backend.allCases)
    func serviceOnlyCalls(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let user = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "usr@campus.edu", name: "Usr")
            let count = Skiff_Bids_V1_CountPendingBidsRequest.with { $0.listingID = "lst_x" }
            let close = Skiff_Bids_V1_CloseListingRequest.with {
                $0.listingID = "lst_x"
                $0.closure = .withdrawn
            }
            await expectStatus(.unauthenticated) { _ = try await bids.countPendingBids(count) }
            await expectStatus(.unauthenticated) { _ = try await bids.closeListing(close) }
            await expectStatus(.permissionDenied) { _ = try await bids.countPendingBids(count, metadata: user.auth) }
            await expectStatus(.permissionDenied) { _ = try await bids.closeListing(close, metadata: user.auth) }
            let wrongToken: Metadata = ["authorization": "Bearer not-the-service-token-at-all"]
            await expectStatus(.unauthenticated) { _ = try await bids.closeListing(close, metadata: wrongToken) }

            await expectStatus(.invalidArgument) { _ = try await bids.countPendingBids(.init(), metadata: serviceAuth) }
            await expectStatus(.invalidArgument) {
                _ = try await bids.closeListing(.with { $0.closure = .sold }, metadata: serviceAuth)
            }
            let unspecified = await expectStatus(.invalidArgument) {
                _ = try await bids.closeListing(.with { $0.listingID = "lst_x" }, metadata: serviceAuth)
            }
            #expect(unspecified?.message.contains("closure") == true)
            // An unknown listing has no bids.
            #expect(try await bids.countPendingBids(count, metadata: serviceAuth).count == 0)
            #expect(try await bids.closeListing(close, metadata: serviceAuth).rejectedBids.isEmpty)
        }
    }
}

/// Issue 11: the sustainability impact before buying, on GetListing and PlaceBid.
@Suite("Sustainability impact before buying")
struct SustainabilityBeforeBuyingTests {
    @Test(
        "GetListing (guests too) and PlaceBid (retries too) carry the impact of the listing's category",
        arguments: Backend.allCases
    )
    func impactBeforeBuying(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "buy@campus.edu", name: "Buy")
            let lamp = try await ListingBidsSocketTests.newListing(listings, seller.auth, title: "Desk lamp")

            // Furniture: 45 kg of CO2e and 2,000 litres of water (the documented table).
            let guestView = try await listings.getListing(.with { $0.listingID = lamp.listingID })
            let impact = guestView.sustainabilityImpact
            #expect(impact.co2EGramsSaved == 45_000)
            #expect(impact.waterLitersSaved == 2_000)
            #expect(impact.category == .furniture)
            #expect(
                impact.explanation
                    == "Buying “Desk lamp” second-hand saves about 45 kg of CO2e and 2,000 litres of water."
            )
            let buyerView = try await listings.getListing(.with { $0.listingID = lamp.listingID }, metadata: buyer.auth)
            #expect(buyerView.sustainabilityImpact == impact)

            let place = Skiff_Bids_V1_PlaceBidRequest.with {
                $0.listingID = lamp.listingID
                $0.amountCents = 1_200
                $0.requestID = "bid-once"
            }
            let placed = try await bids.placeBid(place, metadata: buyer.auth)
            #expect(placed.sustainabilityImpact.co2EGramsSaved == 45_000)
            #expect(placed.sustainabilityImpact.waterLitersSaved == 2_000)
            #expect(placed.sustainabilityImpact.category == .furniture)
            #expect(placed.sustainabilityImpact.explanation == impact.explanation)
            // A retry answers with the first bid and the same impact.
            let retried = try await bids.placeBid(place, metadata: buyer.auth)
            #expect(retried.bid == placed.bid)
            #expect(retried.sustainabilityImpact == placed.sustainabilityImpact)

            // A ticket saves nothing measurable: zero figures and a sentence that says so.
            let ticket = try await listings.createListing(
                .with {
                    $0.listing.title = "Concert ticket"
                    $0.listing.priceCents = 3_000
                    $0.listing.category = .tickets
                    $0.listing.condition = .new
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            ).listing
            let ticketImpact = try await listings.getListing(.with { $0.listingID = ticket.listingID })
                .sustainabilityImpact
            #expect(ticketImpact.co2EGramsSaved == 0 && ticketImpact.waterLitersSaved == 0)
            #expect(
                ticketImpact.explanation
                    == "Buying “Concert ticket” second-hand puts it to use instead of letting it go to waste."
            )
        }
    }
}
