import Foundation
import SkiffBids
import SkiffDomain
import SkiffPostgres
import SkiffSQLite

/// Runs `body` with a fresh, empty bids store of the given kind (a new SQLite file in a temporary
/// directory for `.sqlite`, a new database on the test cluster for `.postgres`, removed afterwards).
func withBidsStore(_ kind: StoreKind, _ body: (any BidsStore) async throws -> Void) async throws {
    try await withStore(
        kind,
        memory: { InMemoryBidsStore() },
        sqlite: { $0.bidsStore() },
        postgres: { $0.bidsStore() },
        body
    )
}

/// Builders and steps for bids-store tests.
enum BidsFixture {
    static let seller = "usr_seller"
    static let listing = "lst_one"
    static let asking: Int64 = 1_000

    static func newBid(
        _ bidder: String,
        _ amount: Int64,
        listing: String = listing,
        seller: String = seller,
        asking: Int64 = asking,
        requestID: String? = nil
    ) -> NewBid {
        NewBid(
            id: EntityID.make(.bid),
            listingID: listing,
            sellerID: seller,
            bidderID: bidder,
            amountCents: amount,
            askingPriceCents: asking,
            requestID: requestID
        )
    }

    static func draft(
        title: String = "Rain jacket",
        category: ItemCategory = .clothing,
        conversation: String = "cnv_1"
    )
        -> SaleDraft
    {
        SaleDraft(id: EntityID.make(.sale), listingTitle: title, category: category, conversationID: conversation)
    }
}

extension BidsStore {
    /// Places a bid at `Fixture.t0 + seconds` and returns it.
    func place(
        _ bidder: String,
        _ amount: Int64,
        listing: String = BidsFixture.listing,
        at seconds: Double = 0
    )
        async throws -> Bid
    {
        try await placeBid(
            BidsFixture.newBid(bidder, amount, listing: listing),
            now: Fixture.date(plusSeconds: seconds)
        )
        .value.bid
    }

    /// Claims and completes an acceptance.
    func accept(
        _ bid: Bid,
        by caller: String? = nil,
        kind: AcceptanceKind = .bid,
        at seconds: Double = 0
    )
        async throws -> Recorded<Acceptance>
    {
        let now = Fixture.date(plusSeconds: seconds)
        let claim = try await claimAcceptance(
            bidID: bid.id,
            callerID: caller ?? (kind == .bid ? bid.sellerID : bid.bidderID),
            kind: kind,
            now: now
        )
        return try await completeAcceptance(claim, sale: BidsFixture.draft(), now: now)
    }

    /// Every page of a listing's bids with the given page size.
    func allListingBids(_ listing: String, pageSize: Int) async throws -> [Bid] {
        var result: [Bid] = []
        var token: String?
        repeat {
            let page = try await listingBids(listingID: listing, page: PageRequest(size: pageSize, token: token))
            result += page.items
            token = page.nextPageToken
        } while token != nil
        return result
    }

    /// The kinds of a user's events, in order.
    func eventKinds(_ user: String) async throws -> [BidEvent.Kind] {
        try await events(userID: user, afterSequence: 0, limit: 1000).map(\.kind)
    }
}
