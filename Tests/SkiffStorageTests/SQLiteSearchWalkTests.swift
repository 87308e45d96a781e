import Foundation
import GRDB
import SkiffDomain
import SkiffListings
import SkiffTesting
import Testing

@testable import SkiffSQLite

/// The two ways SQLite listing search finds a page — collecting the keyword matches (FTS5) and walking an
/// order index while probing each listing's words (`listingWord`) — return the same rows, and the tables
/// the walk relies on follow every insert and update.
@Suite("SQLite search: walking an order index")
struct SQLiteSearchWalkTests {
    /// A database with `count` random listings, some of them edited afterwards (new words, category, price).
    static func database(
        _ directory: TemporaryDirectory,
        count: Int,
        edits: Int
    ) async throws -> (SQLiteDatabase, [Listing]) {
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        let store = database.listingsStore()
        var random = SeededGenerator(seed: 77)
        let listings = (0..<count).map { ListingsStoreDifferentialTests.listing($0, &random) }
        for listing in listings { _ = try await store.createListing(listing, requestID: nil) }
        for listing in listings.shuffled(using: &random).prefix(edits) {
            var changes = ListingChanges()
            let words = ListingsStoreDifferentialTests.words
            changes.title = (0..<3).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            changes.tags = [words.randomElement(using: &random)!.lowercased()]
            changes.category = ListingCategory.allCases.randomElement(using: &random)!
            changes.priceCents = Int64.random(in: 0...20, using: &random) * 500
            _ = try await store.updateListing(
                id: listing.id,
                sellerID: listing.sellerID,
                changes: changes,
                now: ListingFixture.t0.addingTimeInterval(7_200)
            )
        }
        return (database, listings)
    }

    @Test("Walking and collecting return the same rows for every walkable shape, first and later pages")
    func walkEqualsCollect() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, _) = try await Self.database(directory, count: 1_500, edits: 150)
        defer { try? database.close() }
        let store = database.listingsStore()
        var random = SeededGenerator(seed: 78)
        var compared = 0
        var walkedWithWords = 0
        var walkedCircles = 0
        var readRanges = 0
        for _ in 0..<400 {
            var query = ListingsStoreDifferentialTests.query(&random)
            // Walkable shapes: no seller or tags, one status; often a single category (the category-led
            // indexes), often two words (a word and a prefix); a circle in one search of three.
            query.filter.sellerID = nil
            query.filter.tags = []
            if query.filter.statuses.count > 1 { query.filter.statuses = [] }
            if Bool.random(using: &random) {
                query.filter.categories = [ListingCategory.allCases.randomElement(using: &random)!]
            }
            if Int.random(in: 0..<3, using: &random) == 0 {
                let words = ListingsStoreDifferentialTests.words
                let last = words.randomElement(using: &random)!.lowercased()
                query.text =
                    words.randomElement(using: &random)! + " "
                    + String(last.prefix(Int.random(in: 1...4, using: &random)))
            }
            if query.sort == .distance { query.sort = .newest }
            let size = Int.random(in: 1...12, using: &random)
            let first = try await store.search(query, page: try PageRequest(size: size))
            var pages = [try PageRequest(size: size)]
            if let token = first.nextPageToken { pages.append(try PageRequest(size: size, token: token)) }
            for page in pages {
                let compiled = try CompiledListingQuery(query, page: page)
                guard let index = ListingSearchSQL.walkIndex(compiled) else { continue }
                // With a price range, reading the range on the price index (and sorting it) too.
                let range = query.filter.minPriceCents != nil || query.filter.maxPriceCents != nil
                let priceIndex = query.filter.categories.count == 1 ? "listing_category_price" : "listing_price"
                let plans: [ListingSearchSQL.Plan] =
                    [.planner, .collect, .walk(index: index)] + (range ? [.walk(index: priceIndex)] : [])
                let results = try await database.pool.read { db in
                    try plans.map { plan in
                        let statement = ListingSearchSQL.statement(compiled, limit: size + 1, plan: plan)
                        return try String.fetchAll(
                            db,
                            sql: "SELECT id FROM (\(statement.sql))",
                            arguments: statement.arguments
                        )
                    }
                }
                let a = results[0]
                #expect(results[1] == a, "collect: \(query.sort) \"\(query.text)\" \(query.filter) page \(page)")
                #expect(results[2] == a, "walk: \(query.sort) \"\(query.text)\" \(query.filter) page \(page)")
                #expect(
                    results.dropFirst(3).allSatisfy { $0 == a },
                    "range: \(query.sort) \(query.filter) page \(page)"
                )
                if range, !a.isEmpty { readRanges += 1 }
                if query.filter.near != nil, !a.isEmpty { walkedCircles += 1 }
                compared += 1
                if !compiled.terms.isEmpty, !a.isEmpty { walkedWithWords += 1 }
            }
        }
        #expect(compared > 300)
        #expect(walkedWithWords > 50)
        #expect(walkedCircles > 40)
        #expect(readRanges > 40)
    }

    @Test("listingWord holds each listing's distinct tokens and listingWordCount their counts, after edits")
    func wordTablesFollowWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, listings) = try await Self.database(directory, count: 300, edits: 120)
        defer { try? database.close() }
        let store = database.listingsStore()
        let (stored, counts, grouped) = try await database.pool.read { db in
            var stored: [String: Set<String>] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT listing.id, listingWord.word FROM listingWord JOIN listing USING (docID)"
            ) {
                stored[row["id"], default: []].insert(row["word"])
            }
            let counts = try Row.fetchAll(db, sql: "SELECT word, listings FROM listingWordCount ORDER BY word")
                .map { "\($0["word"] as String)=\($0["listings"] as Int)" }
            let grouped = try Row.fetchAll(
                db,
                sql: "SELECT word, COUNT(*) AS n FROM listingWord GROUP BY word ORDER BY word"
            ).map { "\($0["word"] as String)=\($0["n"] as Int)" }
            return (stored, counts, grouped)
        }
        #expect(counts == grouped)
        for original in listings {
            let listing = try #require(try await store.listing(id: original.id))
            let tokens = SearchText.DocumentTokens(listing.fields)
            let expected = Set(tokens.title + tokens.description + tokens.tags)
            #expect(stored[listing.id, default: []] == expected, "\(listing.title)")
        }
    }

    @Test("The plan walks for no keywords, collects rare keywords, walks common ones")
    func planFollowsEstimates() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.listingsStore()
        for index in 0..<2_000 {
            // "common" in every listing; "rare" in one in a thousand; "tenth" in one in ten; "twentieth" in
            // one in twenty.
            let extra = index % 10 == 5 ? " tenth" : index % 20 == 7 ? " twentieth" : ""
            var fields = ListingFixture.fields(
                index % 1_000 == 0 ? "common rare lamp" : "common lamp \(index)\(extra)",
                point: GeoPoint(latitude: 36.1447 + Double(index % 10) * 0.001, longitude: -86.8027)
            )
            fields.priceCents = Int64(index)
            let listing = Listing(
                id: "lst_walk\(index)",
                sellerID: "usr_1",
                fields: fields,
                createdAt: ListingFixture.t0.addingTimeInterval(Double(index))
            )
            _ = try await store.createListing(listing, requestID: nil)
        }
        func plan(
            _ text: String,
            sort: ListingSort = .newest,
            near: GeoCircle? = nil
        ) async throws -> ListingSearchSQL.Plan {
            var filter = ListingFilter()
            filter.near = near
            let compiled = try CompiledListingQuery(
                ListingQuery(text: text, filter: filter, sort: sort),
                page: try PageRequest(size: 10)
            )
            return try await database.pool.read { db in
                let occupied = try near.flatMap { try SQLiteListingsStore.occupiedCells(db, $0) }
                return try ListingSearchSQL.plan(compiled, size: 10, occupied: occupied, db)
            }
        }
        #expect(try await plan("") == .walk(index: "listing_newest"))
        #expect(try await plan("", sort: .title) == .walk(index: "listing_title"))
        #expect(try await plan("rare") == .collect)
        #expect(try await plan("common") == .walk(index: "listing_newest"))
        #expect(try await plan("comm", sort: .priceDescending) == .walk(index: "listing_price"))
        #expect(try await plan("common ra") == .collect)
        // A repeated word keeps the listings it keeps once: 200 here, which a walk finds a page of sooner
        // than collecting reads them (as independent words, 20: collecting would win).
        #expect(try await plan("tenth tenth") == .walk(index: "listing_newest"))
        #expect(try await plan("tenth te") == .walk(index: "listing_newest"))
        #expect(try await plan("rare rare") == .collect)
        // Each listing a walk passes is probed for its words, a read at a random place like a row: for 100
        // matches, reading them costs less than walking about 220 listings and probing each.
        #expect(try await plan("twentieth") == .collect)
        #expect(try await plan("common", sort: .relevance) == .impact(word: "common"))
        #expect(try await plan("rare", sort: .relevance) == .scores)
        // A circle around every listing walks the order; one around none of them reads its cells (none).
        let here = GeoCircle(center: GeoPoint(latitude: 36.1447, longitude: -86.8027), radiusKm: 2)
        let there = GeoCircle(center: GeoPoint(latitude: 36.3, longitude: -86.8027), radiusKm: 2)
        #expect(try await plan("", sort: .title, near: here) == .walk(index: "listing_title"))
        #expect(try await plan("", sort: .priceAscending, near: here) == .walk(index: "listing_price"))
        #expect(try await plan("", near: there) == .cells)
        #expect(try await plan("", sort: .priceAscending, near: there) == .cells)
        #expect(try await plan("rare", near: here) == .collect)
        #expect(try await plan("", sort: .distance, near: here) == .planner)
        // Both plans agree on what they return.
        let rare = try await store.search(ListingQuery(text: "common rare"), page: try PageRequest(size: 10))
        #expect(rare.items.map(\.listing.id) == ["lst_walk1000", "lst_walk0"])
    }
}
