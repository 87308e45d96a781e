import ArgumentParser
import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffServerApp
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Testing

/// Services deployed apart (`--services`, `--upstream`): two applications, each running some of the
/// services and calling the others' over skiff/1 with the shared service token (issue 15).
@Suite("Services deployed apart")
struct SplitServicesTests {
    /// How the six services are split over two processes: the first runs these, the second the rest.
    static let splits: [Set<CampusService>] = [
        [.accounts, .chat, .lostfound, .bucketlist],
        [.accounts],
        [.listings, .chat],
        [.bids],
    ]

    @Test(
        "The Campus Closet story behaves the same wherever each service runs",
        arguments: Self.splits.map { Split(first: $0) }
    )
    func storyAcrossProcesses(_ split: Split) async throws {
        try await withSplitApplications(split) { first, second in
            let accountsSide = split.first.contains(.accounts) ? first : second
            let accounts = AccountsClient(transport: accountsSide.transport)
            try await MarketplaceStoryTests.campusClosetStory(
                accounts: accounts,
                listings: ListingsClient(transport: split.side(of: .listings, first, second).transport),
                bids: BidsClient(transport: split.side(of: .bids, first, second).transport),
                chat: Skiff_Chat_V1_Chat.Client(transport: split.side(of: .chat, first, second).transport)
            ) { email, name in
                try await signUpAndLogIn(accounts, mailer: accountsSide.app.mailer, email: email, name: name)
            }
        }
    }

    @Test("A process serves only its services; sessions made in the other are checked there, a log-out at once")
    func sessionsAndHealthAcrossProcesses() async throws {
        let split = Split(first: [.accounts, .chat, .lostfound, .bucketlist])
        try await withSplitApplications(split) { first, second in
            let user = try await first.signedInUser(email: "ada@campus.edu", name: "Ada")
            let listingsOnSecond = ListingsClient(transport: second.transport)

            // The second process knows the session through Accounts in the first.
            let listing = try await listingsOnSecond.createListing(
                .with {
                    $0.listing.title = "Desk lamp"
                    $0.listing.priceCents = 1_500
                    $0.listing.category = .furniture
                    $0.listing.condition = .lightlyUsed
                    $0.listing.location.zipCode = "37235"
                },
                metadata: user.auth
            ).listing
            #expect(listing.sellerID == user.id)
            // An unknown token is refused there as here, and so is a token no session could have.
            for token in ["not-a-session", String(repeating: "x", count: 2_000), "two words"] {
                await expectStatus(.unauthenticated) {
                    _ = try await listingsOnSecond.createListing(
                        .with { $0.listing.title = "Chair" },
                        metadata: ["authorization": "Bearer \(token)"]
                    )
                }
            }
            // An unknown token is refused there as here.
            await expectStatus(.unauthenticated) {
                _ = try await listingsOnSecond.createListing(
                    .with { $0.listing.title = "Chair" },
                    metadata: ["authorization": "Bearer not-a-session"]
                )
            }

            // Each process serves, and reports healthy, only what it runs.
            let health = Skiff_Health_V1_Health.Client(transport: second.transport)
            let listingsHealth = try await health.check(.with { $0.service = "skiff.listings.v1.Listings" })
            #expect(listingsHealth.status == .serving)
            await expectStatus(.notFound) {
                _ = try await health.check(.with { $0.service = "skiff.accounts.v1.Accounts" })
            }
            await expectStatus(.unimplemented) {
                _ = try await AccountsClient(transport: second.transport).getMyAccount(.init(), metadata: user.auth)
            }

            // A log-out in the first process ends the session in the second at once.
            _ = try await AccountsClient(transport: first.transport).logOut(.init(), metadata: user.auth)
            await expectStatus(.unauthenticated) {
                _ = try await listingsOnSecond.createListing(
                    .with { $0.listing.title = "Chair" },
                    metadata: user.auth
                )
            }
        }
    }

    @Test("With the other process gone, calls that need it fail with UNAVAILABLE, and the rest still work")
    func upstreamDown() async throws {
        let firstPort = try freeLoopbackPort()
        var second = ApplicationConfiguration.forTests()
        second.deployment = ServiceDeployment(
            local: [.listings, .bids],
            upstreams: [
                .accounts: [.host("127.0.0.1", port: firstPort)], .chat: [.host("127.0.0.1", port: firstPort)],
            ]
        )
        try await withTestApplication(second) { test in
            let listings = ListingsClient(transport: test.transport)
            // A guest's search needs nobody else.
            let found = try await listings.searchListings(.with { $0.query = "lamp" })
            #expect(found.results.isEmpty)
            // A signed-in call needs Accounts to check the session: UNAVAILABLE, saying to retry.
            let error = await expectStatus(.unavailable) {
                _ = try await listings.createListing(
                    .with { $0.listing.title = "Chair" },
                    metadata: ["authorization": "Bearer some-session-token"]
                )
            }
            #expect(error?.message.contains("retry") == true, "\(String(describing: error?.message))")
        }
    }

    @Test("A deployment that cannot work is refused before anything opens, saying what to add or remove")
    func invalidDeployments() throws {
        func refusal(_ services: String?, _ upstreams: [String], token: String? = testServiceToken) -> String? {
            do {
                try ServiceDeployment.parse(services: services, upstreams: upstreams).validate(serviceToken: token)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal(nil, []) == nil)
        #expect(refusal(nil, [], token: nil) == nil)
        #expect(refusal("accounts,chat", []).map { $0.contains("--upstream listings=HOST:PORT") } == true)
        #expect(refusal("accounts,chat", ["listings=10.0.0.2:7700"])?.contains("bids") == true)
        #expect(refusal("accounts,chat", ["listings=10.0.0.2:7700", "bids=10.0.0.2:7700"]) == nil)
        #expect(
            refusal("accounts,chat", ["listings=10.0.0.2:7700", "bids=10.0.0.2:7700"], token: nil)?
                .contains("--service-token") == true
        )
        #expect(refusal("accounts", ["accounts=10.0.0.2:7700"])?.contains("remove their --upstream") == true)
        #expect(refusal("payments", [])?.contains("not a service") == true)
        #expect(refusal("chat,chat", [])?.contains("twice") == true)
        #expect(refusal("", [])?.contains("not a service") == true)
        #expect(refusal(nil, ["listings"])?.contains("SERVICE=HOST:PORT") == true)
        #expect(refusal(nil, ["listings=10.0.0.2"])?.contains("not HOST:PORT") == true)
        #expect(refusal(nil, ["listings=10.0.0.2:0"])?.contains("not HOST:PORT") == true)
        #expect(refusal(nil, ["listings=:7700"])?.contains("host") == true)
        #expect(refusal(nil, ["listings=fe80::1:7700"])?.contains("brackets") == true)

        // Several addresses, given at once or in turn, add up; IPv6 in brackets.
        let deployment = try ServiceDeployment.parse(
            services: "bids",
            upstreams: ["listings=10.0.0.2:7700,10.0.0.3:7700", "listings=[::1]:7701", "accounts=a.local:1"]
        )
        #expect(
            deployment.upstreams[.listings]
                == [.host("10.0.0.2", port: 7700), .host("10.0.0.3", port: 7700), .host("::1", port: 7701)]
        )
        #expect(deployment.remoteDependencies == [.accounts, .listings, .chat])

        // skiff-server refuses the same on its command line.
        #expect(throws: (any Error).self) {
            _ = try ServerOptions.parse(["--services", "accounts,chat", "--service-token", testServiceToken])
        }
        #expect(throws: Never.self) {
            _ = try ServerOptions.parse([
                "--services", "accounts,chat", "--upstream", "listings=127.0.0.1:7701", "--upstream",
                "bids=127.0.0.1:7701", "--service-token", testServiceToken,
            ])
        }
    }
}

/// Which services the first of two processes runs; the second runs the rest.
struct Split: Sendable, CustomTestStringConvertible {
    let first: Set<CampusService>
    var second: Set<CampusService> { Set(CampusService.allCases).subtracting(first) }
    var testDescription: String {
        "\(first.sorted().map(\.rawValue).joined(separator: "+")) | \(second.sorted().map(\.rawValue).joined(separator: "+"))"
    }

    /// The process of the two that runs `service`.
    func side(of service: CampusService, _ first: TestApplication, _ second: TestApplication) -> TestApplication {
        self.first.contains(service) ? first : second
    }
}

/// Runs two applications on memory storage, each with its share of the services and the other as
/// the upstream of the rest, and hands `body` a connection to each.
func withSplitApplications(
    _ split: Split,
    _ body: @Sendable (TestApplication, TestApplication) async throws -> Void
) async throws {
    let ports = (try freeLoopbackPort(), try freeLoopbackPort())
    func configuration(
        running local: Set<CampusService>,
        on port: Int,
        othersOn otherPort: Int
    ) -> ApplicationConfiguration {
        var configuration = ApplicationConfiguration.forTests()
        configuration.server.port = port
        let others = Set(CampusService.allCases).subtracting(local)
        configuration.deployment = ServiceDeployment(
            local: local,
            upstreams: Dictionary(uniqueKeysWithValues: others.map { ($0, [.host("127.0.0.1", port: otherPort)]) })
        )
        return configuration
    }
    let first = configuration(running: split.first, on: ports.0, othersOn: ports.1)
    let second = configuration(running: split.second, on: ports.1, othersOn: ports.0)
    try await withTestApplication(first) { first in
        try await withTestApplication(second) { second in try await body(first, second) }
    }
}
