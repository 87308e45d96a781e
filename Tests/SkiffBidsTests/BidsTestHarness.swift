import Foundation
import Logging
import SkiffAPI
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// The Bids service in process: an in-memory store, real small collaborators, the shared
/// authentication interceptor, and the generated typed client over ``InProcessTransport``.
struct BidsTestHarness {
    static let users = ["seller", "ann", "bob", "cat", "dan"]

    let store = InMemoryBidsStore()
    let listings = DictionaryListingDirectory()
    let conversations = CountingConversations()
    let time = ManualTimeSource()
    let completed = CompletedSales()
    let feed = RecordingFeed()
    let service: BidsService
    let client: Skiff_Bids_V1_Bids.Client

    init(configuration: BidsConfiguration = .defaults) {
        let completed = self.completed
        let service = BidsService(
            store: store,
            listings: listings,
            conversations: conversations,
            paymentHandles: DictionaryPaymentHandles(handles: ["usr_seller": "@seller-pays"]),
            feed: feed,
            time: time,
            onSaleCompleted: { sale in completed.append(sale.id) },
            logger: Logger(label: "skiff.bids.test") { _ in SwiftLogNoOpLogHandler() },
            configuration: configuration
        )
        var tokens: [String: String] = [:]
        for user in Self.users { tokens["tok-\(user)"] = "usr_\(user)" }
        let transport = InProcessTransport(
            services: [service],
            interceptors: [
                AuthenticationInterceptor(
                    authenticator: DictionaryAuthenticator(users: tokens),
                    serviceToken: Self.serviceToken
                )
            ]
        )
        client = Skiff_Bids_V1_Bids.Client(transport: transport)
        self.service = service
        listings.put(Self.listing())
    }

    /// The token other Skiff services call with.
    static let serviceToken = "svc-token-for-bids-tests"
    /// The metadata of a call by another Skiff service.
    static let serviceAuth: Metadata = ["authorization": .string("Bearer \(serviceToken)")]

    /// The metadata of a call by `user` ("ann" → `usr_ann`).
    static func auth(_ user: String) -> Metadata { ["authorization": .string("Bearer tok-\(user)")] }

    /// A listing by `usr_seller`.
    static func listing(
        _ id: String = "lst_jacket",
        price: Int64 = 2_500,
        category: ItemCategory = .clothing,
        bidding: Bool = true,
        status: ListingStatus = .active
    ) -> ListingSnapshot {
        ListingSnapshot(
            id: id,
            sellerID: "usr_seller",
            title: "Rain jacket",
            priceCents: price,
            category: category,
            biddingEnabled: bidding,
            status: status
        )
    }

    /// Places a bid as `user`.
    func bid(
        _ user: String,
        _ amount: Int64,
        listing: String = "lst_jacket",
        requestID: String = ""
    ) async throws
        -> Skiff_Bids_V1_Bid
    {
        try await client.placeBid(
            .with {
                $0.listingID = listing
                $0.amountCents = amount
                $0.requestID = requestID
            },
            metadata: Self.auth(user)
        ).bid
    }

    /// Accepts a bid as the seller.
    func accept(_ bidID: String) async throws -> Skiff_Bids_V1_AcceptBidResponse {
        try await client.acceptBid(.with { $0.bidID = bidID }, metadata: Self.auth("seller"))
    }
}

/// The ids of the sales the completion hook was called for.
final class CompletedSales: Sendable {
    private let ids = Mutex<[String]>([])
    func append(_ id: String) { ids.withLock { $0.append(id) } }
    var all: [String] { ids.withLock { $0 } }
}
