import ArgumentParser
import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The per-user write limits of Listings and Bids over a real socket, scaled down with
/// `--rate-limit-scale 0.05` (3 listings per hour, 3 bids per 10 minutes).
@Suite("Rate limits over a socket")
struct RateLimitSocketTests {
    @Test("CreateListing and PlaceBid answer RESOURCE_EXHAUSTED with retry-after once a user's limit is used up")
    func limits() async throws {
        try await withApp(.memory, extraArguments: ["--rate-limit-scale", "0.05"]) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let other = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "oth@campus.edu", name: "Oth")
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")

            var posted: [String] = []
            for index in 0..<3 {
                posted.append(
                    try await ListingBidsSocketTests.newListing(listings, seller.auth, title: "Lamp \(index)").listingID
                )
            }
            let limited = await expectStatus(.resourceExhausted) {
                _ = try await ListingBidsSocketTests.newListing(listings, seller.auth, title: "One too many")
            }
            let listingWait = try #require(limited?.metadata.first("retry-after").flatMap(Int.init))
            #expect((3_590...3_600).contains(listingWait))
            #expect(
                limited?.message
                    == "Too many listings posted (at most 3 per hour); try again in \(listingWait) s."
            )
            // Another user is not affected.
            _ = try await ListingBidsSocketTests.newListing(listings, other.auth)

            for id in posted { _ = try await ListingBidsSocketTests.bid(bids, id, 1_000, ann.auth) }
            let bidLimited = await expectStatus(.resourceExhausted) {
                _ = try await ListingBidsSocketTests.bid(bids, posted[0], 2_000, ann.auth)
            }
            let bidWait = try #require(bidLimited?.metadata.first("retry-after").flatMap(Int.init))
            #expect((590...600).contains(bidWait))
            #expect(
                bidLimited?.message == "Too many bids placed (at most 3 per 10 minutes); try again in \(bidWait) s."
            )
        }
    }

    @Test("UploadImage and SaveListing are limited too; --rate-limit-scale 0.01 leaves 2 uploads and 3 saves per hour")
    func uploadAndSave() async throws {
        try await withApp(.memory, extraArguments: ["--rate-limit-scale", "0.01"]) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "buy@campus.edu", name: "Buy")
            func upload() async throws {
                _ = try await listings.uploadImage(metadata: seller.auth) { writer in
                    try await writer.write(.with { $0.chunk = pngBytes.prefix(1_000) })
                }
            }
            try await upload()
            try await upload()
            let uploads = await expectStatus(.resourceExhausted) { try await upload() }
            #expect((3_590...3_600).contains(uploads?.metadata.first("retry-after").flatMap(Int.init) ?? 0))
            #expect(uploads?.message.hasPrefix("Too many images uploaded (at most 2 per hour)") == true)

            let lamp = try await ListingBidsSocketTests.newListing(listings, seller.auth)
            let save = Skiff_Listings_V1_SaveListingRequest.with { $0.listingID = lamp.listingID }
            for _ in 0..<3 { _ = try await listings.saveListing(save, metadata: buyer.auth) }
            let saves = await expectStatus(.resourceExhausted) {
                _ = try await listings.saveListing(save, metadata: buyer.auth)
            }
            #expect((3_590...3_600).contains(saves?.metadata.first("retry-after").flatMap(Int.init) ?? 0))
            #expect(saves?.message.hasPrefix("Too many listings saved (at most 3 per hour)") == true)
        }
    }

    @Test("--rate-limit-scale must be 0 or more")
    func option() throws {
        #expect(throws: (any Error).self) { _ = try ServerOptions.parse(["--rate-limit-scale", "-1"]) }
        #expect(try ServerOptions.parse([]).rateLimitScale == 1)
        #expect(throws: (any Error).self) { _ = try ServerOptions.parse(["--service-token", "short"]) }
    }
}
