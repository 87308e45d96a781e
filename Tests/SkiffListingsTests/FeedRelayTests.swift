import Foundation
import SkiffAPI
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffListings
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Tokens `tok-<name>` sign in `usr_<name>`.
struct NameAuthenticator: SessionAuthenticator {
    func authenticate(token: String) async throws -> AuthenticatedUser? {
        guard token.hasPrefix("tok-") else { return nil }
        return AuthenticatedUser(id: "usr_" + token.dropFirst(4), sessionToken: token)
    }
}

@Suite("Listings feed relay")
struct FeedRelayTests {
    static func auth(_ name: String) -> Metadata { ["authorization": .string("Bearer tok-\(name)")] }

    /// A Listings service publishing to a ``RecordingFeed``, its in-process client, and a listing of `usr_seller`.
    static func listingOnARecordingFeed() async throws -> (
        RecordingFeed, ListingsService, Skiff_Listings_V1_Listings.Client, Skiff_Listings_V1_Listing
    ) {
        let feed = RecordingFeed()
        let service = ListingsService(store: InMemoryListingsStore(), feed: feed)
        let client = Skiff_Listings_V1_Listings.Client(
            transport: InProcessTransport(
                services: [service],
                interceptors: [AuthenticationInterceptor(authenticator: NameAuthenticator())]
            )
        )
        let listing = try await client.createListing(
            .with {
                $0.listing.title = "Desk lamp"
                $0.listing.priceCents = 1_500
                $0.listing.category = .furniture
                $0.listing.condition = .lightlyUsed
                $0.listing.location.zipCode = "37235"
            },
            metadata: auth("seller")
        ).listing
        return (feed, service, client, listing)
    }

    @Test("A change whose publication failed reaches the savers' feeds through the relay, once")
    func relay() async throws {
        let (feed, service, client, listing) = try await Self.listingOnARecordingFeed()
        let auth = Self.auth
        _ = try await client.saveListing(.with { $0.listingID = listing.listingID }, metadata: auth("ann"))
        // Change times are stored to the millisecond: start a little earlier.
        let start = Date().addingTimeInterval(-1)

        feed.failing = true
        _ = try await client.updateListing(
            .with {
                $0.listing.listingID = listing.listingID
                $0.listing.priceCents = 1_200
                $0.updateMask.paths = ["price_cents"]
            },
            metadata: auth("seller")
        )
        #expect(feed.notifications.isEmpty)
        await #expect(throws: RPCError.self) { _ = try await service.republishChanges(since: start) }

        feed.failing = false
        #expect(try await service.republishChanges(since: start) == 1)
        #expect(feed.notifications.map(\.userID) == ["usr_ann"])
        guard case .listing(let change) = feed.notifications.first?.kind else {
            Issue.record("expected a listing notification")
            return
        }
        #expect(change.kind == "price_changed" && change.newPriceCents == 1_200 && change.oldPriceCents == 1_500)
        _ = try await service.republishChanges(since: start)
        #expect(feed.notifications.count == 1)
    }

    @Test("Comments whose notices failed to publish reach the seller and the asker through the relay, once")
    func commentRelay() async throws {
        let (feed, service, client, listing) = try await Self.listingOnARecordingFeed()
        let auth = Self.auth
        let start = Date().addingTimeInterval(-1)
        feed.failing = true
        let question = try await client.addComment(
            .with {
                $0.listingID = listing.listingID
                $0.text = String(repeating: "Is it bright? ", count: 30)
            },
            metadata: auth("ann")
        ).comment
        _ = try await client.addComment(
            .with {
                $0.listingID = listing.listingID
                $0.text = "Very."
                $0.replyToCommentID = question.commentID
            },
            metadata: auth("seller")
        )
        #expect(feed.notifications.isEmpty)
        feed.failing = false
        #expect(try await service.republishComments(since: start) == 2)
        _ = try await service.republishComments(since: start)
        let told = feed.notifications.compactMap { notification -> (String, FeedNotification.ListingComment)? in
            guard case .listingComment(let comment) = notification.kind else { return nil }
            return (notification.userID, comment)
        }
        #expect(told.map(\.0) == ["usr_seller", "usr_ann"])
        #expect(told.map(\.1.kind) == ["commented", "replied"])
        #expect(told[0].1.excerpt.count == ListingLifecycle.commentExcerptLength)
        #expect(told[0].1.authorID == "usr_ann" && told[1].1.authorID == "usr_seller")
    }
}
