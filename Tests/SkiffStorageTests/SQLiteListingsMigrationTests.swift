import Foundation
import GRDB
import SkiffDomain
import SkiffListings
import Testing

@testable import SkiffSQLite

@Suite("SQLite: listings-v5")
struct SQLiteListingsMigrationTests {
    static let campus = GeoPoint(latitude: 36.1447, longitude: -86.8027)

    /// Inserts a listing row as a database from before "listings-v5" held it: `index` names it, `zip` and
    /// the optional point place it.
    static func insertOldListing(
        _ db: Database,
        _ index: Int,
        zip: String,
        point: GeoPoint? = nil
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO listing (id, sellerID, title, titleKey, description, priceCents, category,
                    condition, size, tags, madeOnCampus, biddingEnabled, anonymous, zipCode, latitude,
                    longitude, imageIDs, status, createdAt, updatedAt, searchTitle, searchDescription,
                    searchTags)
                VALUES (?, 'usr_old', ?, ?, '', 100, 'other', 'new', '', '[]', 0, 0, 0, ?, ?, ?, '[]',
                    'active', ?, ?, ?, '', '')
                """,
            arguments: [
                "lst_old\(index)", "Old \(index)", "old \(index)", zip, point?.latitude, point?.longitude,
                1_767_225_600_000 + index, 1_767_225_600_000 + index, "old \(index)",
            ]
        )
    }

    @Test("Zip-only listings of a database from before listings-v5 become searchable at their centroid")
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        try await makeDatabase(path, before: "listings-v5") { db in
            try Self.insertOldListing(db, 1, zip: "37235", point: GeoPoint(latitude: 36.15, longitude: -86.80))
            try Self.insertOldListing(db, 2, zip: "37232")
            try Self.insertOldListing(db, 3, zip: "37203-1234")
            try Self.insertOldListing(db, 4, zip: "37235")
            try Self.insertOldListing(db, 5, zip: "SW1A 1AA")
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let store = database.listingsStore()

        var filter = ListingFilter()
        filter.near = GeoCircle(center: Self.campus, radiusKm: 5)
        let hits = try await store.searchAll(ListingQuery(filter: filter, sort: .distance), pageSize: 2)
        #expect(hits.map(\.listing.id) == ["lst_old2", "lst_old3", "lst_old1"])
        #expect(hits.map(\.distanceKm) == [0.5, 1.5, 1.5])
        // Nobody's listing gains a point.
        #expect(hits.map(\.listing.location.point) == [nil, nil, GeoPoint(latitude: 36.15, longitude: -86.80)])
        // Exactly what a new database, or the in-memory store, holds for the same listings.
        let points = try await database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, searchLatitude, searchLongitude FROM listing ORDER BY id")
                .map { row -> GeoPoint? in
                    let latitude: Double? = row["searchLatitude"]
                    let longitude: Double? = row["searchLongitude"]
                    return latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
                }
        }
        #expect(
            points == [
                GeoPoint(latitude: 36.15, longitude: -86.80), ZipCentroids.shared.centroid(of: "37232"),
                ZipCentroids.shared.centroid(of: "37203"), nil, nil,
            ]
        )
        let version = try await database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT zipCentroidsVersion FROM listingSearchPointVersion")
        }
        #expect(version == [ZipCentroids.shared.version])
        // Idempotent: opening again, or filling again, changes nothing.
        #expect(try SQLiteListingsStore.fillSearchPoints(database.pool, centroids: .shared) == 0)
    }

    @Test("A new table version refills zip-only listings' points, in batches, then records the version")
    func tableVersionChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        // More zip-only listings than one batch.
        let count = SQLiteListingsStore.searchPointBatchSize * 2 + 7
        try await makeDatabase(path, before: "listings-v5") { db in
            for index in 0..<count { try Self.insertOldListing(db, index, zip: index % 3 == 0 ? "37235" : "37232") }
            try Self.insertOldListing(db, count, zip: "37232", point: Self.campus)
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let filled = try await database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listing WHERE searchLatitude IS NOT NULL")
        }
        let known = (0..<count).filter { $0 % 3 != 0 }.count
        #expect(filled == known + 1)

        // A table where 37232 moved and 37235 exists: every zip-only listing follows, the point listing stays.
        let csv = "zip,latitude,longitude\n37232,36.0,-86.0\n37235,36.5,-86.5\n"
        let moved = try ZipCentroids(csv: Data(csv.utf8), vintage: "test")
        #expect(try SQLiteListingsStore.fillSearchPoints(database.pool, centroids: moved) == count)
        #expect(try SQLiteListingsStore.fillSearchPoints(database.pool, centroids: moved) == 0)
        let (distinct, version) = try await database.pool.read { db in
            (
                try Row.fetchAll(
                    db,
                    sql: "SELECT DISTINCT searchLatitude, searchLongitude FROM listing ORDER BY searchLatitude"
                ).map { [$0[0] as Double?, $0[1] as Double?] },
                try String.fetchOne(db, sql: "SELECT zipCentroidsVersion FROM listingSearchPointVersion")
            )
        }
        #expect(distinct == [[36.0, -86.0], [Self.campus.latitude, Self.campus.longitude], [36.5, -86.5]])
        #expect(version == moved.version)
        // Back to the bundled table, as the next open would do.
        #expect(try SQLiteListingsStore.fillSearchPoints(database.pool, centroids: .shared) == count)
    }

    @Test("The fill reads zip-only listings along the coordinate index, in row order, without sorting")
    func fillUsesTheIndex() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let plan = try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN " + SQLiteListingsStore.zipOnlyListingsSQL,
                arguments: [0, 10]
            ).map { row -> String in row["detail"] }
        }
        #expect(plan.contains { $0.contains("USING INDEX listing_latitude_longitude") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
