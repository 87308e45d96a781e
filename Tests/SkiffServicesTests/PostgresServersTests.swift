import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffChat
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffPostgres
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Several `skiff-server` processes on one PostgreSQL database serve the same users (issue 15).
@Suite("Several servers on one PostgreSQL database")
struct PostgresServersTests {
    @Test("A session made on one server works on the other; what either changes, both see; a log-out ends it on both")
    func sharedAccounts() async throws {
        try await withTwoServers(placing: ["accounts"]) { storage, a, b in
            try await seedVerifiedAccount(storage, email: "alice@campus.edu", name: "Alice")
            try await Self.exercise(on: AccountsClient(transport: a), and: AccountsClient(transport: b))
        }
    }

    @Test("A feed subscriber on one server gets, in order, with no gap or duplicate, what is sent through either")
    func liveFeedAcrossServers() async throws {
        try await withTwoServers(placing: ["accounts", "chat"]) { storage, a, b in
            let aliceID = try await seedVerifiedAccount(storage, email: "alice@campus.edu", name: "Alice")
            let bobID = try await seedVerifiedAccount(storage, email: "bob@campus.edu", name: "Bob")
            let alice = try await Self.logIn(AccountsClient(transport: a), "alice@campus.edu")
            let bob = try await Self.logIn(AccountsClient(transport: b), "bob@campus.edu")
            let chatOnA = ChatClient(transport: a)
            let chatOnB = ChatClient(transport: b)

            // Alice follows her feed on the first server, live only (nothing to replay yet).
            let feed = FeedLog()
            let following = Task {
                try await chatOnA.subscribeFeed(.with { $0.fromLatest = true }, metadata: alice) { response in
                    for try await event in response.messages { feed.append(event) }
                }
            }
            defer { following.cancel() }
            // A first message through the first server shows the subscription is live there.
            _ = try await chatOnA.sendMessage(
                .with {
                    $0.recipientID = aliceID
                    $0.text = "hello from the first server"
                },
                metadata: bob
            )
            #expect(await feed.wait(milliseconds: 5_000) { $0.count == 1 })

            // Messages through the second server reach her on the first, one by one; messages through
            // the first in between are neither lost nor repeated (each server hears its own commits
            // twice: in process and through PostgreSQL).
            for index in 1...12 {
                let chat = index % 3 == 0 ? chatOnA : chatOnB
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = aliceID
                        $0.text = "message \(index)"
                    },
                    metadata: bob
                )
                #expect(
                    await feed.wait(milliseconds: 5_000) { $0.count == index + 1 },
                    "message \(index) did not reach the subscriber on the other server"
                )
            }
            try await Task.sleep(for: .milliseconds(200))  // room for a duplicate to show up
            let events = feed.all
            #expect(events.map(\.sequence) == Array(1...13))
            #expect(events.dropFirst().map(\.message.text) == (1...12).map { "message \($0)" })
            #expect(events.allSatisfy { $0.message.senderID == bobID })
        }
    }

    @Test(
        "Every service on one database: a bid through one server reaches the seller's feed on the other; racing acceptances sell once"
    )
    func marketplaceAcrossServers() async throws {
        try await withTwoServers(placing: StorageSelection.services) { storage, a, b in
            try await seedVerifiedAccount(storage, email: "seller@campus.edu", name: "Seller")
            let sellerOnA = try await Self.logIn(AccountsClient(transport: a), "seller@campus.edu")
            var buyers: [Metadata] = []
            for index in 0..<2 {
                try await seedVerifiedAccount(storage, email: "buyer\(index)@campus.edu", name: "Buyer \(index)")
                buyers.append(try await Self.logIn(AccountsClient(transport: b), "buyer\(index)@campus.edu"))
            }
            let feed = FeedLog()
            let following = Task {
                try await ChatClient(transport: a).subscribeFeed(.with { $0.fromLatest = true }, metadata: sellerOnA) {
                    response in
                    for try await event in response.messages { feed.append(event) }
                }
            }
            defer { following.cancel() }
            try await Task.sleep(for: .milliseconds(200))  // the subscription is in place

            // The listing is made through one server, found and bid on through the other.
            let listing = try await Skiff_Listings_V1_Listings.Client(transport: a).createListing(
                .with {
                    $0.listing.title = "Desk lamp"
                    $0.listing.priceCents = 1_500
                    $0.listing.category = .furniture
                    $0.listing.condition = .lightlyUsed
                    $0.listing.biddingEnabled = true
                    $0.listing.location.zipCode = "37235"
                },
                metadata: sellerOnA
            ).listing
            let found = try await Skiff_Listings_V1_Listings.Client(transport: b).searchListings(
                .with { $0.query = "lamp" }
            )
            #expect(found.results.map { $0.listing.listingID } == [listing.listingID])
            let bidsOnB = Skiff_Bids_V1_Bids.Client(transport: b)
            var bidIDs: [String] = []
            for (index, buyer) in buyers.enumerated() {
                bidIDs.append(
                    try await bidsOnB.placeBid(
                        .with {
                            $0.listingID = listing.listingID
                            $0.amountCents = 1_500 + Int64(index) * 100
                        },
                        metadata: buyer
                    ).bid.bidID
                )
            }
            #expect(
                await feed.wait(milliseconds: 5_000) { events in
                    Set(events.filter { $0.bid.kind == .placed }.map(\.bid.bidID)) == Set(bidIDs)
                },
                "the bids placed through the other server did not reach the seller's feed"
            )

            // The seller accepts both bids at once, one through each server: one sale.
            let sellerOnB = try await Self.logIn(AccountsClient(transport: b), "seller@campus.edu")
            let (firstBid, secondBid) = (bidIDs[0], bidIDs[1])
            async let first = Self.outcome {
                try await Skiff_Bids_V1_Bids.Client(transport: a).acceptBid(
                    .with { $0.bidID = firstBid },
                    metadata: sellerOnA
                )
            }
            async let second = Self.outcome {
                try await bidsOnB.acceptBid(.with { $0.bidID = secondBid }, metadata: sellerOnB)
            }
            let outcomes = await [first, second]
            let sales = outcomes.compactMap { try? $0.get().sale.saleID }
            #expect(sales.count == 1, "\(outcomes)")
            // The other is refused as the contract says: the listing is sold (FAILED_PRECONDITION), or an
            // acceptance of it is under way (ABORTED).
            for case .failure(let error) in outcomes {
                #expect([.failedPrecondition, .aborted].contains((error as? RPCError)?.code), "\(error)")
            }
        }
    }

    @Test("kill -9 of one server under load loses no acknowledged write, and the other serves throughout")
    func killOneUnderLoad() async throws {
        try await withTwoServerProcesses(placing: ["accounts", "chat"]) { storage, servers, a, b in
            let aliceID = try await seedVerifiedAccount(storage, email: "alice@campus.edu", name: "Alice")
            try await seedVerifiedAccount(storage, email: "bob@campus.edu", name: "Bob")
            let bob = try await Self.logIn(AccountsClient(transport: b), "bob@campus.edu")
            let ledger = LoadLedger()
            await withTaskGroup(of: Void.self) { group in
                for (serverIndex, connection) in [a, b].enumerated() {
                    for worker in 0..<3 {
                        group.addTask {
                            let accounts = AccountsClient(transport: connection)
                            let chat = ChatClient(transport: connection)
                            for i in 0..<2_000 {
                                do {
                                    let email = "s\(serverIndex)w\(worker)n\(i)@campus.edu"
                                    _ = try await accounts.signUp(
                                        .with {
                                            $0.email = email
                                            $0.password = "durable password"
                                            $0.displayName = "User \(i)"
                                        }
                                    )
                                    ledger.emails.withLock { $0.append(email) }
                                    let text = "s\(serverIndex) w\(worker) #\(i)"
                                    _ = try await chat.sendMessage(
                                        .with {
                                            $0.recipientID = aliceID
                                            $0.text = text
                                        },
                                        metadata: bob
                                    )
                                    ledger.messages.withLock { $0.append(text) }
                                    if serverIndex == 1, ledger.killed.withLock({ $0 }) {
                                        let calls = ledger.callsOnSecondAfterKill.withLock {
                                            $0 += 1
                                            return $0
                                        }
                                        if calls >= 30 { return }
                                    }
                                } catch {
                                    if serverIndex == 1 { ledger.failuresOnSecond.withLock { $0 += 1 } }
                                    return  // the first server died: this worker stops
                                }
                            }
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(600))
                servers[0].kill()
                ledger.killed.withLock { $0 = true }
            }
            #expect(ledger.failuresOnSecond.withLock { $0 } == 0, "the surviving server failed calls")
            #expect(ledger.callsOnSecondAfterKill.withLock { $0 } >= 30, "the surviving server stopped serving")
            let emails = ledger.emails.withLock { $0 }
            let texts = ledger.messages.withLock { $0 }
            #expect(emails.count > 20, "the load produced too few writes to prove anything")

            // Every acknowledged sign-up exists (right password, not verified: FAILED_PRECONDITION; a
            // missing account would be UNAUTHENTICATED), asked of the surviving server.
            let missing = await missingSignUps(emails, password: "durable password", on: AccountsClient(transport: b))
            #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(5))")
            // Every acknowledged message is on Alice's feed, once.
            let events = try await storage.chatStore().feedEvents(userID: aliceID, after: 0, limit: 100_000)
            let sequences = events.map { $0.sequence }
            let gapless = (0..<events.count).map { Int64($0) + 1 }
            #expect(sequences == gapless)
            let stored = events.compactMap { event -> String? in
                if case .message(let message) = event.payload { return message.text }
                return nil
            }
            #expect(Set(texts).isSubset(of: Set(stored)))
            #expect(Set(stored).count == stored.count)
        }
    }

    @Test(
        "The Campus Closet story with accounts and chat in one process, listings and bids in another, on one database"
    )
    func storyWithServicesApart() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            let ports = (try freeLoopbackPort(), try freeLoopbackPort())
            func arguments(running services: String, othersOn otherPort: Int, calling others: [String]) -> [String] {
                [
                    "--services", services, "--storage", "\(location)", "--service-token",
                    testServiceToken, "--password-hash-rounds", "1000", "--rate-limit-scale", "0",
                    // The verification e-mails are read from the log (the mailer logs bodies at debug).
                    "--log-level", "debug",
                ] + others.flatMap { ["--upstream", "\($0)=127.0.0.1:\(otherPort)"] }
            }
            let first = try ServerProcess(
                arguments: arguments(
                    running: "accounts,chat,lostfound,bucketlist",
                    othersOn: ports.1,
                    calling: ["listings", "bids"]
                ),
                port: ports.0
            )
            defer { if first.isRunning { first.kill() } }
            let second = try ServerProcess(
                arguments: arguments(running: "listings,bids", othersOn: ports.0, calling: ["accounts", "chat"]),
                port: ports.1
            )
            defer { if second.isRunning { second.kill() } }
            try await withClientConnection(target: .host("127.0.0.1", port: first.port)) { a in
                try await withClientConnection(target: .host("127.0.0.1", port: second.port)) { b in
                    let accounts = AccountsClient(transport: a)
                    try await MarketplaceStoryTests.campusClosetStory(
                        accounts: accounts,
                        listings: ListingsClient(transport: b),
                        bids: Skiff_Bids_V1_Bids.Client(transport: b),
                        chat: ChatClient(transport: a)
                    ) { email, name in
                        try await Self.signUpThroughLog(accounts, server: first, email: email, name: name)
                    }
                }
            }
            #expect(second.stop() == 0)
            #expect(first.stop() == 0)
        }
    }

    /// Signs a user up, verifies the address with the token the server's log shows (its mailer logs
    /// bodies at debug level) and logs in.
    private static func signUpThroughLog(
        _ accounts: AccountsClient,
        server: ServerProcess,
        email: String,
        name: String
    ) async throws -> (id: String, auth: Metadata) {
        func tokens() -> [String] {
            let log = (try? String(contentsOf: server.logFile, encoding: .utf8)) ?? ""
            return log.matches(of: /Verification token: ([A-Za-z0-9_\-]+)/).map { String($0.output.1) }
        }
        let before = tokens().count
        _ = try await accounts.signUp(
            .with {
                $0.email = email
                $0.password = "correct horse battery"
                $0.displayName = name
            }
        )
        var token: String?
        for _ in 0..<500 where token == nil {
            let now = tokens()
            if now.count > before { token = now.last } else { try await Task.sleep(for: .milliseconds(10)) }
        }
        _ = try await accounts.verifyEmail(.with { $0.token = try #require(token, "no verification e-mail logged") })
        let session = try await accounts.logIn(
            .with {
                $0.email = email
                $0.password = "correct horse battery"
            }
        )
        return (session.userID, ["authorization": "Bearer \(session.sessionToken)"])
    }

    /// Runs `body` with a fresh database (its storage opened, to seed it) and two servers on it, the
    /// `services` on PostgreSQL and the rest in memory, and a connection to each. The servers still
    /// running afterwards are stopped and must shut down cleanly.
    private func withTwoServers(
        placing services: [String],
        _ body: (PostgresStorage, any ClientTransport, any ClientTransport) async throws -> Void
    ) async throws {
        try await withTwoServerProcesses(placing: services) { storage, _, a, b in try await body(storage, a, b) }
    }

    private func withTwoServerProcesses(
        placing services: [String],
        _ body: (PostgresStorage, [ServerProcess], any ClientTransport, any ClientTransport) async throws -> Void
    ) async throws {
        try await TestPostgres.withDatabaseLocation { location in
            let storage = try await PostgresStorage.open(location)
            let arguments =
                [
                    "--storage", "memory", "--password-hash-rounds", "1000", "--rate-limit-scale", "0", "--log-level",
                    "info",
                ]
                + services.flatMap { ["--storage", "\($0)=\(location)"] }
            var servers: [ServerProcess] = []
            do {
                servers.append(try ServerProcess(arguments: arguments))
                servers.append(try ServerProcess(arguments: arguments))
                try await withClientConnection(target: .host("127.0.0.1", port: servers[0].port)) { a in
                    try await withClientConnection(target: .host("127.0.0.1", port: servers[1].port)) { b in
                        try await body(storage, servers, a, b)
                    }
                }
            } catch {
                for server in servers { server.kill() }
                await storage.close()
                throw error
            }
            await storage.close()
            for server in servers where server.isRunning { #expect(server.stop() == 0) }
        }
    }

    /// What `body` returned or threw.
    private static func outcome<T: Sendable>(_ body: @Sendable () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    private static func logIn(_ accounts: AccountsClient, _ email: String) async throws -> Metadata {
        let session = try await accounts.logIn(
            .with {
                $0.email = email
                $0.password = "shared password"
            }
        )
        return ["authorization": "Bearer \(session.sessionToken)"]
    }

    private static func exercise(on a: AccountsClient, and b: AccountsClient) async throws {
        let auth = try await logIn(a, "alice@campus.edu")
        #expect(try await b.getMyAccount(.init(), metadata: auth).account.email == "alice@campus.edu")

        _ = try await b.updateProfile(
            .with {
                $0.account.bio = "Written through the second server"
                $0.updateMask = Google_Protobuf_FieldMask(protoPaths: ["bio"])
            },
            metadata: auth
        )
        #expect(try await a.getMyAccount(.init(), metadata: auth).account.bio == "Written through the second server")

        // A sign-up on one server is known to the other: the right password on an unverified account is
        // FAILED_PRECONDITION there (an unknown account would be UNAUTHENTICATED).
        _ = try await b.signUp(
            .with {
                $0.email = "bob@campus.edu"
                $0.password = "bobs password"
                $0.displayName = "Bob"
            }
        )
        await expectStatus(.failedPrecondition) {
            _ = try await a.logIn(
                .with {
                    $0.email = "bob@campus.edu"
                    $0.password = "bobs password"
                }
            )
        }
        _ = try await b.logOut(.init(), metadata: auth)
        await expectStatus(.unauthenticated) { _ = try await a.getMyAccount(.init(), metadata: auth) }
    }
}

/// What a load against two servers saw: the writes acknowledged, and how the surviving server fared.
final class LoadLedger: Sendable {
    let emails = Mutex<[String]>([])
    let messages = Mutex<[String]>([])
    let killed = Mutex(false)
    let failuresOnSecond = Mutex(0)
    let callsOnSecondAfterKill = Mutex(0)
}
