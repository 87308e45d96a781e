import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 11: change my e-mail address, and delete my account — through the real server over a socket on
/// both backends.
@Suite("E-mail change and account deletion over a socket")
struct AccountDeletionSocketTests {
    static let password = DocumentedContractSocketTests.password

    @Test(
        "RequestEmailChange mails a link to the new address and tells the old; ConfirmEmailChange moves the log-in",
        arguments: Backend.allCases
    )
    func changeEmail(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let mover = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "old@campus.edu", name: "Mover")
            _ = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "taken@campus.edu", name: "Taken")
            func request(_ email: String, _ password: String = Self.password) async throws {
                _ = try await accounts.requestEmailChange(
                    .with {
                        $0.newEmail = email
                        $0.currentPassword = password
                    },
                    metadata: mover.auth
                )
            }
            await expectStatus(.permissionDenied) { try await request("new@campus.edu", "wrong password!") }
            await expectStatus(.invalidArgument) { try await request("not an address") }
            await expectStatus(.invalidArgument) { try await request("OLD@campus.edu") }
            await expectStatus(.unauthenticated) {
                _ = try await accounts.requestEmailChange(.with { $0.newEmail = "x@campus.edu" })
            }
            await expectStatus(.invalidArgument) { try await request(String(repeating: "a", count: 250) + "@c.edu") }

            // A taken address: the same answer; its owner is told, no link is sent.
            try await request("taken@campus.edu")
            try await request("new@campus.edu")
            let label = "E-mail change token"
            #expect(await mailArrives(in: app.mailer, to: "new@campus.edu", containing: label))
            #expect(await mailArrives(in: app.mailer, to: "taken@campus.edu", containing: "already has an account"))
            #expect(app.mailer.messages(to: "taken@campus.edu").allSatisfy { !$0.body.contains(label) })
            #expect(await mailArrives(in: app.mailer, to: "old@campus.edu", containing: "n…@campus.edu"))
            let link = try app.mailer.token(to: "new@campus.edu", label: label)

            // Nothing changed yet.
            #expect(try await accounts.getMyAccount(.init(), metadata: mover.auth).account.email == "old@campus.edu")
            let changed = try await accounts.confirmEmailChange(.with { $0.token = link }).account
            #expect(changed.email == "new@campus.edu" && changed.userID == mover.id)
            // The session stays; log-ins use the new address; the old one is told.
            #expect(try await accounts.getMyAccount(.init(), metadata: mover.auth).account.email == "new@campus.edu")
            _ = try await accounts.logIn(DocumentedContractSocketTests.logIn("new@campus.edu"))
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(DocumentedContractSocketTests.logIn("old@campus.edu"))
            }
            #expect(await mailArrives(in: app.mailer, to: "old@campus.edu", containing: "now logs in with"))
            // A link works once.
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.confirmEmailChange(.with { $0.token = link })
            }
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.confirmEmailChange(.with { $0.token = "nope" })
            }
            await expectStatus(.invalidArgument) { _ = try await accounts.confirmEmailChange(.init()) }
        }
    }

    @Test(
        "DeleteAccount withdraws the listings (bidders told), the bids (sellers told), erases the account; chats stay",
        arguments: Backend.allCases
    )
    func deleteAccount(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let chat = ChatClient(transport: connection)
            let leaver = try await signUpAndLogIn(
                accounts,
                mailer: app.mailer,
                email: "leaver@campus.edu",
                name: "Leaver"
            )
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let annFeed = FeedLog()
            let feed = Task {
                try await chat.subscribeFeed(.init(), metadata: ann.auth) { response in
                    for try await event in response.messages { annFeed.append(event) }
                }
            }
            defer { feed.cancel() }
            // The leaver sells a lamp Ann bids on, and bids on Ann's chair; they chatted.
            let lamp = try await ListingBidsSocketTests.newListing(listings, leaver.auth)
            let annBid = try await ListingBidsSocketTests.bid(bids, lamp.listingID, 1_000, ann.auth)
            let chair = try await ListingBidsSocketTests.newListing(listings, ann.auth, title: "Chair")
            let leaverBid = try await ListingBidsSocketTests.bid(bids, chair.listingID, 1_200, leaver.auth)
            let sent = try await chat.sendMessage(
                .with {
                    $0.recipientID = ann.id
                    $0.text = "Is the chair sturdy?"
                },
                metadata: leaver.auth
            ).message

            // The leaver also has a Connect stream open, which outlives the deletion.
            let leaverStream = StreamLog<Skiff_Chat_V1_ConnectResponse>()
            let (outgoing, send) = AsyncStream.makeStream(of: Skiff_Chat_V1_ConnectRequest.self)
            let leaverChat = Task {
                try await chat.connect(metadata: leaver.auth) { writer in
                    try await writer.write(.with { $0.subscribe = .with { $0.fromLatest = true } })
                    for await request in outgoing { try await writer.write(request) }
                } onResponse: { response in
                    for try await message in response.messages { leaverStream.append(message) }
                }
            }
            defer { leaverChat.cancel() }

            await expectStatus(.permissionDenied) {
                _ = try await accounts.deleteAccount(
                    .with { $0.currentPassword = "wrong password!" },
                    metadata: leaver.auth
                )
            }
            #expect(try await listings.getListing(.with { $0.listingID = lamp.listingID }).listing.status == .active)
            let deleted = try await accounts.deleteAccount(
                .with { $0.currentPassword = Self.password },
                metadata: leaver.auth
            )
            #expect(deleted.withdrawnListings == 1 && deleted.withdrawnBids == 1)

            // The session ended, the address is free, and the profile shows only "Deleted user".
            await expectStatus(.unauthenticated) { _ = try await accounts.getMyAccount(.init(), metadata: leaver.auth) }
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(DocumentedContractSocketTests.logIn("leaver@campus.edu"))
            }
            let profile = try await accounts.getProfile(.with { $0.userID = leaver.id }).profile
            #expect(profile.deleted && profile.displayName == "Deleted user" && profile.bio.isEmpty)
            let search = try await accounts.searchUsers(.with { $0.query = "Leaver" }, metadata: ann.auth)
            #expect(search.profiles.isEmpty)

            // Ann's bid on the lamp was rejected (told on her feed), the leaver's bid on her chair withdrawn (told too).
            let kinds = { (events: [Skiff_Chat_V1_FeedEvent]) in
                Set(events.filter(\.hasBid).map { "\($0.bid.bidID) \($0.bid.kind)" })
            }
            #expect(
                await annFeed.wait(milliseconds: 10_000) {
                    kinds($0).isSuperset(of: ["\(annBid.bidID) rejected", "\(leaverBid.bidID) withdrawn"])
                }
            )
            // The lamp is withdrawn (hidden from everyone but its seller).
            await expectStatus(.notFound) {
                _ = try await listings.getListing(.with { $0.listingID = lamp.listingID }, metadata: ann.auth)
            }
            let mine = try await bids.listMyBids(.init(), metadata: ann.auth).bids
            #expect(mine.first { $0.bidID == annBid.bidID }?.state == .rejected)
            let onChair = try await bids.listBidsForListing(
                .with { $0.listingID = chair.listingID },
                metadata: ann.auth
            )
            #expect(onChair.bids.first { $0.bidID == leaverBid.bidID }?.state == .withdrawn)

            // The open Connect stream sends nothing more for a deleted account.
            send.yield(
                .with {
                    $0.requestID = "after-deletion"
                    $0.sendMessage = .with {
                        $0.recipientID = ann.id
                        $0.text = "Still here?"
                    }
                }
            )
            #expect(
                await leaverStream.wait(milliseconds: 10_000) { responses in
                    responses.contains {
                        $0.requestFailed.requestID == "after-deletion" && $0.requestFailed.code == 16
                    }
                }
            )
            // Ann still has the conversation and its messages; she cannot write to a deleted user.
            let history = try await chat.listMessages(
                .with { $0.conversationID = sent.conversationID },
                metadata: ann.auth
            )
            #expect(history.messages.map(\.text) == ["Is the chair sturdy?"])
            await expectStatus(.notFound) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = leaver.id
                        $0.text = "Hello?"
                    },
                    metadata: ann.auth
                )
            }
            // The address can sign up again, as a new user.
            let again = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "leaver@campus.edu", name: "Back")
            #expect(again.id != leaver.id)
        }
    }

    @Test(
        "WithdrawSellerListings and WithdrawBidderBids are for services only, bounded, and repeatable",
        arguments: Backend.allCases
    )
    func serviceOnly(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.rateLimitScale = 0 }) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let bids = BidsClient(transport: connection)
            let user = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "u@campus.edu", name: "U")
            let listingsRequest = Skiff_Listings_V1_WithdrawSellerListingsRequest.with { $0.sellerID = user.id }
            let bidsRequest = Skiff_Bids_V1_WithdrawBidderBidsRequest.with { $0.bidderID = user.id }
            await expectStatus(.unauthenticated) { _ = try await listings.withdrawSellerListings(listingsRequest) }
            await expectStatus(.permissionDenied) {
                _ = try await listings.withdrawSellerListings(listingsRequest, metadata: user.auth)
            }
            await expectStatus(.unauthenticated) { _ = try await bids.withdrawBidderBids(bidsRequest) }
            await expectStatus(.permissionDenied) {
                _ = try await bids.withdrawBidderBids(bidsRequest, metadata: user.auth)
            }
            let long = String(repeating: "u", count: 129)
            await expectStatus(.invalidArgument) {
                _ = try await listings.withdrawSellerListings(.with { $0.sellerID = long }, metadata: serviceAuth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await bids.withdrawBidderBids(.with { $0.bidderID = long }, metadata: serviceAuth)
            }
            // A seller with more listings than one page (100): all are withdrawn, then nothing more.
            for index in 0..<105 {
                _ = try await ListingBidsSocketTests.newListing(listings, user.auth, title: "Item \(index)")
            }
            let first = try await listings.withdrawSellerListings(listingsRequest, metadata: serviceAuth)
            #expect(first.withdrawnListingIds.count == 105)
            #expect(
                try await listings.withdrawSellerListings(listingsRequest, metadata: serviceAuth).withdrawnListingIds
                    .isEmpty
            )
            #expect(try await bids.withdrawBidderBids(bidsRequest, metadata: serviceAuth).withdrawnBids.isEmpty)
        }
    }

}
