import Foundation
import GRDB
import SkiffDomain
import SkiffListings
import Testing

@testable import SkiffSQLite

/// What only the SQLite backend has: the "listings-v1" schema and its FTS5 index kept in sync by triggers.
@Suite("SQLite listings store")
struct SQLiteListingsStoreTests {
    @Test("A request id is kept with a 71-character hashed fingerprint; one kept as the fields' text still matches")
    func hashedRequestFingerprints() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.listingsStore()
        let asked = ListingFixture.listing("Bike") {
            $0.description = String(repeating: "A long description. ", count: 50)
        }
        let first = try await store.createListing(asked, requestID: "req-1")
        let kept = try await database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT fingerprint FROM listingRequest WHERE requestID = 'req-1'")
        }
        #expect(kept == [asked.fields.fingerprint] && kept.allSatisfy { $0.utf8.count == 71 })
        // As a server before hashed fingerprints kept it: the canonical text.
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE listingRequest SET fingerprint = ? WHERE requestID = 'req-1'",
                arguments: [asked.fields.canonicalText]
            )
        }
        #expect(try await store.createListing(asked, requestID: "req-1") == first)
        await #expect(throws: ListingsStoreError.requestIDReused) {
            _ = try await store.createListing(
                ListingFixture.listing("Bike", at: 5) { $0.priceCents = 1 },
                requestID: "req-1"
            )
        }
    }

    @Test("The FTS5 index follows inserts and updates and passes its integrity check")
    func ftsInSync() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.listingsStore()
        #expect(SQLiteSchema.migrationIdentifiers.contains("listings-v1"))
        let listing = try await store.createListing(ListingFixture.listing("Vintage Café chair"), requestID: nil)
        var changes = ListingChanges()
        changes.title = "Modern stool"
        changes.tags = ["Oak"]
        _ = try await store.updateListing(
            id: listing.id,
            sellerID: ListingFixture.seller,
            changes: changes,
            now: Fixture.t0
        )
        let (oldHits, newHits) = try await database.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listingSearch WHERE listingSearch MATCH 'cafe'"),
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM listingSearch WHERE listingSearch MATCH 'stool AND oak'"
                )
            )
        }
        #expect(oldHits == 0)
        #expect(newHits == 1)
        try await database.pool.write { db in
            try db.execute(sql: "INSERT INTO listingSearch(listingSearch) VALUES ('integrity-check')")
        }
        #expect(try await store.ids(ListingQuery(text: "oak sto")) == [listing.id])
        #expect(try await store.ids(ListingQuery(text: "cafe")) == [])
    }
}
