import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The Bids RPCs the marketplace story does not reach, over a real socket on both backends:
/// reject, withdraw, decline a counter, the two views of a listing's bids, purchases, sales and
/// their permission failures.
@Suite("Bids over a socket")
struct BidsServiceSocketTests {
    @Test("reject, withdraw, decline, views of bids, purchases and permissions", arguments: Backend.allCases)
    func lifecycle(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")
            let listing = try await listings.createListing(
                .with {
                    $0.listing.title = "Mini fridge"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.biddingEnabled = true
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            ).listing
            func place(_ who: Metadata, _ amount: Int64) async throws -> Skiff_Bids_V1_Bid {
                try await bids.placeBid(
                    .with {
                        $0.listingID = listing.listingID
                        $0.amountCents = amount
                    },
                    metadata: who
                ).bid
            }

            // The seller cannot bid on their own listing; nobody can bid on an unknown one.
            await expectStatus(.permissionDenied) { _ = try await place(seller.auth, 5_000) }
            await expectStatus(.notFound) {
                _ = try await bids.placeBid(
                    .with {
                        $0.listingID = "lst_missing"
                        $0.amountCents = 5_000
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) { _ = try await place(ann.auth, -1) }

            let annBid = try await place(ann.auth, 4_000)
            let bobBid = try await place(bob.auth, 4_500)
            // A raise must beat one's own previous bid.
            await expectStatus(.invalidArgument) { _ = try await place(bob.auth, 4_200) }

            // Only the seller rejects; the bidder sees the new state.
            await expectStatus(.permissionDenied) {
                _ = try await bids.rejectBid(.with { $0.bidID = annBid.bidID }, metadata: bob.auth)
            }
            let rejected = try await bids.rejectBid(
                .with {
                    $0.bidID = annBid.bidID
                    $0.reason = "Too low"
                },
                metadata: seller.auth
            ).bid
            #expect(rejected.state == .rejected)

            // Counter, then the bidder declines: the bid is pending again; then withdraws it.
            _ = try await bids.counterBid(
                .with {
                    $0.bidID = bobBid.bidID
                    $0.amountCents = 5_000
                },
                metadata: seller.auth
            )
            await expectStatus(.permissionDenied) {
                _ = try await bids.declineCounter(.with { $0.bidID = bobBid.bidID }, metadata: ann.auth)
            }
            let declined = try await bids.declineCounter(.with { $0.bidID = bobBid.bidID }, metadata: bob.auth).bid
            #expect(declined.state == .pending)
            await expectStatus(.permissionDenied) {
                _ = try await bids.withdrawBid(.with { $0.bidID = bobBid.bidID }, metadata: seller.auth)
            }
            let withdrawn = try await bids.withdrawBid(.with { $0.bidID = bobBid.bidID }, metadata: bob.auth).bid
            #expect(withdrawn.state == .withdrawn)

            // Ann bids again; the seller sees bidders, others only the count and the highest amount.
            let again = try await place(ann.auth, 4_800)
            let sellerView = try await bids.listBidsForListing(
                .with { $0.listingID = listing.listingID },
                metadata: seller.auth
            )
            #expect(sellerView.bids.contains { $0.bidID == again.bidID && $0.bidderID == ann.id })
            let publicView = try await bids.listBidsForListing(.with { $0.listingID = listing.listingID })
            #expect(publicView.bids.isEmpty)
            #expect(publicView.highestAmountCents == 4_800)
            #expect(publicView.bidCount >= 1)

            let mine = try await bids.listMyBids(.with { $0.states = [.rejected] }, metadata: ann.auth)
            #expect(mine.bids.map(\.bidID) == [annBid.bidID])

            // Accept: Ann's purchase, the seller's sale; strangers cannot read it.
            let sale = try await bids.acceptBid(.with { $0.bidID = again.bidID }, metadata: seller.auth).sale
            #expect(try await bids.listMyPurchases(.init(), metadata: ann.auth).sales.map(\.saleID) == [sale.saleID])
            #expect(
                try await bids.getSale(.with { $0.saleID = sale.saleID }, metadata: seller.auth).sale.amountCents
                    == 4_800
            )
            await expectStatus(.permissionDenied) {
                _ = try await bids.getSale(.with { $0.saleID = sale.saleID }, metadata: bob.auth)
            }
            await expectStatus(.unauthenticated) { _ = try await bids.getSale(.with { $0.saleID = sale.saleID }) }
            // The listing is sold: no more bids.
            await expectStatus(.failedPrecondition) { _ = try await place(bob.auth, 9_000) }
        }
    }
}
