import Foundation
import SkiffBids
import SkiffDomain
import Testing

extension BidsStoreConformanceTests {
    /// Runs `count` copies of `operation` concurrently; returns the successes and the errors thrown.
    private func race<T: Sendable>(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> T
    ) async -> (successes: [T], errors: [DomainError]) {
        await withTaskGroup(of: Result<T, any Error>.self) { group in
            for index in 0..<count {
                group.addTask {
                    do { return .success(try await operation(index)) } catch { return .failure(error) }
                }
            }
            var successes: [T] = []
            var errors: [DomainError] = []
            for await result in group {
                switch result {
                case .success(let value): successes.append(value)
                case .failure(let error as DomainError): errors.append(error)
                case .failure(let error): Issue.record("Unexpected error: \(error)")
                }
            }
            return (successes, errors)
        }
    }

    @Test("50 concurrent acceptances of 50 bids on one listing: exactly one sale", arguments: StoreKind.allCases)
    func concurrentAcceptances(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            var bids: [Bid] = []
            for index in 0..<50 { bids.append(try await store.place("usr_\(index)", 1_000 + Int64(index))) }
            let all = bids
            let outcome = await race(50) { index in try await store.accept(all[index]).value }
            #expect(outcome.successes.count == 1)
            #expect(outcome.errors.count == 49)
            #expect(outcome.errors.allSatisfy { $0.code == .aborted })
            let winner = try #require(outcome.successes.first)
            let states = try await store.allListingBids(F.listing, pageSize: 100).map(\.state)
            #expect(states.filter { $0 == .accepted }.count == 1)
            #expect(states.filter { $0 == .superseded }.count == 49)
            #expect(try await store.sales(sellerID: F.seller, page: .first).items == [winner.sale])
            let sellerEvents = try await store.events(userID: F.seller, afterSequence: 0, limit: 1000)
            #expect(sellerEvents.map(\.sequence) == Array(1...50))
        }
    }

    @Test(
        "50 concurrent acceptances of one bid: one sale; the rest ABORTED or FAILED_PRECONDITION",
        arguments: StoreKind.allCases
    )
    func concurrentAcceptancesOfOneBid(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let bid = try await store.place("usr_ann", 1_000)
            let outcome = await race(50) { _ in try await store.accept(bid).value }
            #expect(outcome.successes.count == 1)
            #expect(outcome.errors.allSatisfy { $0.code == .aborted || $0.code == .failedPrecondition })
            #expect(try await store.purchases(buyerID: "usr_ann", page: .first).items.count == 1)
        }
    }

    @Test("Bids racing an acceptance: none is left live, and none lands after the sale", arguments: StoreKind.allCases)
    func bidsRacingAcceptance(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let first = try await store.place("usr_first", 1_000)
            let outcome = await race(50) { index -> String in
                if index == 25 {
                    _ = try await store.accept(first)
                    return "accepted"
                }
                _ = try await store.place("usr_\(index)", 2_000)
                return "placed"
            }
            #expect(outcome.successes.contains("accepted"))
            #expect(outcome.errors.allSatisfy { $0 == BidsStoreError.listingSold })
            #expect(try await store.liveBidSummary(listingID: F.listing).count == 0)
            let states = try await store.allListingBids(F.listing, pageSize: 100).map(\.state)
            #expect(states.count == 1 + outcome.successes.count - 1)
            #expect(states.filter { $0 == .accepted }.count == 1)
        }
    }

    @Test("Concurrent retries with one request id place one bid", arguments: StoreKind.allCases)
    func concurrentRetries(kind: StoreKind) async throws {
        try await withBidsStore(kind) { (store) async throws in
            let outcome = await race(30) { _ in
                try await store.placeBid(F.newBid("usr_ann", 1_200, requestID: "once"), now: Fixture.t0).value.bid.id
            }
            #expect(outcome.errors == [])
            #expect(Set(outcome.successes).count == 1)
            #expect(try await store.eventKinds(F.seller) == [.placed])
        }
    }

    @Test("Concurrent bids of one bidder keep at most one live bid", arguments: StoreKind.allCases)
    func concurrentBidsOfOneBidder(kind: StoreKind) async throws {
        try await withBidsStore(kind) { store in
            let outcome = await race(30) { index in try await store.place("usr_ann", 1_000 + Int64(index)) }
            #expect(outcome.errors.allSatisfy { $0.code == .invalidArgument })
            let summary = try await store.liveBidSummary(listingID: F.listing)
            #expect(summary.count == 1)
            #expect(summary.highestAmountCents == outcome.successes.map(\.amountCents).max())
        }
    }
}
