import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

typealias BidsClient = Skiff_Bids_V1_Bids.Client

/// A tiny valid PNG header followed by filler: enough for type detection.
let pngBytes: Data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(repeating: 7, count: 150_000)

/// The whole marketplace story through the generated typed clients over a real socket.
@Suite("Marketplace story end to end")
struct MarketplaceStoryTests {
    @Test(
        "sign up → verify → log in → post with images → search → bid → counter → accept → chat opened → confirm → rate → profile",
        arguments: Backend.allCases
    )
    func story(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            try await Self.campusClosetStory(
                accounts: accounts,
                listings: ListingsClient(transport: connection),
                bids: BidsClient(transport: connection),
                chat: Skiff_Chat_V1_Chat.Client(transport: connection)
            ) { email, name in
                try await signUpAndLogIn(accounts, mailer: app.mailer, email: email, name: name)
            }
        }
    }

    /// The Campus Closet story through the services' typed clients, wherever each service runs;
    /// `signUp` signs a user up, verifies the address and logs in.
    static func campusClosetStory(
        accounts: AccountsClient,
        listings: ListingsClient,
        bids: BidsClient,
        chat: Skiff_Chat_V1_Chat.Client,
        signUp: (_ email: String, _ name: String) async throws -> (id: String, auth: Metadata)
    ) async throws {
        let seller = try await signUp("sam@campus.edu", "Sam")
        let buyer = try await signUp("bea@campus.edu", "Bea")
        _ = try await accounts.updateProfile(
            .with {
                $0.account.paymentHandle = "@sam-pays"
                $0.updateMask.paths = ["payment_handle"]
            },
            metadata: seller.auth
        )

        // Post with an image uploaded in chunks.
        let image = try await listings.uploadImage(metadata: seller.auth) { writer in
            try await writer.write(.with { $0.metadata = .with { $0.filename = "jacket.png" } })
            var offset = 0
            while offset < pngBytes.count {
                let end = min(offset + 64 * 1024, pngBytes.count)
                try await writer.write(.with { $0.chunk = pngBytes[offset..<end] })
                offset = end
            }
        }.image
        #expect(image.contentType == "image/png")
        #expect(image.sizeBytes == Int64(pngBytes.count))
        let listing = try await listings.createListing(
            .with {
                $0.listing.title = "Vintage denim jacket"
                $0.listing.description_p = "Barely worn, size M, from the campus thrift swap."
                $0.listing.priceCents = 2_000
                $0.listing.category = .clothing
                $0.listing.condition = .lightlyUsed
                $0.listing.size = "M"
                $0.listing.tags = ["denim", "vintage"]
                $0.listing.biddingEnabled = true
                $0.listing.imageIds = [image.imageID]
                $0.listing.location.zipCode = "37235"
            },
            metadata: seller.auth
        ).listing
        #expect(listing.status == .active)

        // A guest finds it and downloads its picture.
        let found = try await listings.searchListings(.with { $0.query = "jacket" })
        #expect(found.results.map(\.listing.listingID) == [listing.listingID])
        let downloaded = try await listings.downloadImage(.with { $0.imageID = image.imageID }) { response in
            var bytes = Data()
            for try await part in response.messages {
                if case .chunk(let chunk) = part.data { bytes += chunk }
            }
            return bytes
        }
        #expect(downloaded == pngBytes)

        // Bid at the asking price; a lower bid names the minimum.
        let low = await expectStatus(.invalidArgument) {
            _ = try await bids.placeBid(
                .with {
                    $0.listingID = listing.listingID
                    $0.amountCents = 1_500
                },
                metadata: buyer.auth
            )
        }
        #expect(low?.message.contains("2000") == true || low?.message.contains("20.00") == true)
        await expectStatus(.unauthenticated) {
            _ = try await bids.placeBid(
                .with {
                    $0.listingID = listing.listingID
                    $0.amountCents = 2_000
                }
            )
        }
        let bid = try await bids.placeBid(
            .with {
                $0.listingID = listing.listingID
                $0.amountCents = 2_000
            },
            metadata: buyer.auth
        ).bid

        // The seller counters; the buyer accepts the counter, which sells the listing.
        await expectStatus(.permissionDenied) {
            _ = try await bids.counterBid(
                .with {
                    $0.bidID = bid.bidID
                    $0.amountCents = 2_500
                },
                metadata: buyer.auth
            )
        }
        _ = try await bids.counterBid(
            .with {
                $0.bidID = bid.bidID
                $0.amountCents = 2_500
            },
            metadata: seller.auth
        )
        let accepted = try await bids.acceptCounter(.with { $0.bidID = bid.bidID }, metadata: buyer.auth)
        let sale = accepted.sale
        #expect(sale.amountCents == 2_500)
        #expect(sale.buyerID == buyer.id)
        #expect(sale.sellerID == seller.id)
        #expect(sale.state == .pendingHandoff)
        #expect(sale.sellerPaymentHandle == "@sam-pays")
        #expect(sale.sustainabilityImpact.co2EGramsSaved > 0)

        // Accepting opened the buyer–seller conversation about the listing: both see it and can talk.
        #expect(!sale.conversationID.isEmpty)
        let opened = try await chat.getConversation(
            .with { $0.conversationID = sale.conversationID },
            metadata: buyer.auth
        )
        .conversation
        #expect(opened.otherUserID == seller.id)
        #expect(opened.listingID == sale.listingID)
        let hello = try await chat.sendMessage(
            .with {
                $0.recipientID = seller.id
                $0.listingID = sale.listingID
                $0.text = "When can I pick it up?"
            },
            metadata: buyer.auth
        ).message
        #expect(hello.conversationID == sale.conversationID)
        let sellerView = try await chat.listConversations(.init(), metadata: seller.auth).conversations
        #expect(sellerView.map(\.conversationID) == [sale.conversationID])
        #expect(sellerView.first?.unreadCount == 1)

        // Sold: out of default search, still readable by id.
        #expect(try await listings.searchListings(.with { $0.query = "jacket" }).results.isEmpty)
        #expect(try await listings.getListing(.with { $0.listingID = listing.listingID }).listing.status == .sold)

        // Rating before completion is refused.
        await expectStatus(.failedPrecondition) {
            _ = try await accounts.rateSeller(
                .with {
                    $0.saleID = sale.saleID
                    $0.stars = 5
                },
                metadata: buyer.auth
            )
        }
        _ = try await bids.confirmHandoff(.with { $0.saleID = sale.saleID }, metadata: buyer.auth)
        let completed = try await bids.confirmHandoff(.with { $0.saleID = sale.saleID }, metadata: seller.auth).sale
        #expect(completed.state == .completed)
        #expect(completed.receipt.amountCents == 2_500)
        #expect(completed.receipt.listingTitle == "Vintage denim jacket")

        // Only the buyer rates, once.
        await expectStatus(.permissionDenied) {
            _ = try await accounts.rateSeller(
                .with {
                    $0.saleID = sale.saleID
                    $0.stars = 1
                },
                metadata: seller.auth
            )
        }
        _ = try await accounts.rateSeller(
            .with {
                $0.saleID = sale.saleID
                $0.stars = 5
                $0.comment = "Great jacket, quick hand-off."
            },
            metadata: buyer.auth
        )
        await expectStatus(.alreadyExists) {
            _ = try await accounts.rateSeller(
                .with {
                    $0.saleID = sale.saleID
                    $0.stars = 4
                },
                metadata: buyer.auth
            )
        }

        // The seller's public profile shows the rating and the sale.
        let profile = try await accounts.getProfile(.with { $0.userID = seller.id }).profile
        #expect(profile.ratingCount == 1)
        #expect(profile.ratingAverage == 5)
        #expect(profile.itemsSold == 1)
        let ratings = try await accounts.listRatings(.with { $0.userID = seller.id })
        #expect(ratings.ratings.first?.raterDisplayName == "Bea")
    }

    @Test("many buyers race to have their bids accepted: exactly one sale", arguments: Backend.allCases)
    func acceptRace(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "s@campus.edu", name: "S")
            let listing = try await listings.createListing(
                .with {
                    $0.listing.title = "Desk lamp"
                    $0.listing.priceCents = 500
                    $0.listing.category = .furniture
                    $0.listing.condition = .new
                    $0.listing.biddingEnabled = true
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            ).listing
            var bidIDs: [String] = []
            for i in 0..<8 {
                let buyer = try await signUpAndLogIn(
                    accounts,
                    mailer: app.mailer,
                    email: "b\(i)@campus.edu",
                    name: "B\(i)"
                )
                let bid = try await bids.placeBid(
                    .with {
                        $0.listingID = listing.listingID
                        $0.amountCents = 500 + Int64(i)
                    },
                    metadata: buyer.auth
                ).bid
                bidIDs.append(bid.bidID)
            }
            let ids = bidIDs
            let outcomes = try await withThrowingTaskGroup(of: StatusCode.self) { group in
                for id in ids {
                    group.addTask {
                        do {
                            _ = try await bids.acceptBid(.with { $0.bidID = id }, metadata: seller.auth)
                            return .ok
                        } catch let error as RPCError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [StatusCode]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .ok }.count == 1, "\(outcomes)")
            #expect(outcomes.allSatisfy { $0 == .ok || $0 == .aborted || $0 == .failedPrecondition }, "\(outcomes)")
            let sales = try await bids.listMySales(.init(), metadata: seller.auth)
            #expect(sales.sales.count == 1)
        }
    }
}
