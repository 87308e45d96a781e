import Foundation
import Logging
import SkiffAPI
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffLostFound
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Sessions from a dictionary: token → user id.
struct DictionaryAuthenticator: SessionAuthenticator {
    let users: [String: String]

    func authenticate(token: String) async throws -> AuthenticatedUser? {
        users[token].map { AuthenticatedUser(id: $0, sessionToken: token) }
    }
}

/// The LostFound service in process: an in-memory store, a recording feed, a manual clock, the shared
/// authentication interceptor and the generated typed client.
struct LostFoundHarness {
    static let users = ["owner", "other", "finder", "guest"]

    let feed = RecordingFeed()
    let time = ManualTimeSource()
    let service: LostFoundService
    let client: Skiff_Lostfound_V1_LostFound.Client

    init(reportLimit: RateLimit? = LostFoundService.defaultReportLimit) {
        let service = LostFoundService(
            store: InMemoryLostFoundStore(),
            feed: feed,
            time: time,
            reportLimit: reportLimit
        )
        self.service = service
        var tokens: [String: String] = [:]
        for user in Self.users { tokens["tok-\(user)"] = "usr_\(user)" }
        let transport = InProcessTransport(
            services: [service],
            interceptors: [AuthenticationInterceptor(authenticator: DictionaryAuthenticator(users: tokens))]
        )
        client = Skiff_Lostfound_V1_LostFound.Client(transport: transport)
    }

    /// The metadata of a call by `user` ("owner" → `usr_owner`).
    static func auth(_ user: String) -> Metadata { ["authorization": .string("Bearer tok-\(user)")] }

    static func item(
        _ kind: Skiff_Lostfound_V1_ItemKind,
        _ title: String,
        category: Skiff_Lostfound_V1_ItemCategory = .bags,
        metresNorth: Double = 0,
        days: Double = 0
    ) -> Skiff_Lostfound_V1_Item {
        .with {
            $0.kind = kind
            $0.title = title
            $0.description_p = "Brown leather, student card inside"
            $0.category = category
            $0.building = "Main Library"
            $0.point = .with {
                $0.latitude = Items.library.latitude + metresNorth / 111_195
                $0.longitude = Items.library.longitude
            }
            $0.occurredAt = Google_Protobuf_Timestamp(date: Items.t0.addingTimeInterval(days * 86_400))
            $0.contactInstructions = "Ask at the front desk"
        }
    }

    func report(_ user: String, _ item: Skiff_Lostfound_V1_Item) async throws -> Skiff_Lostfound_V1_ReportItemResponse {
        try await client.reportItem(.with { $0.item = item }, metadata: Self.auth(user))
    }
}

@Suite("LostFoundService in process, with a recording feed")
struct LostFoundServiceTests {
    typealias H = LostFoundHarness

    @Test("Reports are rate-limited per user, with a retry-after")
    func reportRateLimit() async throws {
        let h = H(reportLimit: RateLimit(2, per: .seconds(3600)))
        h.time.set(Items.t0.addingTimeInterval(3 * 86_400))
        _ = try await h.report("owner", H.item(.lost, "Brown leather wallet"))
        _ = try await h.report("owner", H.item(.lost, "Red umbrella"))
        do {
            _ = try await h.report("owner", H.item(.lost, "Blue scarf"))
            Issue.record("a third report within the hour was accepted")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
            #expect(error.metadata.first("retry-after") == "3600")
        }
        // Another user is not affected; an hour later the owner may report again.
        _ = try await h.report("other", H.item(.lost, "Blue scarf"))
        h.time.advance(by: .seconds(3600))
        _ = try await h.report("owner", H.item(.lost, "Blue scarf"))
    }

    @Test("A found report notifies the matching lost item's owner once, and nobody else")
    func notifiesTheRightOwner() async throws {
        let h = H()
        h.time.set(Items.t0.addingTimeInterval(3 * 86_400))
        let wallet = try await h.report("owner", H.item(.lost, "Brown leather wallet")).item
        // Not candidates: another category, too far away, and the finder's own lost wallet.
        _ = try await h.report("other", H.item(.lost, "Brown leather wallet", category: .electronics))
        _ = try await h.report("other", H.item(.lost, "Brown leather wallet", metresNorth: 8_000))
        let findersOwn = try await h.report("finder", H.item(.lost, "Brown leather wallet")).item
        #expect(h.feed.calls == 0)  // lost reports notify nobody

        let found = try await h.report("finder", H.item(.found, "Found a brown wallet", metresNorth: 150, days: 1))
        #expect(found.matchCount == 1)
        let notifications = h.feed.notifications
        #expect(notifications.count == 1)
        let notification = try #require(notifications.first)
        #expect(notification.userID == "usr_owner")
        #expect(notification.idempotencyKey == "lostfound-match:\(found.item.itemID):\(wallet.itemID)")
        guard case .lostFoundMatch(let match) = notification.kind else {
            Issue.record("expected a lost-and-found match, got \(notification.kind)")
            return
        }
        #expect(match.lostItemID == wallet.itemID)
        #expect(match.foundItemID == found.item.itemID)
        #expect(match.foundItemTitle == "Found a brown wallet")
        #expect(match.score >= 0.5 && match.score <= 1)
        #expect(!notifications.contains { $0.userID == "usr_finder" || $0.userID == "usr_other" })
        #expect(!notifications.contains { $0.idempotencyKey.hasSuffix(findersOwn.itemID) })

        // An unrelated found item notifies nobody; the first pair is not announced again.
        _ = try await h.report("finder", H.item(.found, "Blue umbrella", category: .other))
        #expect(h.feed.notifications.count == 1)
        #expect(h.feed.calls == 1)
    }

    @Test("A lost report records matches with found items already reported, without notifying")
    func lostReportListsFoundCandidates() async throws {
        let h = H()
        h.time.set(Items.t0.addingTimeInterval(86_400))
        let found = try await h.report("finder", H.item(.found, "Brown leather wallet")).item
        let lost = try await h.report("owner", H.item(.lost, "Lost brown wallet"))
        #expect(lost.matchCount == 1)
        #expect(h.feed.calls == 0)
        let matches = try await h.client.listMatches(.with { $0.itemID = lost.item.itemID }, metadata: H.auth("owner"))
        #expect(matches.matches.map(\.item.itemID) == [found.itemID])
        #expect(matches.matches.first?.item.contactInstructions == "Ask at the front desk")
        // The finder sees the lost item among their found item's matches.
        let reverse = try await h.client.listMatches(.with { $0.itemID = found.itemID }, metadata: H.auth("finder"))
        #expect(reverse.matches.map(\.item.itemID) == [lost.item.itemID])
    }

    @Test("A failing feed does not fail the report, and the match is still listed")
    func publishingFailure() async throws {
        let h = H()
        h.time.set(Items.t0)
        h.feed.failing = true
        let lost = try await h.report("owner", H.item(.lost, "Brown leather wallet")).item
        let found = try await h.report("finder", H.item(.found, "Brown leather wallet"))
        #expect(found.matchCount == 1)
        #expect(h.feed.calls == 1)
        #expect(h.feed.notifications.isEmpty)
        let matches = try await h.client.listMatches(.with { $0.itemID = lost.itemID }, metadata: H.auth("owner"))
        #expect(matches.matches.map(\.item.itemID) == [found.item.itemID])
        #expect(matches.matches.first?.score == 1)

        // The relay announces it once the feed is back; a lost item matched later against an existing
        // found one is not announced (as at report time: its reporter just saw the match count).
        h.time.advance(by: .seconds(60))
        _ = try await h.report("other", H.item(.lost, "Brown leather wallet"))
        h.feed.failing = false
        #expect(try await h.service.republishMatches(since: Items.t0) == 1)
        #expect(h.feed.notifications.map(\.userID) == ["usr_owner"])
        #expect(h.feed.notifications.first?.idempotencyKey == "lostfound-match:\(found.item.itemID):\(lost.itemID)")
        #expect(try await h.service.republishMatches(since: Items.t0.addingTimeInterval(1)) == 0)
    }

    @Test("Guests never see contact instructions; only the reporter sees the exact point")
    func privacy() async throws {
        let h = H()
        h.time.set(Items.t0)
        let item = try await h.report("owner", H.item(.lost, "Brown leather wallet")).item
        #expect(item.contactInstructions == "Ask at the front desk")
        #expect(item.hasPoint)
        let asGuest = try await h.client.getItem(.with { $0.itemID = item.itemID }).item
        #expect(asGuest.contactInstructions.isEmpty)
        #expect(!asGuest.hasPoint)
        #expect(asGuest.title == item.title)
        let asOther = try await h.client.getItem(.with { $0.itemID = item.itemID }, metadata: H.auth("other")).item
        #expect(asOther.contactInstructions == "Ask at the front desk")
        #expect(!asOther.hasPoint)
        let search = try await h.client.searchItems(.with { $0.query = "wallet" })
        #expect(search.results.map(\.item.itemID) == [item.itemID])
        #expect(search.results.allSatisfy { $0.item.contactInstructions.isEmpty })
    }
}
