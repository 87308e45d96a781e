import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffPostgres
import SkiffTesting
import SwiftProtobuf
import Testing

/// Several `skiff-server` processes on one PostgreSQL database serve the same users (issue 15).
@Suite("Several servers on one PostgreSQL database")
struct PostgresServersTests {
    @Test("A session made on one server works on the other; what either changes, both see; a log-out ends it on both")
    func sharedAccounts() async throws {
        try await withTwoServers(placing: ["accounts"]) { storage, a, b in
            try await Self.seedAccount(storage, email: "alice@campus.edu", name: "Alice")
            try await Self.exercise(on: AccountsClient(transport: a), and: AccountsClient(transport: b))
        }
    }

    @Test("A feed subscriber on one server gets, in order, with no gap or duplicate, what is sent through either")
    func liveFeedAcrossServers() async throws {
        try await withTwoServers(placing: ["accounts", "chat"]) { storage, a, b in
            let aliceID = try await Self.seedAccount(storage, email: "alice@campus.edu", name: "Alice")
            let bobID = try await Self.seedAccount(storage, email: "bob@campus.edu", name: "Bob")
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

    /// Runs `body` with a fresh database (its storage opened, to seed it) and two servers on it, the
    /// `services` on PostgreSQL and the rest in memory, and a connection to each. Both servers are stopped
    /// afterwards and must have shut down cleanly.
    private func withTwoServers(
        placing services: [String],
        _ body: (PostgresStorage, any ClientTransport, any ClientTransport) async throws -> Void
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
                        try await body(storage, a, b)
                    }
                }
            } catch {
                for server in servers { server.kill() }
                await storage.close()
                throw error
            }
            await storage.close()
            for server in servers { #expect(server.stop() == 0) }
        }
    }

    /// A verified account with the password "shared password", straight in the database (the servers'
    /// mail outboxes are in other processes); its id.
    @discardableResult
    private static func seedAccount(_ storage: PostgresStorage, email: String, name: String) async throws -> String {
        let account = try await storage.accountsStore().createAccount(
            Account(
                id: EntityID.make(.account),
                email: email,
                displayName: name,
                passwordHash: try await PasswordHasher(rounds: 1_000).hash("shared password"),
                verified: true,
                createdAt: Date()
            )
        )
        return account.id
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
