import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 11 (Ketch): a rating can be left anonymously, over a real socket on both backends.
@Suite("Anonymous ratings over a socket")
struct AnonymousRatingSocketTests {
    @Test(
        "An anonymous rating shows its stars and comment to everyone, its rater only to them; once per sale",
        arguments: Backend.allCases
    )
    func anonymousRating(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let shy = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "shy@campus.edu", name: "Shy")
            let bold = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bold@campus.edu", name: "Bold")

            /// A completed sale of a new listing of the seller's to `buyer`.
            func completedSale(_ buyer: Metadata, _ title: String) async throws -> String {
                let listing = try await ListingBidsSocketTests.newListing(listings, seller.auth, title: title)
                let bid = try await ListingBidsSocketTests.bid(bids, listing.listingID, 1_000, buyer)
                let sale = try await bids.acceptBid(.with { $0.bidID = bid.bidID }, metadata: seller.auth).sale
                for who in [buyer, seller.auth] {
                    _ = try await bids.confirmHandoff(.with { $0.saleID = sale.saleID }, metadata: who)
                }
                return sale.saleID
            }
            let shySale = try await completedSale(shy.auth, "Desk lamp")
            let boldSale = try await completedSale(bold.auth, "Chair")

            // Bold rates first with his name; Shy's anonymous rating is then the newest, so a page of one
            // ends on it.
            _ = try await accounts.rateSeller(
                .with {
                    $0.saleID = boldSale
                    $0.stars = 5
                },
                metadata: bold.auth
            )
            try await Task.sleep(for: .milliseconds(10))  // a later millisecond: the order is by time first
            let given = try await accounts.rateSeller(
                .with {
                    $0.saleID = shySale
                    $0.stars = 2
                    $0.comment = "Came an hour late."
                    $0.anonymous = true
                },
                metadata: shy.auth
            ).rating
            // The rater sees their own name on it; its id is not the sale's.
            #expect(given.anonymous)
            #expect(given.raterID == shy.id && given.raterDisplayName == "Shy")
            #expect(given.ratingID.hasPrefix("rat_") && given.ratingID != shySale)
            // Once per sale, anonymous or not.
            await expectStatus(.alreadyExists) {
                _ = try await accounts.rateSeller(
                    .with {
                        $0.saleID = shySale
                        $0.stars = 5
                        $0.anonymous = true
                    },
                    metadata: shy.auth
                )
            }

            let request = Skiff_Accounts_V1_ListRatingsRequest.with { $0.userID = seller.id }
            for viewer in [Metadata(), seller.auth, bold.auth] {
                let seen = try await accounts.listRatings(request, metadata: viewer).ratings
                #expect(seen.count == 2)
                let hidden = try #require(seen.first { $0.anonymous })
                #expect(hidden.raterID.isEmpty && hidden.raterDisplayName.isEmpty)
                #expect(hidden.ratingID == given.ratingID)
                #expect(hidden.stars == 2 && hidden.comment == "Came an hour late.")
                let open = try #require(seen.first { !$0.anonymous })
                #expect(open.raterID == bold.id && open.raterDisplayName == "Bold" && open.ratingID == boldSale)
                // Neither the ids nor a page token (here one that ends on the anonymous rating) name its sale.
                let page = try await accounts.listRatings(
                    .with {
                        $0.userID = seller.id
                        $0.pageSize = 1
                    },
                    metadata: viewer
                )
                #expect(page.ratings.first?.anonymous == true)
                let text = try #require(
                    Base64URL.decode(page.nextPageToken).map { String(decoding: $0, as: UTF8.self) }
                )
                #expect(text.contains(given.ratingID) && !text.contains(shySale))
            }
            let asRater = try await accounts.listRatings(request, metadata: shy.auth).ratings
            #expect(asRater.first { $0.anonymous }?.raterDisplayName == "Shy")
            let profile = try await accounts.getProfile(.with { $0.userID = seller.id }).profile
            #expect(profile.ratingCount == 2 && profile.ratingAverage == 3.5)
        }
    }
}
