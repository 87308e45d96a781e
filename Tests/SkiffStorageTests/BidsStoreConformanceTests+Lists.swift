import Foundation
import SkiffBids
import SkiffDomain
import Testing

extension BidsStoreConformanceTests {
    @Test("A listing's bids: highest first, then oldest, paged by keyset", arguments: StoreKind.allCases)
    func listingBids(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let a = try await store.place("usr_a", 1_500, at: 0)
            let b = try await store.place("usr_b", 2_000, at: 1)
            let c = try await store.place("usr_c", 1_500, at: 2)
            let d = try await store.place("usr_d", 1_000, at: 3)
            let e = try await store.place("usr_e", 2_500, at: 4)
            _ = try await store.place("usr_x", 9_000, listing: "lst_other")
            _ = try await store.withdrawBid(id: e.id, bidderID: "usr_e", now: Fixture.date(plusSeconds: 5))
            let expected = [e.id, b.id, a.id, c.id, d.id]
            for size in [1, 2, 3, 5, 10] {
                #expect(try await store.allListingBids(F.listing, pageSize: size).map(\.id) == expected)
            }
            let first = try await store.listingBids(listingID: F.listing, page: PageRequest(size: 2))
            #expect(first.items.map(\.id) == [e.id, b.id])
            let token = try #require(first.nextPageToken)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.listingBids(listingID: "lst_other", page: PageRequest(size: 2, token: token))
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.listingBids(listingID: F.listing, page: PageRequest(size: 2, token: "garbage"))
            }
            #expect(
                try await store.liveBidSummary(listingID: F.listing)
                    == LiveBidSummary(count: 4, highestAmountCents: 2_000)
            )
            #expect(
                try await store.liveBidSummary(listingID: "lst_none") == LiveBidSummary(count: 0, highestAmountCents: 0)
            )
            #expect(
                try await store.listingBids(listingID: "lst_none", page: .first) == Page(items: [], nextPageToken: nil)
            )
        }
    }

    @Test("A bidder's bids: newest first, filtered by state, paged", arguments: StoreKind.allCases)
    func myBids(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            var placed: [Bid] = []
            for index in 0..<5 {
                placed.append(try await store.place("usr_ann", 1_000, listing: "lst_\(index)", at: Double(index)))
            }
            _ = try await store.place("usr_bob", 1_000, listing: "lst_0")
            _ = try await store.withdrawBid(id: placed[1].id, bidderID: "usr_ann", now: Fixture.t0)
            _ = try await store.rejectBid(id: placed[3].id, sellerID: F.seller, reason: "", now: Fixture.t0)

            func all(_ states: Set<BidState>, size: Int) async throws -> [String] {
                var ids: [String] = []
                var token: String?
                repeat {
                    let page = try await store.bids(
                        bidderID: "usr_ann",
                        states: states,
                        page: PageRequest(size: size, token: token)
                    )
                    ids += page.items.map(\.id)
                    token = page.nextPageToken
                } while token != nil
                return ids
            }
            #expect(try await all([], size: 2) == placed.reversed().map(\.id))
            #expect(try await all([.pending], size: 1) == [placed[4].id, placed[2].id, placed[0].id])
            #expect(try await all([.withdrawn, .rejected], size: 10) == [placed[3].id, placed[1].id])
            #expect(try await all([.accepted], size: 10) == [])

            let page = try await store.bids(bidderID: "usr_ann", states: [.pending], page: PageRequest(size: 1))
            let token = try #require(page.nextPageToken)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.bids(bidderID: "usr_ann", states: [], page: PageRequest(size: 1, token: token))
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.bids(
                    bidderID: "usr_bob",
                    states: [.pending],
                    page: PageRequest(size: 1, token: token)
                )
            }
        }
    }

    @Test("Purchases and sales: newest first, paged, per party", arguments: StoreKind.allCases)
    func purchasesAndSales(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            var sales: [Sale] = []
            for index in 0..<4 {
                let bid = try await store.place("usr_ann", 1_000, listing: "lst_\(index)")
                sales.append(try await store.accept(bid, at: Double(index)).value.sale)
            }
            let other = try await store.placeBid(
                F.newBid("usr_bob", 1_000, listing: "lst_9", seller: "usr_other"),
                now: Fixture.t0
            ).value.bid
            _ = try await store.accept(other)

            var ids: [String] = []
            var token: String?
            repeat {
                let page = try await store.purchases(buyerID: "usr_ann", page: PageRequest(size: 3, token: token))
                ids += page.items.map(\.id)
                token = page.nextPageToken
            } while token != nil
            #expect(ids == sales.reversed().map(\.id))
            let sold = try await store.sales(sellerID: F.seller, page: PageRequest(size: 10))
            #expect(sold == Page(items: sales.reversed(), nextPageToken: nil))
            #expect(try await store.purchases(buyerID: "usr_bob", page: .first).items.map(\.sellerID) == ["usr_other"])
            #expect(try await store.sales(sellerID: "usr_ann", page: .first).items == [])

            let page = try await store.purchases(buyerID: "usr_ann", page: PageRequest(size: 1))
            let purchaseToken = try #require(page.nextPageToken)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.sales(sellerID: "usr_ann", page: PageRequest(size: 1, token: purchaseToken))
            }
        }
    }

    @Test("Events: numbered per user from 1, read after a sequence number with a limit", arguments: StoreKind.allCases)
    func events(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            for index in 0..<5 {
                _ = try await store.place("usr_\(index)", 1_000 + Int64(index), at: Double(index))
            }
            let all = try await store.events(userID: F.seller, afterSequence: 0, limit: 100)
            #expect(all.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(all.map(\.amountCents) == [1_000, 1_001, 1_002, 1_003, 1_004])
            #expect(all.map(\.createdAt) == (0..<5).map { Fixture.date(plusSeconds: Double($0)) })
            #expect(try await store.events(userID: F.seller, afterSequence: 2, limit: 2) == Array(all[2..<4]))
            #expect(try await store.events(userID: F.seller, afterSequence: 5, limit: 10) == [])
            #expect(try await store.events(userID: F.seller, afterSequence: 0, limit: 0) == [])
            #expect(try await store.events(userID: "usr_nobody", afterSequence: 0, limit: 10) == [])
        }
    }
}
