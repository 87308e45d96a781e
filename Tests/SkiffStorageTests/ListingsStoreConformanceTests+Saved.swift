import Foundation
import SkiffDomain
import SkiffListings
import Testing

extension ListingsStoreConformanceTests {
    @Test(
        "Saved listings: save twice keeps the date, active only, limit, list order, unsave",
        arguments: StoreKind.allCases
    )
    func saved(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let created = try await store.create([F.listing("A"), F.listing("B", at: 1), F.listing("C", at: 2)])
            let user = "usr_buyer"
            let t1 = F.t0.addingTimeInterval(100)
            let first = try await store.saveListing(userID: user, listingID: created[0].id, now: t1, limit: 2)
            #expect(first == SavedListing(listing: created[0], savedAt: t1))
            let again = try await store.saveListing(userID: user, listingID: created[0].id, now: t1 + 5, limit: 2)
            #expect(again.savedAt == t1)
            _ = try await store.saveListing(userID: user, listingID: created[1].id, now: t1, limit: 2)
            await #expect(throws: ListingsStoreError.savedLimit) {
                _ = try await store.saveListing(userID: user, listingID: created[2].id, now: t1, limit: 2)
            }
            // Saving an already saved listing succeeds even at the limit.
            _ = try await store.saveListing(userID: user, listingID: created[1].id, now: t1, limit: 2)
            await #expect(throws: ListingsStoreError.listingNotFound) {
                _ = try await store.saveListing(userID: user, listingID: "lst_missing", now: t1, limit: 10)
            }
            _ = try await store.setStatus(id: created[2].id, to: .withdrawn, by: .system, now: t1)
            await #expect(throws: ListingsStoreError.notActive) {
                _ = try await store.saveListing(userID: user, listingID: created[2].id, now: t1, limit: 10)
            }
            // Ties on savedAt: listing id descending. Withdrawn listings stay in the list.
            _ = try await store.setStatus(id: created[0].id, to: .withdrawn, by: .system, now: t1)
            let expected = [created[0].id, created[1].id].sorted(by: >)
            let page1 = try await store.savedListings(userID: user, page: PageRequest(size: 1))
            #expect(page1.items.map(\.listing.id) == [expected[0]])
            let page2 = try await store.savedListings(
                userID: user,
                page: PageRequest(size: 1, token: page1.nextPageToken)
            )
            #expect(page2.items.map(\.listing.id) == [expected[1]])
            #expect(page2.nextPageToken == nil)
            #expect(page1.items[0].listing.status == (expected[0] == created[0].id ? .withdrawn : .active))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.savedListings(
                    userID: "usr_else",
                    page: PageRequest(size: 1, token: page1.nextPageToken)
                )
            }
            #expect(try await store.savers(listingID: created[1].id) == [user])
            try await store.unsaveListing(userID: user, listingID: created[1].id)
            try await store.unsaveListing(userID: user, listingID: created[1].id)
            #expect(try await store.savers(listingID: created[1].id) == [])
            #expect(
                try await store.savedListings(userID: user, page: .first).items.map(\.listing.id) == [created[0].id]
            )
        }
    }

    @Test("Change events: per user's saved listings, after a sequence, pruned by age", arguments: StoreKind.allCases)
    func changes(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let created = try await store.create([F.listing("A"), F.listing("B", at: 1)])
            let (a, b) = (created[0].id, created[1].id)
            _ = try await store.saveListing(userID: "usr_1", listingID: a, now: F.t0, limit: 10)
            _ = try await store.saveListing(userID: "usr_2", listingID: b, now: F.t0, limit: 10)
            var price = ListingChanges()
            price.priceCents = 1
            let e1 = try await store.updateListing(id: a, sellerID: F.seller, changes: price, now: F.t0 + 1).event!
            let e2 = try await store.updateListing(id: b, sellerID: F.seller, changes: price, now: F.t0 + 2).event!
            let e3 = try await store.setStatus(id: a, to: .sold, by: .system, now: F.t0 + 3).event!
            #expect([e1.sequence, e2.sequence, e3.sequence] == [1, 2, 3])
            #expect(try await store.changes(forUser: "usr_1", after: 0, limit: 10) == [e1, e3])
            #expect(try await store.changes(forUser: "usr_1", after: 1, limit: 10) == [e3])
            #expect(try await store.changes(forUser: "usr_1", after: 0, limit: 1) == [e1])
            #expect(try await store.changes(forUser: "usr_2", after: 0, limit: 10) == [e2])
            #expect(try await store.changes(forUser: "usr_3", after: 0, limit: 10) == [])
            // Every listing's changes since a time, for the feed relay.
            #expect(try await store.changes(since: F.t0 + 2, limit: 10) == [e2, e3])
            #expect(try await store.changes(since: F.t0, limit: 2) == [e1, e2])
            #expect(try await store.changes(since: F.t0 + 4, limit: 10) == [])
            #expect(try await store.pruneChanges(before: F.t0 + 2) == 1)
            #expect(try await store.change(sequence: 1) == nil)
            #expect(try await store.changes(forUser: "usr_1", after: 0, limit: 10) == [e3])
            // Sequence numbers are never reused.
            let e4 = try await store.setStatus(id: b, to: .withdrawn, by: .system, now: F.t0 + 4).event!
            #expect(e4.sequence == 4)
        }
    }

    @Test("Concurrent markSold: exactly one call makes the transition", arguments: StoreKind.allCases)
    func concurrentMarkSold(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let listing = try await store.createListing(F.listing("Hot item"), requestID: nil)
            let transitions = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        let actor: StatusActor = index.isMultiple(of: 2) ? .system : .seller(F.seller)
                        return try await store.setStatus(id: listing.id, to: .sold, by: actor, now: F.t0).transitioned
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(transitions.count(where: { $0 }) == 1)
            #expect(try await store.listing(id: listing.id)?.status == .sold)
            #expect(try await store.change(sequence: 1)?.kind == .sold)
            #expect(try await store.change(sequence: 2) == nil)
        }
    }
}
