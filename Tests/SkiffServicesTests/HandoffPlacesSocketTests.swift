import ArgumentParser
import Foundation
import SkiffAPI
import SkiffBids
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 11 (Ketch): safe hand-off places — the operator's list of campus meeting points, picked when
/// confirming a hand-off and shown on the sale, over a real socket on both backends.
@Suite("Hand-off places over a socket")
struct HandoffPlacesSocketTests {
    /// The example list shipped in `dev/`, which the README points operators to.
    static let examplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dev/handoff-places.example.json").path

    @Test(
        "The places are listed to guests; a pick is shown on the sale to both parties, final once completed",
        arguments: Backend.allCases
    )
    func pickAPlace(_ backend: Backend) async throws {
        try await withTemporaryDatabasePath { path in
            let arguments = ["--handoff-places", Self.examplePath]
            let saleID = try await withApp(backend, path: path, extraArguments: arguments) { app, connection in
                let accounts = AccountsClient(transport: connection)
                let listings = ListingsClient(transport: connection)
                let bids = BidsClient(transport: connection)
                let chat = ChatClient(transport: connection)

                // Guests see the whole list, in the file's order, with names, coordinates and hours.
                let places = try await bids.listHandoffPlaces(.init()).places
                #expect(places.map(\.placeID) == ["library-entrance", "police-desk", "student-union"])
                #expect(places[1].name == "Campus Police, front desk (under camera)")
                #expect(places[1].latitude == 36.14337 && places[1].longitude == -86.80531)
                #expect(places[1].hours == "Open 24 hours")

                let seller = try await signUpAndLogIn(
                    accounts,
                    mailer: app.mailer,
                    email: "sel@campus.edu",
                    name: "Sel"
                )
                let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "buy@campus.edu", name: "Buy")
                let other = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "oth@campus.edu", name: "Oth")
                let sellerFeed = FeedLog()
                let feed = Task {
                    try await chat.subscribeFeed(.init(), metadata: seller.auth) { response in
                        for try await event in response.messages { sellerFeed.append(event) }
                    }
                }
                defer { feed.cancel() }
                let listing = try await ListingBidsSocketTests.newListing(listings, seller.auth)
                let bid = try await ListingBidsSocketTests.bid(bids, listing.listingID, 1_000, buyer.auth)
                let sale = try await bids.acceptBid(.with { $0.bidID = bid.bidID }, metadata: seller.auth).sale
                #expect(!sale.hasHandoffPlace)

                func confirm(_ who: Metadata, _ place: String = "") async throws -> Skiff_Bids_V1_Sale {
                    try await bids.confirmHandoff(
                        .with {
                            $0.saleID = sale.saleID
                            $0.handoffPlaceID = place
                        },
                        metadata: who
                    ).sale
                }
                // Unknown places, oversize ids and strangers are refused, and nothing changes.
                let unknown = await expectStatus(.notFound) { _ = try await confirm(buyer.auth, "the-moon") }
                #expect(unknown?.message.contains("ListHandoffPlaces") == true)
                let oversize = await expectStatus(.invalidArgument) {
                    _ = try await confirm(buyer.auth, String(repeating: "x", count: 129))
                }
                #expect(oversize?.message.contains("handoff_place_id") == true)
                await expectStatus(.permissionDenied) { _ = try await confirm(other.auth, "police-desk") }
                await expectStatus(.unauthenticated) { _ = try await confirm([:], "police-desk") }
                let untouched = try await bids.getSale(.with { $0.saleID = sale.saleID }, metadata: buyer.auth).sale
                #expect(!untouched.hasHandoffPlace && !untouched.hasBuyerConfirmedAt)

                // The buyer confirms at the library, then changes to the police desk: the seller is told twice.
                let first = try await confirm(buyer.auth, "library-entrance")
                #expect(first.handoffPlace.placeID == "library-entrance" && first.state == .pendingHandoff)
                let changed = try await confirm(buyer.auth, "police-desk")
                #expect(changed.handoffPlace == places[1])
                let told = { (events: [Skiff_Chat_V1_FeedEvent]) in
                    events.filter { $0.hasBid && $0.bid.kind == .handoffConfirmed && $0.bid.saleID == sale.saleID }
                        .count
                }
                #expect(await sellerFeed.wait(milliseconds: 10_000) { told($0) == 2 })
                // The seller sees it, confirms without naming a place, and the sale completes there.
                let seen = try await bids.getSale(.with { $0.saleID = sale.saleID }, metadata: seller.auth).sale
                #expect(seen.handoffPlace == places[1])
                let done = try await confirm(seller.auth)
                #expect(done.state == .completed && done.handoffPlace == places[1])
                // Completed: the place is final; the same place or none still succeeds.
                let final = await expectStatus(.failedPrecondition) {
                    _ = try await confirm(seller.auth, "student-union")
                }
                #expect(final?.message.contains("completed") == true)
                #expect(try await confirm(buyer.auth, "police-desk").handoffPlace == places[1])
                let purchases = try await bids.listMyPurchases(.init(), metadata: buyer.auth).sales
                #expect(purchases.first?.handoffPlace == places[1])
                return sale.saleID
            }
            guard backend == .sqlite else { return }
            // After a restart with the place gone from the list, the sale keeps its copy.
            try await withApp(backend, path: path) { app, connection in
                let accounts = AccountsClient(transport: connection)
                let bids = BidsClient(transport: connection)
                #expect(try await bids.listHandoffPlaces(.init()).places.isEmpty)
                let session = try await accounts.logIn(DocumentedContractSocketTests.logIn("buy@campus.edu"))
                let auth: Metadata = ["authorization": .string("Bearer \(session.sessionToken)")]
                let sale = try await bids.getSale(.with { $0.saleID = saleID }, metadata: auth).sale
                #expect(sale.handoffPlace.placeID == "police-desk")
                #expect(sale.handoffPlace.name == "Campus Police, front desk (under camera)")
                #expect(sale.handoffPlace.hours == "Open 24 hours")
                // Naming the sale's own place, though no longer listed, keeps it; another unlisted id is unknown.
                let kept = try await bids.confirmHandoff(
                    .with {
                        $0.saleID = saleID
                        $0.handoffPlaceID = "police-desk"
                    },
                    metadata: auth
                ).sale
                #expect(kept.handoffPlace == sale.handoffPlace)
                await expectStatus(.notFound) {
                    _ = try await bids.confirmHandoff(
                        .with {
                            $0.saleID = saleID
                            $0.handoffPlaceID = "library-entrance"
                        },
                        metadata: auth
                    )
                }
            }
        }
    }

    @Test("Without a list, ListHandoffPlaces is empty and any place is NOT_FOUND", arguments: Backend.allCases)
    func noPlaces(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let bids = BidsClient(transport: connection)
            #expect(try await bids.listHandoffPlaces(.init()).places.isEmpty)
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "s@campus.edu", name: "S")
            let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "b@campus.edu", name: "B")
            let listing = try await ListingBidsSocketTests.newListing(listings, seller.auth)
            let bid = try await ListingBidsSocketTests.bid(bids, listing.listingID, 1_000, buyer.auth)
            let sale = try await bids.acceptBid(.with { $0.bidID = bid.bidID }, metadata: seller.auth).sale
            await expectStatus(.notFound) {
                _ = try await bids.confirmHandoff(
                    .with {
                        $0.saleID = sale.saleID
                        $0.handoffPlaceID = "library-entrance"
                    },
                    metadata: buyer.auth
                )
            }
        }
    }

    @Test("A bad places file stops the server from starting, saying what to fix")
    func badFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skiff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String)] = [
            ("not json", "not a JSON object"),
            (#"{"places": [{"id": "Bad Id", "name": "X", "latitude": 0, "longitude": 0}]}"#, "id must be"),
            (#"{"places": [{"id": "a", "name": "A", "latitude": 91, "longitude": 0}]}"#, "latitude"),
            (#"{"places": [{"id": "a", "name": " ", "latitude": 0, "longitude": 0}]}"#, "name must be"),
            (
                #"{"places": [{"id": "a", "name": "A", "latitude": 0, "longitude": 0},"#
                    + #"{"id": "a", "name": "B", "latitude": 0, "longitude": 0}]}"#,
                "used twice"
            ),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let file = directory.appendingPathComponent("places-\(index).json")
            try Data(text.utf8).write(to: file)
            do {
                _ = try ServerOptions.parse(["--handoff-places", file.path])
                Issue.record("accepted \(text)")
            } catch {
                let message = ServerOptions.message(for: error)
                #expect(message.contains("--handoff-places") && message.contains(expected), "\(message)")
            }
        }
        #expect(throws: (any Error).self) {
            _ = try ServerOptions.parse(["--handoff-places", directory.path + "/missing.json"])
        }
    }
}
