import Foundation
import GRDB
import SkiffDomain
import SkiffLostFound
import Testing

@testable import SkiffSQLite

/// What only the SQLite backend has: the "lostfound-v1" schema, its FTS5 index kept in sync by triggers, and
/// durability across reopening the file.
@Suite("SQLite lost-and-found store")
struct SQLiteLostFoundStoreTests {
    typealias F = LostFoundFixture

    @Test("lostfound-v1 is registered after the existing migrations")
    func migrationOrder() {
        let ids = SQLiteSchema.migrationIdentifiers
        let lostFound = ids.firstIndex(of: "lostfound-v1")
        #expect(lostFound != nil)
        for earlier in ["accounts-v1", "listings-v1", "bids-v1"] {
            #expect(ids.firstIndex(of: earlier).map { $0 < (lostFound ?? -1) } == true, "\(earlier) in \(ids)")
        }
    }

    @Test("A report scored on a reader is rescored in the writer when an item changed meanwhile; not otherwise")
    func reportScoredBeforeTheWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.lostFoundStore()
        func generation() async throws -> Int64 {
            try await database.pool.read { db in try SQLiteLostFoundStore.generation(db) }
        }
        #expect(try await generation() == 0)
        // A matching lost item reported between the reader's scoring and the write: the found item's report
        // must still record the match (the reader did not see the lost item).
        let lost = F.item(.lost, "Blue Hydro Flask bottle")
        let found = try await store.reportItem(F.item(.found, "Found a blue Hydro Flask bottle"), matcher: .standard) {
            _ = try await store.reportItem(lost, matcher: .standard)
        }
        #expect(found.matches.map(\.lostItemID) == [lost.id])
        #expect(try await generation() == 2)
        // Nothing changed meanwhile: the reader's matches are recorded as scored.
        let other = try await store.reportItem(F.item(.found, "Blue Hydro Flask bottle, dented"), matcher: .standard) {}
        #expect(other.matches.map(\.lostItemID) == [lost.id])
        // Every change to an item counts: an update and a delete too.
        var changes = LostFoundItemChanges()
        changes.title = "Blue Hydro Flask"
        _ = try await store.updateItem(id: lost.id, reporterID: F.owner, changes: changes, now: F.t0)
        #expect(try await generation() == 4)
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM lostFoundMatch")
            try db.execute(sql: "DELETE FROM lostFoundItem WHERE id = ?", arguments: [lost.id])
        }
        #expect(try await generation() == 5)
    }

    @Test("The FTS5 index follows inserts and updates and passes its integrity check")
    func ftsInSync() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.lostFoundStore()
        let item = try await store.reportItem(F.item(.lost, "Café loyalty card"), matcher: .standard).item
        var changes = LostFoundItemChanges()
        changes.title = "Green umbrella"
        changes.description = "Bamboo handle"
        _ = try await store.updateItem(id: item.id, reporterID: F.owner, changes: changes, now: F.t0)
        let (oldHits, newHits) = try await database.pool.read { db in
            (
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH 'cafe'"
                ),
                try Int.fetchOne(
                    db,
                    sql:
                        "SELECT COUNT(*) FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH 'umbrella AND bamboo'"
                )
            )
        }
        #expect(oldHits == 0)
        #expect(newHits == 1)
        try await database.pool.write { db in
            try db.execute(sql: "INSERT INTO lostFoundItemSearch(lostFoundItemSearch) VALUES ('integrity-check')")
        }
        #expect(try await store.ids(LostFoundQuery(text: "bamboo umb")) == [item.id])
        #expect(try await store.ids(LostFoundQuery(text: "cafe")) == [])
    }

    @Test("Items, statuses and matches survive closing and reopening the file")
    func durable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        let first = try await SQLiteDatabase.open(atPath: path)
        let lost = try await first.lostFoundStore().reportItem(F.item(.lost, "Black wallet"), matcher: .standard).item
        let report = try await first.lostFoundStore().reportItem(
            F.item(.found, "Black wallet", at: 5),
            matcher: .standard
        )
        let returned = try await first.lostFoundStore().markReturned(id: lost.id, reporterID: F.owner, now: F.t0)
        try first.close()

        let reopened = try await SQLiteDatabase.open(atPath: path)
        defer { try? reopened.close() }
        let store = reopened.lostFoundStore()
        #expect(try await store.item(id: lost.id) == returned)
        #expect(try await store.item(id: report.item.id) == report.item)
        let matches = try await store.matches(itemID: report.item.id, page: .first)
        #expect(matches.items.map(\.candidate) == [returned])
        #expect(matches.items.first?.score == report.matches.first?.score)
        #expect(try await store.ids(LostFoundQuery(text: "wallet")) == [report.item.id])
    }
}
