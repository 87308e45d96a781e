import Foundation
import SkiffDomain
import SkiffListings
import SkiffPostgres
import SkiffSQLite
import SkiffTesting
import Testing

/// The in-memory, SQLite and PostgreSQL stores side by side on one seeded random corpus: every random
/// search (keywords through FTS5, through PostgreSQL's GIN index and through the Swift scan, filters,
/// sorts, page sizes) must give identical pages.
@Suite("ListingsStore differential (in-memory vs SQLite vs PostgreSQL)")
struct ListingsStoreDifferentialTests {
    static let words = [
        "bike", "bicycle", "lamp", "desk", "chair", "crème", "brûlée", "café", "Straße", "naïve", "vintage",
        "red", "blue", "textbook", "calculus", "iPhone", "ticket", "concert", "jacket", "winter", "x2", "2024",
        "école", "ÉCOLE", "résumé", "mini-fridge", "dorm", "couch", "lego", "hand-made",
    ]
    static let queryWords = [
        "bike", "bi", "b", "cafe", "CAFÉ", "creme", "brul", "strasse", "straße", "naive", "vint", "red", "re",
        "x2", "2024", "20", "ecole", "resume", "mini", "fridge", "dorm couch", "lamp desk", "lego", "hand made",
        "iphone", "zzz", "bike red", "red bi", "café crème", "e",
    ]

    @Test("Random corpus, random queries: identical pages on every backend")
    func equivalence() async throws {
        var random = SeededGenerator(seed: 0x5EED_2026)
        // A few thousand listings: enough for the in-memory indexes to take both paths (walking an order's
        // index, sorting few candidates) and to split their chunks; still a few seconds.
        let corpus = (0..<3_000).map { index in Self.listing(index, &random) }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        try await TestPostgres.withDatabase { postgres in
            // SQLite first; then the in-memory store as it chooses, and forced down each of its two paths;
            // then PostgreSQL.
            let stores: [any ListingsStore] = [
                database.listingsStore(), InMemoryListingsStore(), InMemoryListingsStore(searchCosts: .alwaysCollect),
                InMemoryListingsStore(searchCosts: .alwaysWalk), postgres.listingsStore(),
            ]
            try await Self.compare(stores, corpus: corpus, random: &random)
        }
    }

    /// Fills every store with the corpus (then updates and closes some listings), and checks that 150
    /// random searches give every store the pages the first one gives.
    static func compare(
        _ stores: [any ListingsStore],
        corpus: [Listing],
        random: inout SeededGenerator
    ) async throws {
        for store in stores {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for part in stride(from: 0, to: corpus.count, by: 250) {
                    let chunk = corpus[part..<min(part + 250, corpus.count)]
                    group.addTask { _ = try await store.create(Array(chunk)) }
                }
                try await group.waitForAll()
            }
            for (index, listing) in corpus.enumerated() where index % 11 == 1 {
                var changes = ListingChanges()
                changes.title = "Updated " + listing.title
                changes.tags = ["updated"]
                _ = try await store.updateListing(
                    id: listing.id,
                    sellerID: listing.sellerID,
                    changes: changes,
                    now: ListingFixture.t0
                )
            }
            for (index, listing) in corpus.enumerated() where index % 7 == 0 {
                _ = try await store.setStatus(
                    id: listing.id,
                    to: index % 2 == 0 ? .sold : .withdrawn,
                    by: .system,
                    now: ListingFixture.t0
                )
            }
        }
        var nonEmpty = 0
        var zipOnlyNear = 0
        for round in 0..<150 {
            let query = Self.query(&random)
            let pageSize = Int.random(in: 8...40, using: &random)  // a few pages each: enough for paging
            let sqlite = try await stores[0].searchAll(query, pageSize: pageSize)
            var memory: [ListingSearchHit] = []
            for (variant, store) in stores.dropFirst().enumerated() {
                memory = try await store.searchAll(query, pageSize: pageSize)
                #expect(memory.map(\.listing) == sqlite.map(\.listing), "round \(round), store #\(variant): \(query)")
                #expect(memory.map(\.distanceKm) == sqlite.map(\.distanceKm), "round \(round), store #\(variant)")
            }
            if !memory.isEmpty { nonEmpty += 1 }
            if query.filter.near != nil { zipOnlyNear += memory.count { $0.listing.location.point == nil } }
        }
        #expect(nonEmpty > 50, "the random queries should mostly find something")
        #expect(zipOnlyNear > 50, "circles should find zip-only listings at their zip codes' centroids")
    }

    /// Zip codes of zip-only listings: Nashville ZCTAs at 0.4–14 km from the search centres' middle, one
    /// ZIP+4, and Vanderbilt's 37235, which has no centroid.
    static let zipCodes = ["37232", "37203", "37212", "37209", "37235", "37208-1234", "37205", "37219"]

    static func listing(_ index: Int, _ random: inout SeededGenerator) -> Listing {
        func pick(_ count: Int) -> [String] { (0..<count).map { _ in words.randomElement(using: &random)! } }
        var fields = ListingFixture.fields(pick(Int.random(in: 1...4, using: &random)).joined(separator: " "))
        fields.description = pick(Int.random(in: 0...8, using: &random)).joined(separator: ", ")
        fields.tags = Array(Set(pick(Int.random(in: 0...3, using: &random)).map { $0.lowercased() })).sorted()
        fields.priceCents = Int64.random(in: 0...20, using: &random) * 500
        fields.category = ListingCategory.allCases.randomElement(using: &random)!
        fields.condition = ListingCondition.allCases.randomElement(using: &random)!
        fields.madeOnCampus = Bool.random(using: &random)
        fields.anonymous = Int.random(in: 0..<5, using: &random) == 0
        if Int.random(in: 0..<4, using: &random) > 0 {
            fields.location.point = GeoPoint(
                latitude: 36.14 + Double.random(in: -0.5...0.5, using: &random),
                longitude: -86.80 + Double.random(in: -0.5...0.5, using: &random)
            )
        } else {
            // Zip-only: searched at the zip code's centroid, or not at all for one without (37235). Chosen
            // by index, so that the random stream (and the rest of the corpus) stays as it was.
            fields.location.zipCode = zipCodes[index % zipCodes.count]
        }
        return Listing(
            id: EntityID.make(.listing, using: &random),
            sellerID: "usr_\(index % 9)",
            fields: fields,
            // Many equal timestamps, to exercise the tie-breaks.
            createdAt: ListingFixture.t0.addingTimeInterval(Double(Int.random(in: 0..<60, using: &random)) * 60)
        )
    }

    static func query(_ random: inout SeededGenerator) -> ListingQuery {
        var query = ListingQuery()
        if Int.random(in: 0..<3, using: &random) > 0 { query.text = queryWords.randomElement(using: &random)! }
        var filter = ListingFilter()
        if Int.random(in: 0..<4, using: &random) == 0 {
            filter.categories = Set((0..<2).map { _ in ListingCategory.allCases.randomElement(using: &random)! })
        }
        if Int.random(in: 0..<5, using: &random) == 0 {
            filter.conditions = [ListingCondition.allCases.randomElement(using: &random)!]
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            filter.minPriceCents = Int64.random(in: 0...5000, using: &random)
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            filter.maxPriceCents = Int64.random(in: 2000...10000, using: &random)
        }
        if Int.random(in: 0..<6, using: &random) == 0 {
            filter.tags = [words.randomElement(using: &random)!.lowercased()]
        }
        if Int.random(in: 0..<6, using: &random) == 0 { filter.madeOnCampus = Bool.random(using: &random) }
        if Int.random(in: 0..<6, using: &random) == 0 {
            filter.sellerID = "usr_\(Int.random(in: 0..<9, using: &random))"
        }
        if Int.random(in: 0..<4, using: &random) == 0 { filter.statuses = [.sold, .active] }
        if Int.random(in: 0..<5, using: &random) == 0 {
            filter.postedSince = ListingFixture.t0.addingTimeInterval(
                Double(Int.random(in: 0..<60, using: &random)) * 60
            )
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            filter.near = GeoCircle(
                center: GeoPoint(
                    latitude: 36.14 + Double.random(in: -0.3...0.3, using: &random),
                    longitude: -86.80 + Double.random(in: -0.3...0.3, using: &random)
                ),
                radiusKm: Double.random(in: 1...40, using: &random)
            )
        }
        query.filter = filter
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.viewerID = "usr_\(Int.random(in: 0..<9, using: &random))"
        }
        var sorts: [ListingSort] = [.newest, .priceAscending, .priceDescending, .title]
        if !SearchTextProbe.isEmpty(query.text) { sorts.append(.relevance) }
        if filter.near != nil { sorts.append(.distance) }
        query.sort = sorts.randomElement(using: &random)!
        return query
    }
}

/// Whether a query has words, without reaching into the package's tokenizer.
enum SearchTextProbe {
    static func isEmpty(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
