import Foundation
import SkiffBids
import SkiffDomain
import SkiffPostgres
import SkiffTesting
import Testing

/// The PostgreSQL bids store as several servers use it: each "server" is a ``PostgresStorage`` of its
/// own (its own pool) on one database, so nothing but PostgreSQL settles their races.
@Suite("BidsStore on PostgreSQL: several servers on one database")
struct BidsStorePostgresTests {
    typealias F = BidsFixture

    /// Runs `body` with `count` stores on one new database, each opened as a separate server would.
    private func withServers(_ count: Int, _ body: ([PostgresBidsStore]) async throws -> Void) async throws {
        try await TestPostgres.withStorages(count) { storages, _ in try await body(storages.map { $0.bidsStore() }) }
    }

    /// Runs `operation` for each index concurrently; returns how many succeeded and the errors thrown.
    private func race(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async -> (successes: Int, errors: [any Error]) {
        await withTaskGroup(of: (any Error)?.self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        try await operation(index)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var successes = 0
            var errors: [any Error] = []
            for await error in group {
                if let error { errors.append(error) } else { successes += 1 }
            }
            return (successes, errors)
        }
    }

    @Test("Three servers accept 30 bids of one listing at once: the listing is sold exactly once")
    func acceptancesAcrossServers() async throws {
        try await withServers(3) { servers in
            var bids: [Bid] = []
            for index in 0..<30 {
                bids.append(try await servers[index % 3].place("usr_\(index)", 1_000 + Int64(index)))
            }
            let all = bids
            let outcome = await race(30) { index in _ = try await servers[index % 3].accept(all[index]) }
            #expect(outcome.successes == 1)
            #expect(outcome.errors.count == 29)
            #expect(outcome.errors.allSatisfy { ($0 as? DomainError)?.code == .aborted })
            for server in servers {
                let states = try await server.allListingBids(F.listing, pageSize: 7).map(\.state)
                #expect(states.filter { $0 == .accepted }.count == 1)
                #expect(states.filter { $0 == .superseded }.count == 29)
                #expect(try await server.sales(sellerID: F.seller, page: .first).items.count == 1)
            }
            let buyers = try await servers[0].sales(sellerID: F.seller, page: .first).items.map(\.buyerID)
            for (index, bid) in all.enumerated() {
                let kinds = try await servers[index % 3].eventKinds(bid.bidderID)
                #expect(kinds == (buyers == [bid.bidderID] ? [.accepted] : [.superseded]))
            }
        }
    }

    @Test("Three servers record a seller's events at once: numbered 1, 2, 3… without gaps")
    func eventNumbersAcrossServers() async throws {
        try await withServers(3) { servers in
            let outcome = await race(40) { index in
                _ = try await servers[index % 3].place("usr_\(index)", 1_000, listing: "lst_\(index % 4)")
            }
            #expect(outcome.successes == 40)
            #expect(outcome.errors.isEmpty)
            let events = try await servers[1].events(userID: F.seller, afterSequence: 0, limit: 100)
            #expect(events.map(\.sequence) == Array(1...40))
            #expect(Set(events.map(\.bidID)).count == 40)
            for listing in 0..<4 {
                #expect(try await servers[2].liveBidSummary(listingID: "lst_\(listing)").count == 10)
            }
        }
    }

    @Test("A bid racing a close on another server either lands before it (and is rejected) or fails")
    func bidsRacingCloseAcrossServers() async throws {
        try await withServers(2) { servers in
            let outcome = await race(21) { index in
                if index == 10 {
                    _ = try await servers[0].closeListing(listingID: F.listing, reason: "Withdrawn", now: Fixture.t0)
                } else {
                    _ = try await servers[1].place("usr_\(index)", 1_000)
                }
            }
            #expect(outcome.errors.allSatisfy { ($0 as? DomainError) == BidsStoreError.listingSold })
            #expect(try await servers[0].liveBidSummary(listingID: F.listing).count == 0)
            let bids = try await servers[1].allListingBids(F.listing, pageSize: 5)
            #expect(bids.count == outcome.successes - 1)
            #expect(bids.allSatisfy { $0.state == .rejected && $0.rejectionReason == "Withdrawn" })
        }
    }
}
