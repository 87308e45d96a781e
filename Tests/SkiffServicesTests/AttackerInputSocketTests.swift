import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// An attacker's inputs to the newer RPCs, over a real socket: every one is refused by its bound (or
/// answered within one page) before any work, and the server goes on serving.
@Suite("Attacker input over a socket")
struct AttackerInputSocketTests {
    @Test("Oversize ids, texts, tokens and filters are INVALID_ARGUMENT naming the field", arguments: Backend.allCases)
    func oversizeFields(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let lostFound = LostFoundClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let user = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "eve@campus.edu", name: "Eve")
            let huge = String(repeating: "x", count: 64 * 1024)
            func refused(_ field: String, _ call: () async throws -> Void) async {
                let error = await expectStatus(.invalidArgument) { try await call() }
                #expect(error?.message.contains(field) == true, "\(field): \(error?.message ?? "")")
            }
            await refused("image_id") {
                _ = try await listings.getImageOwner(.with { $0.imageID = huge }, metadata: serviceAuth)
            }
            await refused("seller_id") {
                _ = try await listings.withdrawSellerListings(.with { $0.sellerID = huge }, metadata: serviceAuth)
            }
            await refused("text") {
                _ = try await listings.addComment(
                    .with {
                        $0.listingID = "lst_x"
                        $0.text = huge
                    },
                    metadata: user.auth
                )
            }
            await refused("reply_to_comment_id") {
                _ = try await listings.addComment(
                    .with {
                        $0.listingID = "lst_x"
                        $0.text = "Hi"
                        $0.replyToCommentID = huge
                    },
                    metadata: user.auth
                )
            }
            await refused("page_token") {
                _ = try await listings.listComments(
                    .with {
                        $0.listingID = "lst_x"
                        $0.pageToken = huge
                    }
                )
            }
            await refused("handoff_place_id") {
                _ = try await bids.confirmHandoff(
                    .with {
                        $0.saleID = "sale_x"
                        $0.handoffPlaceID = huge
                    },
                    metadata: user.auth
                )
            }
            await refused("statuses") {
                _ = try await lostFound.listMyItems(
                    .with { $0.statuses = Array(repeating: .lost, count: 17) },
                    metadata: user.auth
                )
            }
            await refused("id_token") {
                _ = try await accounts.logInWithIdToken(
                    .with {
                        $0.idToken = huge
                        $0.nonce = "n"
                    }
                )
            }
            await refused("new_email") {
                _ = try await accounts.requestEmailChange(
                    .with {
                        $0.newEmail = huge
                        $0.currentPassword = "x"
                    },
                    metadata: user.auth
                )
            }
            await refused("token") { _ = try await accounts.confirmEmailChange(.with { $0.token = huge }) }
            await refused("current_password") {
                _ = try await accounts.deleteAccount(.with { $0.currentPassword = huge }, metadata: user.auth)
            }
            // The server still serves the caller.
            #expect(try await accounts.getMyAccount(.init(), metadata: user.auth).account.email == "eve@campus.edu")
        }
    }

    @Test(
        "A flood of one's own reports lists in pages of at most 100, each page a keyset step",
        arguments: Backend.allCases
    )
    func listMyItemsFlood(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.rateLimitScale = 0 }) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let lostFound = LostFoundClient(transport: connection)
            let user = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "hoarder@campus.edu", name: "H")
            for index in 0..<130 {
                _ = try await lostFound.reportItem(
                    .with { $0.item = LostFoundServiceTests.newItem(.lost, "Umbrella \(index)") },
                    metadata: user.auth
                )
            }
            var seen: [String] = []
            var token = ""
            var pages = 0
            repeat {
                let page = try await lostFound.listMyItems(
                    .with {
                        $0.pageSize = 10_000
                        $0.pageToken = token
                    },
                    metadata: user.auth
                )
                #expect(page.items.count <= 100)
                seen += page.items.map(\.item.itemID)
                token = page.nextPageToken
                pages += 1
            } while !token.isEmpty && pages < 10
            #expect(seen.count == 130 && Set(seen).count == 130 && pages == 2)
        }
    }

    @Test("BeginExternalLogIn from one address is limited to 30 a minute", arguments: [Backend.memory])
    func nonceFlood(_ backend: Backend) async throws {
        let provider = try TestIdentityProvider()
        defer { provider.remove() }
        try await withApp(backend, extraArguments: provider.arguments) { _, connection in
            let accounts = AccountsClient(transport: connection)
            for _ in 0..<30 { _ = try await accounts.beginExternalLogIn(.init()) }
            let limited = await expectStatus(.resourceExhausted) { _ = try await accounts.beginExternalLogIn(.init()) }
            #expect(Int(limited?.metadata.first("retry-after") ?? "") ?? 0 > 0)
        }
    }
}
