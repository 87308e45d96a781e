import Foundation
import NIOCore
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 9 (hardening), items 4 and 10, over a real socket through the production server: every service
/// bounds its requests before any work, answering INVALID_ARGUMENT that names the field and its limit, and
/// a filter the size of the one that broke SQLite's expression tree is refused as such, not INTERNAL.
@Suite("Request bounds over a socket")
struct RequestBoundsSocketTests {
    // MARK: Item 4: CreateListing's 64,000 tags

    @Test(
        "64,000 tags (500 KB): INVALID_ARGUMENT naming the limit; a control call on another connection meanwhile succeeds",
        arguments: Backend.allCases
    )
    func hugeTagList(_ backend: Backend) async throws {
        try await withBoundsApp(backend) { app, connection, port in
            let listings = ListingsClient(transport: connection)
            let (seller, _) = try await ListingsServiceTests.users(app, connection)
            var listing = ListingsServiceTests.newListing("Desk lamp")
            listing.tags = (0..<64_000).map { "tag\($0)" }
            let huge = listing
            let created = try await listings.createListing(
                .with { $0.listing = ListingsServiceTests.newListing("Control listing") },
                metadata: seller.auth
            )
            // Two such requests at once, and a control call on its own connection alongside them.
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { control in
                let controlClient = ListingsClient(transport: control)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            let error = await expectStatus(.invalidArgument) {
                                _ = try await listings.createListing(
                                    .with { $0.listing = huge },
                                    metadata: seller.auth
                                )
                            }
                            #expect(error?.message == "listing.tags has 64000 tags: send at most 32.")
                        }
                    }
                    group.addTask {
                        let read = try await controlClient.getListing(
                            .with { $0.listingID = created.listing.listingID }
                        )
                        #expect(read.listing.title == "Control listing")
                    }
                    try await group.waitForAll()
                }
            }
            // 32 tags as sent, of which 10 distinct (the rest duplicates in other cases): accepted.
            listing.tags = (0..<32).map { $0 % 2 == 0 ? "Tag\($0 % 10)" : " tag\($0 % 10) " }
            let accepted = try await listings.createListing(.with { $0.listing = listing }, metadata: seller.auth)
            #expect(accepted.listing.tags == (0..<10).map { "tag\($0)" })
        }
    }

    // MARK: Item 10: SearchListings with 1,000 filter tags

    @Test(
        "SearchListings with 1,000 filter tags: INVALID_ARGUMENT (not INTERNAL); with 20 it answers OK",
        arguments: Backend.allCases
    )
    func searchFilterTags(_ backend: Backend) async throws {
        try await withBoundsApp(backend) { app, connection, _ in
            let listings = ListingsClient(transport: connection)
            let (seller, _) = try await ListingsServiceTests.users(app, connection)
            var tagged = ListingsServiceTests.newListing("Tagged lamp")
            tagged.tags = (0..<10).map { "t\($0)" }
            _ = try await listings.createListing(.with { $0.listing = tagged }, metadata: seller.auth)
            _ = try await listings.createListing(
                .with { $0.listing = ListingsServiceTests.newListing("Plain lamp") },
                metadata: seller.auth
            )
            let error = await expectStatus(.invalidArgument) {
                _ = try await listings.searchListings(.with { $0.filter.tags = (0..<1_000).map { "tag\($0)" } })
            }
            #expect(error?.message == "filter.tags has 1000 tags: send at most 20.")
            // The most allowed: 20 tags, 10 of them on the listing, so nothing matches; then 10 that do.
            let none = try await listings.searchListings(.with { $0.filter.tags = (0..<20).map { "t\($0)" } })
            #expect(none.results.isEmpty)
            let some = try await listings.searchListings(
                .with { $0.filter.tags = (0..<10).map { "T\($0)" } + (0..<10).map { "t\($0)" } }
            )
            #expect(some.results.map(\.listing.title) == ["Tagged lamp"])
        }
    }

    // MARK: Item 4: every service bounds its requests first

    @Test("Oversized fields in every service: INVALID_ARGUMENT naming the field and limit", arguments: Backend.allCases)
    func everyService(_ backend: Backend) async throws {
        try await withBoundsApp(backend) { app, connection, _ in
            let (seller, buyer) = try await ListingsServiceTests.users(app, connection)
            let big = String(repeating: "x", count: 100_000)
            let listings = ListingsClient(transport: connection)
            var error = await expectStatus(.invalidArgument) {
                _ = try await listings.getListing(.with { $0.listingID = big })
            }
            #expect(error?.message == "listing_id is too long: send at most 128 bytes (UTF-8).")
            error = await expectStatus(.invalidArgument) {
                _ = try await listings.searchListings(.with { $0.query = big })
            }
            #expect(error?.message == "query is too long: send at most 800 bytes (UTF-8).")
            error = await expectStatus(.invalidArgument) {
                _ = try await listings.searchListings(
                    .with { $0.filter.categories = Array(repeating: .books, count: 64_000) }
                )
            }
            #expect(error?.message == "filter.categories has 64000 values: send at most 16.")

            let bids = Skiff_Bids_V1_Bids.Client(transport: connection)
            error = await expectStatus(.invalidArgument) {
                _ = try await bids.rejectBid(
                    .with {
                        $0.bidID = "bid_1"
                        $0.reason = big
                    },
                    metadata: seller.auth
                )
            }
            #expect(error?.message == "reason is too long: send at most 2000 bytes (UTF-8).")

            let chat = Skiff_Chat_V1_Chat.Client(transport: connection)
            error = await expectStatus(.invalidArgument) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = seller.id
                        $0.text = big
                    },
                    metadata: buyer.auth
                )
            }
            #expect(error?.message == "text is too long: send at most 16000 bytes (UTF-8).")

            let bucketList = Skiff_Bucketlist_V1_BucketList.Client(transport: connection)
            error = await expectStatus(.invalidArgument) {
                _ = try await bucketList.createActivity(
                    .with {
                        $0.activity.title = "Picnic"
                        $0.activity.tags = Array(repeating: "park", count: 64_000)
                    },
                    metadata: buyer.auth
                )
            }
            #expect(error?.message == "activity.tags has 64000 tags: send at most 10.")

            let lostFound = LostFoundClient(transport: connection)
            error = await expectStatus(.invalidArgument) {
                _ = try await lostFound.searchItems(.with { $0.filter.building = big })
            }
            #expect(error?.message == "filter.building is too long: send at most 400 bytes (UTF-8).")
            error = await expectStatus(.invalidArgument) {
                _ = try await lostFound.updateItem(
                    .with {
                        $0.item.itemID = "lfi_1"
                        $0.updateMask.paths = Array(repeating: "title", count: 10_000)
                    },
                    metadata: buyer.auth
                )
            }
            #expect(
                error?.message
                    == "update_mask has 10000 paths: name each changeable field at most once (at most 8)."
            )
        }
    }
}

/// Runs the production server on `backend` (SQLite in a temporary directory removed afterwards) and hands
/// `body` the app, a connection and the port (for more connections).
func withBoundsApp<R: Sendable>(
    _ backend: Backend,
    _ body: @Sendable (Application, ClientConnection, Int) async throws -> R
) async throws -> R {
    try await withTemporaryDatabasePath { path in
        try await withApp(backend, path: path) { app, connection in
            let port = try await app.server.listeningAddress.port!
            return try await body(app, connection, port)
        }
    }
}
