import Foundation
import GRDB
import SkiffDomain
import SkiffListings
import SkiffTesting
import Testing

@testable import SkiffSQLite

/// "listings-v6": each listing's grid cell, the occupied cells with their counts, and the search in distance
/// order that walks a circle's cells band by band.
@Suite("SQLite: listings-v6, distance order by grid cells")
struct SQLiteListingsCellsTests {
    /// Every listing's stored cell by id, and whether `listingCell` holds exactly the counts of the cells.
    static func cells(_ database: SQLiteDatabase) async throws -> (byID: [String: Int64?], counted: Bool) {
        try await database.pool.read { db in
            var byID: [String: Int64?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, cell FROM listing") {
                byID[row[0]] = .some(row[1])
            }
            let counted = try Row.fetchAll(
                db,
                sql: "SELECT cell, COUNT(*) FROM listing WHERE cell IS NOT NULL GROUP BY cell ORDER BY cell"
            ).map { [$0[0] as Int64, $0[1] as Int64] }
            let kept = try Row.fetchAll(db, sql: "SELECT cell, listings FROM listingCell ORDER BY cell")
                .map { [$0[0] as Int64, $0[1] as Int64] }
            return (byID, counted == kept)
        }
    }

    /// The cell key a search point's listing must have.
    static func key(_ point: GeoPoint?) -> Int64? {
        point.map { GridCells.key(ApproximateLocation.cell(latitude: $0.latitude, longitude: $0.longitude)!) }
    }

    @Test(
        "A cell's key gives the cell back, in every hemisphere, and a row's neighbouring cells have neighbouring keys"
    )
    func cellKeys() throws {
        for (latitude, longitude) in [(36.14, -86.80), (-33.92, 18.42), (-0.004, -179.99), (0.004, 179.99), (89.99, 0)]
        {
            let cell = try #require(ApproximateLocation.cell(latitude: latitude, longitude: longitude))
            #expect(ApproximateLocation.Cell(key: cell.key) == cell, "\(latitude), \(longitude)")
            let east = ApproximateLocation.Cell(row: cell.row, column: cell.column + 1)
            #expect(east.key == cell.key + 1)
        }
    }

    @Test("listings-v6 stores each listing's search-point cell and counts per cell; writes and ZIP tables keep both")
    func migrationAndUpkeep() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        let campus = SQLiteListingsMigrationTests.campus
        let south = GeoPoint(latitude: -33.9249, longitude: 18.4241)
        // From before listings-v5: points (two in one cell), zip-only listings (a known zip, an unknown one).
        try await makeDatabase(path, before: "listings-v5") { db in
            try SQLiteListingsMigrationTests.insertOldListing(db, 1, zip: "37235", point: campus)
            try SQLiteListingsMigrationTests.insertOldListing(
                db,
                2,
                zip: "37235",
                point: GeoPoint(latitude: campus.latitude + 0.0001, longitude: campus.longitude)
            )
            try SQLiteListingsMigrationTests.insertOldListing(db, 3, zip: "37232")
            try SQLiteListingsMigrationTests.insertOldListing(db, 4, zip: "SW1A 1AA")
            try SQLiteListingsMigrationTests.insertOldListing(db, 5, zip: "37235", point: south)
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        var stored = try await Self.cells(database)
        #expect(stored.counted)
        let centroid = ZipCentroids.shared.centroid(of: "37232")
        #expect(stored.byID["lst_old1"] == .some(Self.key(campus)))
        #expect(stored.byID["lst_old2"] == .some(Self.key(campus)))
        // The zip-only listing's cell is its centroid's, filled at open with its search point.
        #expect(stored.byID["lst_old3"] == .some(Self.key(centroid)))
        #expect(stored.byID["lst_old4"] == .some(nil))
        #expect(stored.byID["lst_old5"] == .some(Self.key(south)))
        #expect(Self.key(south).map { $0 < 0 } == true)

        // Creating, moving, dropping a point for a zip code and deleting keep the cells and their counts.
        let store = database.listingsStore()
        let created = try await store.createListing(
            ListingFixture.listing("Lamp") { $0.location = ListingLocation(zipCode: "37203", point: south) },
            requestID: nil
        )
        var moved = ListingChanges()
        moved.location = ListingLocation(zipCode: "37203", point: GeoPoint(latitude: 36.2, longitude: -86.7))
        _ = try await store.updateListing(id: "lst_old1", sellerID: "usr_old", changes: moved, now: Fixture.t0)
        var zipOnly = ListingChanges()
        zipOnly.location = ListingLocation(zipCode: "37203")
        _ = try await store.updateListing(id: "lst_old5", sellerID: "usr_old", changes: zipOnly, now: Fixture.t0)
        stored = try await Self.cells(database)
        #expect(stored.counted)
        #expect(stored.byID[created.id] == .some(Self.key(south)))
        #expect(stored.byID["lst_old1"] == .some(Self.key(GeoPoint(latitude: 36.2, longitude: -86.7))))
        #expect(stored.byID["lst_old5"] == .some(Self.key(ZipCentroids.shared.centroid(of: "37203"))))
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM listing WHERE id IN (?, ?)", arguments: [created.id, "lst_old2"])
        }
        stored = try await Self.cells(database)
        #expect(stored.counted)

        // A new ZIP-code table moves the zip-only listings' cells with their points.
        let csv = "zip,latitude,longitude\n37232,36.0,-86.0\n37203,36.5,-86.5\n"
        let table = try ZipCentroids(csv: Data(csv.utf8), vintage: "test")
        #expect(try SQLiteListingsStore.fillSearchPoints(database.pool, centroids: table) == 2)
        stored = try await Self.cells(database)
        #expect(stored.counted)
        #expect(stored.byID["lst_old3"] == .some(Self.key(GeoPoint(latitude: 36.0, longitude: -86.0))))
        #expect(stored.byID["lst_old5"] == .some(Self.key(GeoPoint(latitude: 36.5, longitude: -86.5))))
    }

    @Test(
        "A circle's cells walked (band by band in distance order): the pages of the in-memory store, in groups too",
        arguments: [[36.14, -86.80], [-33.92, 18.42]]
    )
    func bandWalk(origin: [Double]) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        // The reference checks every candidate and sorts (no walk of cells); then SQLite, then the in-memory store's
        // own walk of the cells.
        let stores: [any ListingsStore] = [
            InMemoryListingsStore(searchCosts: .alwaysCollect), database.listingsStore(),
            InMemoryListingsStore(searchCosts: .alwaysWalk),
        ]
        var random = SeededGenerator(seed: 0xCE_11_2026)
        let corpus = Self.circleCorpus(origin: origin, &random)
        for store in stores { try await Self.fill(store, corpus) }
        let shapes = BoundedStatementShapes()
        /// Every page of a search read by the band walk alone, `groupSize` arms per statement.
        func walked(_ query: ListingQuery, pageSize: Int, groupSize: Int) async throws -> [ListingSearchHit] {
            var hits: [ListingSearchHit] = []
            var token: String?
            repeat {
                let compiled = try CompiledListingQuery(query, page: try PageRequest(size: pageSize, token: token))
                let page = try await database.pool.read { db in
                    let near = try #require(compiled.query.filter.near)
                    let occupied = try #require(try SQLiteListingsStore.occupiedCells(db, near))
                    let walk = try SQLiteListingsStore.bandWalk(
                        db,
                        compiled,
                        occupied: occupied,
                        size: pageSize,
                        shapes: shapes,
                        groupSize: groupSize
                    )
                    return ListingSearchEngine.page(walk, compiled, size: pageSize)
                }
                hits += page.items
                token = page.nextPageToken
            } while token != nil
            return hits
        }
        var chosen = 0
        var paged = 0
        for round in 0..<60 {
            let query = Self.circleQuery(round: round, origin: origin, &random)
            let pageSize = Int.random(in: 5...40, using: &random)
            let expected = try await stores[0].searchAll(query, pageSize: pageSize)
            for (number, store) in stores.enumerated().dropFirst() {
                let found = try await store.searchAll(query, pageSize: pageSize)
                #expect(found.map(\.listing) == expected.map(\.listing), "round \(round), store \(number): \(query)")
                #expect(found.map(\.distanceKm) == expected.map(\.distanceKm), "round \(round), store \(number)")
            }
            for groupSize in [SQLiteListingsStore.armsPerStatement, 2] {
                let hits = try await walked(query, pageSize: pageSize, groupSize: groupSize)
                #expect(hits.map(\.listing) == expected.map(\.listing), "round \(round), \(groupSize) arms: \(query)")
                #expect(hits.map(\.distanceKm) == expected.map(\.distanceKm), "round \(round), \(groupSize) arms")
            }
            let compiled = try CompiledListingQuery(query, page: try PageRequest(size: pageSize))
            let plan = try await database.pool.read { [query] db in
                let occupied = try SQLiteListingsStore.occupiedCells(db, try #require(query.filter.near))
                return query.sort == .distance
                    ? try SQLiteListingsStore.distancePlan(db, compiled, size: pageSize, occupied: occupied)
                    : try ListingSearchSQL.plan(compiled, size: pageSize, occupied: occupied, db)
            }
            if plan == .cells {
                chosen += 1
            }
            if expected.count > pageSize { paged += 1 }
        }
        #expect(chosen >= 15)
        #expect(paged >= 20)
    }

    /// A point within `metres` north–south and east–west of `origin`.
    static func point(_ origin: [Double], _ random: inout SeededGenerator, within metres: Double) -> GeoPoint {
        let latitude = origin[0] + Double.random(in: -metres...metres, using: &random) / 111_195
        let east = Double.random(in: -metres...metres, using: &random) / (111_195 * cos(latitude * .pi / 180))
        return GeoPoint(latitude: latitude, longitude: origin[1] + east)
    }

    /// 900 listings over an 8 km square around `origin` (about 50 cells); near Nashville one in eight is
    /// zip-only (at its centroid, or nowhere for 37235); some anonymous.
    static func circleCorpus(origin: [Double], _ random: inout SeededGenerator) -> [Listing] {
        (0..<900).map { index in
            var listing = ListingsStoreDifferentialTests.listing(index, &random)
            if origin[0] < 0 || index % 8 != 0 { listing.fields.location.point = point(origin, &random, within: 4_000) }
            if origin[0] > 0, index % 8 == 0 { listing.fields.location.point = nil }
            return listing
        }
    }

    /// Creates the corpus in `store`, then marks one listing in seven sold or withdrawn.
    static func fill(_ store: any ListingsStore, _ corpus: [Listing]) async throws {
        _ = try await store.create(corpus)
        for (index, listing) in corpus.enumerated() where index % 7 == 0 {
            _ = try await store.setStatus(
                id: listing.id,
                to: index % 2 == 0 ? .sold : .withdrawn,
                by: .system,
                now: ListingFixture.t0
            )
        }
    }

    /// A random search in a circle of 0.4–500 km around `origin`: two rounds in three in distance order,
    /// the others newest, by price or by title (one band); one round in three with no filter but the circle
    /// and the statuses.
    static func circleQuery(round: Int, origin: [Double], _ random: inout SeededGenerator) -> ListingQuery {
        var query = ListingsStoreDifferentialTests.query(&random)
        query.filter.near = GeoCircle(
            center: point(origin, &random, within: 3_000),
            radiusKm: [0.4, 1, 2.5, 4, 8, 500].randomElement(using: &random)!
        )
        if round % 3 != 2 {
            query.sort = .distance
        } else if query.sort == .distance || query.sort == .relevance {
            query.sort = .newest
        }
        if round % 3 == 0 {
            let statuses = query.filter.statuses
            query.text = ""
            query.filter = ListingFilter()
            query.filter.statuses = statuses
            query.filter.near = GeoCircle(center: point(origin, &random, within: 3_000), radiusKm: 2.5)
        }
        return query
    }
}
