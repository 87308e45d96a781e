import Foundation
import PostgresNIO
import SkiffDomain
import SkiffListings
import SkiffTesting
import Testing

@testable import SkiffPostgres

/// The PostgreSQL listings store as several servers use it: each "server" is a ``PostgresStorage`` of
/// its own (its own pool) on one database, so nothing but PostgreSQL settles their races.
@Suite("ListingsStore on PostgreSQL: several servers on one database")
struct ListingsStorePostgresTests {
    typealias F = ListingFixture

    /// Runs `body` with `count` storages on one new database, each opened as a separate server would.
    private func withServers(_ count: Int, _ body: ([PostgresStorage]) async throws -> Void) async throws {
        try await TestPostgres.withStorages(count) { storages, _ in try await body(storages) }
    }

    /// Runs `operation` for each index concurrently; returns what each returned or threw, by index.
    private func race<T: Sendable>(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> T
    ) async -> [Result<T, any Error>] {
        await withTaskGroup(of: (Int, Result<T, any Error>).self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        return (index, .success(try await operation(index)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [Int: Result<T, any Error>] = [:]
            for await (index, result) in group { results[index] = result }
            return (0..<count).compactMap { results[$0] }
        }
    }

    @Test("Three servers mark one listing sold 30 times at once: one transition, one event")
    func markSoldAcrossServers() async throws {
        try await withServers(3) { servers in
            let stores = servers.map { $0.listingsStore() }
            let listing = try await stores[0].createListing(F.listing("Hot item"), requestID: nil)
            let results = await race(30) { index in
                try await stores[index % 3].setStatus(id: listing.id, to: .sold, by: .system, now: F.t0).transitioned
            }
            let transitions = try results.map { try $0.get() }
            #expect(transitions.count(where: { $0 }) == 1)
            for store in stores {
                #expect(try await store.listing(id: listing.id)?.status == .sold)
                #expect(try await store.change(sequence: 1)?.kind == .sold)
                #expect(try await store.change(sequence: 2) == nil)
            }
        }
    }

    @Test("Three servers record changes to 24 listings at once: sequences 1…24 without gaps, in commit order")
    func gaplessSequencesAcrossServers() async throws {
        try await withServers(3) { servers in
            let stores = servers.map { $0.listingsStore() }
            let listings = try await stores[0].create((0..<24).map { F.listing("Item \($0)", at: Double($0)) })
            for listing in listings {
                _ = try await stores[1].saveListing(userID: "usr_watcher", listingID: listing.id, now: F.t0, limit: 500)
            }
            let results = await race(24) { index in
                var changes = ListingChanges()
                changes.priceCents = 500 + Int64(index)
                return try await stores[index % 3].updateListing(
                    id: listings[index].id,
                    sellerID: F.seller,
                    changes: changes,
                    now: F.t0 + 60
                ).event?.sequence
            }
            let sequences = try results.map { try #require(try $0.get()) }
            #expect(sequences.sorted() == Array(1...24))
            let feed = try await stores[2].changes(forUser: "usr_watcher", after: 0, limit: 100)
            #expect(feed.map(\.sequence) == Array(1...24))
            #expect(Set(feed.map(\.listingID)) == Set(listings.map(\.id)))
        }
    }

    @Test("Three servers save 12 listings for one user at once with a limit of 5: exactly 5 are saved")
    func savedLimitAcrossServers() async throws {
        try await withServers(3) { servers in
            let stores = servers.map { $0.listingsStore() }
            let listings = try await stores[0].create((0..<12).map { F.listing("Item \($0)", at: Double($0)) })
            let results = await race(12) { index in
                try await stores[index % 3].saveListing(
                    userID: "usr_1",
                    listingID: listings[index].id,
                    now: F.t0,
                    limit: 5
                )
            }
            let saved = results.filter { if case .success = $0 { true } else { false } }
            #expect(saved.count == 5)
            for result in results {
                if case .failure(let error) = result { #expect(error as? DomainError == ListingsStoreError.savedLimit) }
            }
            #expect(try await stores[1].savedListings(userID: "usr_1", page: PageRequest(size: 50)).items.count == 5)
        }
    }

    @Test("Three servers create with one request id at once: one listing, every call gets it")
    func requestIDAcrossServers() async throws {
        try await withServers(3) { servers in
            let stores = servers.map { $0.listingsStore() }
            let results = await race(9) { index in
                try await stores[index % 3].createListing(
                    F.listing("Desk", id: "lst_race_\(index)"),
                    requestID: "req_1"
                )
            }
            let created = try results.map { try $0.get() }
            #expect(Set(created.map(\.id)).count == 1)
            let mine = try await stores[2].sellerListings(sellerID: F.seller, statuses: [], page: PageRequest(size: 50))
            #expect(mine.items.map(\.id) == [created[0].id])
        }
    }

    @Test("One server attaches images while another deletes unattached ones: an image is one or the other")
    func attachWhileHousekeeping() async throws {
        try await withServers(2) { servers in
            let stores = servers.map { $0.listingsStore() }
            let ids = (0..<10).map { "img_race_\($0)" }
            for id in ids { try await stores[0].putImage(F.image(id: id)) }
            async let deleting = stores[1].deleteUnattachedImages(uploadedBefore: F.t0 + 3600, keeping: [])
            let creations = await race(10) { index in
                try await stores[0].createListing(
                    F.listing("Lamp \(index)") { $0.imageIDs = [ids[index]] },
                    requestID: nil
                )
            }
            let deleted = try await deleting
            var attached = 0
            for (index, result) in creations.enumerated() {
                switch result {
                case .success:
                    attached += 1
                    #expect(try await stores[1].imageHeader(id: ids[index]) != nil, "an attached image was deleted")
                case .failure(let error):
                    #expect(error as? DomainError == ListingsStoreError.imageNotFound(ids[index]))
                    #expect(try await stores[1].imageHeader(id: ids[index]) == nil)
                }
            }
            #expect(attached + deleted == 10)
        }
    }

    @Test("Two servers comment on one listing at once: every comment is kept, each a millisecond after the last")
    func commentsAcrossServers() async throws {
        try await withServers(2) { servers in
            let stores = servers.map { $0.listingsStore() }
            let listing = try await stores[0].createListing(F.listing("Bike"), requestID: nil)
            let results = await race(16) { index in
                try await stores[index % 2].addComment(
                    ListingComment(
                        id: "cmt_\(index)",
                        listingID: listing.id,
                        authorID: "usr_\(index)",
                        text: "Is it still there? \(index)",
                        createdAt: F.t0
                    )
                )
            }
            let added = try results.map { try $0.get().comment }
            // Each saw the comments committed before it: no two share a date.
            #expect(Set(added.map(\.createdAt)).count == 16)
            let stored = try await stores[1].comments(listingID: listing.id, page: PageRequest(size: 100)).items
            let times = stored.map(\.createdAt.millisecondsSince1970)
            #expect(times == (0..<16).map { F.t0.millisecondsSince1970 + Int64($0) })
            #expect(Set(stored.map(\.id)) == Set(added.map(\.id)))
        }
    }

    @Test("256 listings created at once over 64 connections: every one is created (none ABORTED)")
    func manyCreatorsAtOnce() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            var wide = location
            wide.poolSize = 64
            let storage = try await PostgresStorage.open(wide)
            do {
                let store = storage.listingsStore()
                let created = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<256 {
                        group.addTask {
                            let listing = Listing(
                                id: EntityID.make(.listing),
                                sellerID: "usr_seller\(index % 50)",
                                fields: ListingFixture.fields("lamp number \(index)"),
                                createdAt: Date()
                            )
                            return try await store.createListing(listing, requestID: index % 2 == 0 ? nil : "r\(index)")
                                .id
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
                #expect(created.count == 256)
            } catch {
                await storage.close()
                throw error
            }
            await storage.close()
        }
    }

    @Test("Search points follow the ZIP-code table: a new table moves zip-only listings, once")
    func searchPointsFollowTheTable() async throws {
        try await TestPostgres.withDatabase { storage in
            let store = storage.listingsStore()
            let bundled = try ZipCentroids.bundled()
            #expect(try await storage.fillListingsSearchPoints(centroids: bundled) == 0)  // nothing to move
            let zipOnly = try await store.createListing(
                F.listing("Zip lamp") { $0.location.zipCode = "37232" },
                requestID: nil
            )
            let pointed = try await store.createListing(
                F.listing("Point bike") { $0.location.point = GeoPoint(latitude: 36.15, longitude: -86.80) },
                requestID: nil
            )
            #expect(try await storage.fillListingsSearchPoints(centroids: bundled) == 0)  // version recorded
            // What a database written with another table looks like: 37232 placed in San Diego. The
            // zip-only listing moves, the other stays; once only.
            let table = try ZipCentroids(
                csv: Data("zip,latitude,longitude\n37232,32.88,-117.23\n".utf8),
                vintage: "test"
            )
            #expect(try await storage.fillListingsSearchPoints(centroids: table) == 1)
            #expect(try await storage.fillListingsSearchPoints(centroids: table) == 0)
            var filter = ListingFilter()
            filter.near = GeoCircle(center: GeoPoint(latitude: 36.14, longitude: -86.80), radiusKm: 5)
            #expect(try await store.ids(ListingQuery(filter: filter)) == [pointed.id])
            // Opened with the bundled table again: the listing is at 37232's centroid again.
            #expect(try await storage.fillListingsSearchPoints(centroids: bundled) == 1)
            #expect(Set(try await store.ids(ListingQuery(filter: filter))) == [pointed.id, zipOnly.id])

            // Cells ("listings-v2"): PostgreSQL's, from the search points, whoever writes them.
            let centroid = try #require(bundled.centroid(of: "37232"))
            let expected: [String: Int64?] = [
                zipOnly.id: ApproximateLocation.Cell.key(latitude: centroid.latitude, longitude: centroid.longitude),
                pointed.id: ApproximateLocation.Cell.key(latitude: 36.15, longitude: -86.80),
            ]
            #expect(expected.values.allSatisfy { $0 != nil })
            let cells = try await storage.read { db in
                var cells: [String: Int64?] = [:]
                let ids = [zipOnly.id, pointed.id]
                for try await (id, cell) in try await db.query(
                    "SELECT id, search_cell FROM listing WHERE id = ANY(\(ids))",
                    logger: storage.logger
                ).decode((String, Int64?).self) {
                    cells[id] = cell
                }
                return cells
            }
            #expect(cells == expected)
            // And the circle's search reads them (distance order walks the cells).
            filter.near = GeoCircle(center: GeoPoint(latitude: 36.14, longitude: -86.80), radiusKm: 5)
            var query = ListingQuery(filter: filter)
            query.sort = .distance
            #expect(Set(try await store.ids(query)) == [pointed.id, zipOnly.id])
        }
    }
}

/// How a keyword search on PostgreSQL picks between collecting matches and walking an order's index:
/// by the planner's estimate of the matches, not by counting them.
@Suite("Listing search paths on PostgreSQL")
struct PostgresListingSearchPathTests {
    @Test("The estimate finds common words common and rare words rare; both paths return the same pages")
    func estimatesFollowTheData() async throws {
        try await TestPostgres.withDatabase { storage in
            let store = storage.listingsStore()
            for index in 0..<2_000 {
                // "common" in every listing; "rare" in one in a thousand.
                var fields = ListingFixture.fields(index % 1_000 == 0 ? "common rare lamp" : "common lamp \(index)")
                fields.priceCents = Int64(index)
                let listing = Listing(
                    id: "lst_walk\(index)",
                    sellerID: "usr_1",
                    fields: fields,
                    createdAt: ListingFixture.t0.addingTimeInterval(Double(index))
                )
                _ = try await store.createListing(listing, requestID: nil)
            }
            try await storage.withConnection { db in _ = try await db.query("ANALYZE listing", logger: storage.logger) }
            func estimate(_ terms: [String]) async throws -> Int {
                try await storage.read { db in
                    try await ListingsSearchSQL.estimatedMatches(terms, db, storage)
                }
            }
            #expect(try await estimate(["common"]) >= 1_500)
            #expect(try await estimate(["comm"]) >= 1_500)
            #expect(try await estimate(["rare"]) < 60)
            #expect(try await estimate(["common", "ra"]) < 60)

            // Walked (common) or collected (rare), newest first either way.
            let rare = try await store.search(ListingQuery(text: "common rare"), page: try PageRequest(size: 10))
            #expect(rare.items.map(\.listing.id) == ["lst_walk1000", "lst_walk0"])
            let common = try await store.search(ListingQuery(text: "common lamp"), page: try PageRequest(size: 3))
            #expect(common.items.map(\.listing.id) == ["lst_walk1999", "lst_walk1998", "lst_walk1997"])
        }
    }
}

/// Distance order in a circle on PostgreSQL: a walk of the circle's occupied grid cells, band by band.
@Suite("Listing search in a circle on PostgreSQL")
struct PostgresListingCircleTests {
    /// The circle's occupied cells by band, as listing search reads them (`listing.search_cell`).
    static func bands(
        _ near: GeoCircle,
        _ db: PostgresConnection,
        _ storage: PostgresStorage
    ) async throws -> [(distance: Double, cells: [ApproximateLocation.Cell])]? {
        try await PostgresGridCells.bands(
            ListingSearchEngine.grid(near),
            table: "listing",
            column: "search_cell",
            db,
            storage
        )
    }

    @Test(
        "A circle's cells walked on PostgreSQL (band by band): the pages of the in-memory store, in groups too",
        arguments: [[36.14, -86.80], [-33.92, 18.42]]
    )
    func bandWalk(origin: [Double]) async throws {
        try await TestPostgres.withDatabase { storage in
            // The reference checks every candidate and sorts (no walk of cells).
            let reference = InMemoryListingsStore(searchCosts: .alwaysCollect)
            let store = storage.listingsStore()
            var random = SeededGenerator(seed: 0xCE_11_2026)
            let corpus = SQLiteListingsCellsTests.circleCorpus(origin: origin, &random)
            for target in [reference, store] as [any ListingsStore] {
                try await SQLiteListingsCellsTests.fill(target, corpus)
            }
            // The plans' estimates read the statistics: these, not whenever autovacuum gets to it.
            try await storage.withConnection { db in _ = try await db.query("ANALYZE listing", logger: storage.logger) }
            /// Every page of a search read by the band walk alone, `groupSize` arms per statement.
            func walked(_ query: ListingQuery, pageSize: Int, groupSize: Int) async throws -> [ListingSearchHit] {
                var hits: [ListingSearchHit] = []
                var token: String?
                repeat {
                    let compiled = try CompiledListingQuery(query, page: try PageRequest(size: pageSize, token: token))
                    let near = try #require(compiled.query.filter.near)
                    let page = try await storage.read { db in
                        let bands = try #require(try await Self.bands(near, db, storage))
                        let walk = try await PostgresListingsStore.bandWalk(
                            compiled,
                            bands: bands,
                            size: pageSize,
                            groupSize: groupSize,
                            statementBudget: .max,
                            db,
                            storage
                        )
                        return ListingSearchEngine.page(try #require(walk), compiled, size: pageSize)
                    }
                    hits += page.items
                    token = page.nextPageToken
                } while token != nil
                return hits
            }
            var plans: [String: Int] = [:]
            var paged = 0
            for round in 0..<60 {
                var query = SQLiteListingsCellsTests.circleQuery(round: round, origin: origin, &random)
                // Every status now and then: three arms per cell.
                if round % 5 == 4 { query.filter.statuses = [.active, .sold, .withdrawn] }
                let pageSize = Int.random(in: 5...40, using: &random)
                let expected = try await reference.searchAll(query, pageSize: pageSize)
                let found = try await store.searchAll(query, pageSize: pageSize)
                #expect(found.map(\.listing) == expected.map(\.listing), "round \(round): \(query)")
                #expect(found.map(\.distanceKm) == expected.map(\.distanceKm), "round \(round)")
                if expected.count > pageSize { paged += 1 }
                let compiled = try CompiledListingQuery(query, page: try PageRequest(size: pageSize))
                let plan = try await storage.read { db in
                    try await PostgresListingsStore.circlePlan(compiled, size: pageSize, db, storage)
                }
                switch plan {
                case .cells: plans["cells", default: 0] += 1
                case .matches: plans["matches", default: 0] += 1
                case .walk: plans["walk", default: 0] += 1
                case .planner: plans["planner", default: 0] += 1
                }
                guard query.sort == .distance || query.sort == .newest else { continue }
                // Two arms per statement (many statements per page) every third round: the suite's time.
                for groupSize in round % 3 == 0
                    ? [PostgresGridCells.armsPerStatement, 2] : [PostgresGridCells.armsPerStatement]
                {
                    let hits = try await walked(query, pageSize: pageSize, groupSize: groupSize)
                    #expect(
                        hits.map(\.listing) == expected.map(\.listing),
                        "round \(round), \(groupSize) arms: \(query)"
                    )
                    #expect(hits.map(\.distanceKm) == expected.map(\.distanceKm), "round \(round), \(groupSize) arms")
                }
            }
            // Every way of reading was taken, and gave the reference's pages.
            #expect(plans["cells", default: 0] >= 15, "\(plans)")
            #expect(plans["matches", default: 0] >= 3, "\(plans)")
            #expect(plans["walk", default: 0] >= 2, "\(plans)")
            #expect(plans["planner", default: 0] >= 3, "\(plans)")
            #expect(paged >= 20)

            // A walk that would take more statements than its budget gives up (the store then reads the
            // planner's way): a word no listing has, in every cell of the widest circle, one cell per
            // statement.
            var query = ListingQuery(text: "zzzz")
            query.sort = .distance
            query.filter.near = GeoCircle(center: GeoPoint(latitude: origin[0], longitude: origin[1]), radiusKm: 500)
            let compiled = try CompiledListingQuery(query, page: try PageRequest(size: 10))
            let near = try #require(query.filter.near)
            for (budget, completes) in [(3, false), (Int.max, true)] {
                let walk = try await storage.read { db in
                    let bands = try #require(try await Self.bands(near, db, storage))
                    #expect(bands.reduce(0) { $0 + $1.cells.count } > 3)
                    return try await PostgresListingsStore.bandWalk(
                        compiled,
                        bands: bands,
                        size: 10,
                        groupSize: 1,
                        statementBudget: budget,
                        db,
                        storage
                    )
                }
                #expect((walk != nil) == completes)
                #expect(walk?.isEmpty ?? true)
            }
            #expect(try await store.search(query, page: try PageRequest(size: 10)).items.isEmpty)
        }
    }
}
