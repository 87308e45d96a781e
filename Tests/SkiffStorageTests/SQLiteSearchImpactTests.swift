import Foundation
import GRDB
import SkiffDomain
import SkiffListings
import SkiffTesting
import Testing

@testable import SkiffSQLite

/// Relevance search for one word on SQLite walks the word's rows of `listingWordImpact` (the impact-ordered
/// word index, "listings-v7"), which hold each listing's words with their points: the walk returns what
/// scoring every match returns, and the rows follow every write.
@Suite("SQLite search: relevance from the impact-ordered word index")
struct SQLiteSearchImpactTests {
    /// A database of `count` random listings with some edited (``SQLiteSearchWalkTests/database(_:count:edits:)``),
    /// every fifth sold or withdrawn, and two deleted; with the listings left, as stored.
    static func database(_ directory: TemporaryDirectory, count: Int) async throws -> (SQLiteDatabase, [Listing]) {
        let (database, listings) = try await SQLiteSearchWalkTests.database(directory, count: count, edits: count / 3)
        let store = database.listingsStore()
        for (index, listing) in listings.enumerated() where index % 5 == 2 {
            _ = try await store.setStatus(
                id: listing.id,
                to: index % 2 == 0 ? .sold : .withdrawn,
                by: .system,
                now: ListingFixture.t0.addingTimeInterval(9_000)
            )
        }
        let deleted = [listings[0].id, listings[count / 2].id]
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM listing WHERE id IN (?, ?)", arguments: StatementArguments(deleted))
        }
        // The listings as stored now (for references computed in Swift).
        var stored: [Listing] = []
        for listing in listings where !deleted.contains(listing.id) {
            stored.append(try #require(try await store.listing(id: listing.id)))
        }
        return (database, stored)
    }

    @Test(
        "listingWordImpact holds each listing's distinct words with their points, status and order, after edits, status changes and deletes"
    )
    func rowsFollowWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, listings) = try await Self.database(directory, count: 300)
        defer { try? database.close() }
        var expected: Set<String> = []
        for listing in listings {
            let tokens = SearchText.DocumentTokens(listing.fields)
            for word in Set(tokens.title + tokens.description + tokens.tags) {
                // The README's relevance points of the word: 3 per title token, 2 per tag, 1 per description token.
                let points =
                    3 * tokens.title.count { $0 == word } + 2 * tokens.tags.count { $0 == word }
                    + tokens.description.count { $0 == word }
                expected.insert(
                    "\(word) \(listing.status.rawValue) \(points) \(listing.createdAt.millisecondsSince1970) \(listing.id)"
                )
            }
        }
        let stored = try await database.pool.read { db in
            try Set(
                Row.fetchAll(db, sql: "SELECT word, status, points, createdAt, id FROM listingWordImpact").map {
                    "\($0[0] as String) \($0[1] as String) \($0[2] as Int) \($0[3] as Int64) \($0[4] as String)"
                }
            )
        }
        #expect(stored.count > 1_000)
        #expect(stored.subtracting(expected).isEmpty, "stale rows: \(stored.subtracting(expected).prefix(5))")
        #expect(expected.subtracting(stored).isEmpty, "missing rows: \(expected.subtracting(stored).prefix(5))")
    }

    @Test(
        "Walking one word's impact rows, or ranking from the word index alone, gives the pages scoring every match gives, and the README's order: every status, filters, one to three terms, first and later pages"
    )
    func walkEqualsScoring() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, listings) = try await Self.database(directory, count: 1_200)
        defer { try? database.close() }
        let store = database.listingsStore()
        let stored = listings  // the reference: the shared engine's filters and score, in Swift
        var random = SeededGenerator(seed: 79)
        var compared: [String: Int] = [:]
        var laterPages = 0
        var chosen: [String: Int] = [:]
        let texts = ListingsStoreDifferentialTests.words + ListingsStoreDifferentialTests.queryWords + ["upd", "x"]
        for _ in 0..<300 {
            var query = ListingsStoreDifferentialTests.query(&random)
            // One term in two searches; two or three in the rest (a word and a prefix, repeated words).
            query.text = (0..<[1, 1, 2, 3].randomElement(using: &random)!).map { _ in
                texts.randomElement(using: &random)!
            }.joined(separator: " ")
            query.sort = .relevance
            query.filter.sellerID = nil
            query.filter.tags = []
            query.filter.near = nil
            query.filter.statuses = [ListingStatus.allCases.randomElement(using: &random)!]
            if Bool.random(using: &random) {
                // No filter but the statuses: the page is decided from the word index alone.
                query.filter = ListingFilter()
                if Bool.random(using: &random) { query.filter.statuses = [.active, .sold] }
            }
            let size = Int.random(in: 1...12, using: &random)
            var token: String?
            for pageNumber in 0..<2 {
                let page = try PageRequest(size: size, token: token)
                let compiled = try CompiledListingQuery(query, page: page)
                guard !compiled.terms.isEmpty else { break }
                // The store's page against the reference's.
                let answer = try await store.search(query, page: page)
                let reference = ListingSearchEngine.page(
                    stored.compactMap { ListingSearchEngine.hit($0, compiled) },
                    compiled,
                    size: size
                )
                #expect(
                    answer.items.map(\.listing.id) == reference.items.map(\.listing.id),
                    "\(query.text) \(query.filter) page \(pageNumber)"
                )
                #expect(answer.nextPageToken == reference.nextPageToken, "\(query.text) page \(pageNumber)")
                // Every plan the shape allows, against scoring every match.
                let term = compiled.terms[0]
                let results = try await database.pool.read {
                    db -> (pages: [ListingSearchSQL.Plan: [String]], chosen: ListingSearchSQL.Plan) in
                    var plans: [ListingSearchSQL.Plan] = [.planner]
                    let words = try String.fetchAll(
                        db,
                        sql: "SELECT word FROM listingWordCount WHERE word >= ? AND word < ? LIMIT 2",
                        arguments: [term, ListingSearchSQL.prefixUpperBound(term)]
                    )
                    if compiled.terms.count == 1, words.count == 1, compiled.statuses.count == 1 {
                        plans.append(.impact(word: words[0]))
                    }
                    if ListingSearchSQL.ranksWithoutRows(compiled) { plans.append(.scores) }
                    var pages: [ListingSearchSQL.Plan: [String]] = [:]
                    for plan in plans {
                        let statement = ListingSearchSQL.statement(compiled, limit: size + 1, plan: plan)
                        pages[plan] = try Row.fetchAll(
                            db,
                            sql: "SELECT id, \(ListingSearchSQL.scoreColumn) FROM (\(statement.sql))",
                            arguments: statement.arguments
                        ).map { "\($0[0] as String):\($0[1] as Int)" }
                    }
                    return (pages, try ListingSearchSQL.plan(compiled, size: size, occupied: nil, db))
                }
                let planner = results.pages[.planner] ?? []
                for (plan, rows) in results.pages where plan != .planner {
                    #expect(rows == planner, "\(plan): \(query.text) \(query.filter) page \(pageNumber)")
                    compared[plan.name, default: 0] += 1
                }
                chosen[results.chosen.name, default: 0] += 1
                if pageNumber > 0, !planner.isEmpty { laterPages += 1 }
                token = answer.nextPageToken
                if token == nil { break }
            }
        }
        #expect(compared["impact", default: 0] > 60, "\(compared)")
        #expect(compared["scores", default: 0] > 100, "\(compared)")
        #expect(laterPages > 50)
        #expect(chosen["impact", default: 0] > 30, "the store should walk a common word's rows: \(chosen)")
        #expect(chosen["scores", default: 0] > 50, "\(chosen)")
    }

    @Test("A query repeating words reads each word's rows once and finds FTS5's matches once, with the engine's pages")
    func repeatedWords() async throws {
        // 39 times "test" (the most a 200-character query holds): two parts, the whole word and the prefix.
        let statement = ListingSearchSQL.scoreSQL(Array(repeating: "test", count: 39), statuses: ["active"])
        #expect(statement.sql.components(separatedBy: "FROM listingWordImpact").count - 1 == 2, "\(statement.sql)")
        #expect(statement.sql.components(separatedBy: "MATCH ?").count - 1 == 1, "\(statement.sql)")

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (database, listings) = try await Self.database(directory, count: 300)
        defer { try? database.close() }
        let store = database.listingsStore()
        let stored = listings
        var found = 0
        for text in [
            Array(repeating: "lamp", count: 30).joined(separator: " "), "lamp lamp desk lamp", "bike bike bi",
            "red red red", "lamp desk lamp desk d",
        ] {
            var books = ListingFilter()
            books.categories = [.books]
            for filter in [ListingFilter(), books] {
                let query = ListingQuery(text: text, filter: filter, sort: .relevance)
                let hits = try await store.searchAll(query, pageSize: 4)
                let compiled = try CompiledListingQuery(query, page: PageRequest(size: 1_000))
                let reference = ListingSearchEngine.page(
                    stored.compactMap { ListingSearchEngine.hit($0, compiled) },
                    compiled,
                    size: 1_000
                )
                #expect(hits.map(\.listing.id) == reference.items.map(\.listing.id), "\(text) \(filter)")
                found += hits.count
            }
        }
        #expect(found > 50)
    }

    @Test("The plan walks a common word's impact rows; rare words, several words and several terms are scored")
    func planChoosesImpact() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.listingsStore()
        for index in 0..<600 {
            // "common" and "lamp" in every listing, "lampshade" in one in three, "rare" in one in three hundred.
            let title = index % 300 == 0 ? "common rare lamp" : index % 3 == 0 ? "common lampshade lamp" : "common lamp"
            let listing = Listing(
                id: "lst_impact\(index)",
                sellerID: "usr_1",
                fields: ListingFixture.fields(title),
                createdAt: ListingFixture.t0.addingTimeInterval(Double(index))
            )
            _ = try await store.createListing(listing, requestID: nil)
        }
        func plan(
            _ text: String,
            _ configure: (inout ListingFilter) -> Void = { _ in }
        ) async throws
            -> ListingSearchSQL.Plan
        {
            var filter = ListingFilter()
            configure(&filter)
            let compiled = try CompiledListingQuery(
                ListingQuery(text: text, filter: filter, sort: .relevance),
                page: try PageRequest(size: 10)
            )
            return try await database.pool.read { db in
                try ListingSearchSQL.plan(compiled, size: 10, occupied: nil, db)
            }
        }
        #expect(try await plan("common") == .impact(word: "common"))
        #expect(try await plan("comm") == .impact(word: "common"))
        #expect(try await plan("lampshade") == .impact(word: "lampshade"))
        #expect(try await plan("common") { $0.categories = [.books] } == .impact(word: "common"))
        // Otherwise the matches are scored: with no filter but the statuses, from the word index alone.
        #expect(try await plan("rare") == .scores)  // 2 listings: scoring them costs less than a walk
        #expect(try await plan("lamp") == .scores)  // "lamp" and "lampshade": points add up per listing
        #expect(try await plan("common lamp") == .scores)
        #expect(try await plan("zzz") == .scores)
        #expect(try await plan("common") { $0.statuses = [.active, .sold] } == .scores)
        #expect(try await plan("lamp") { $0.categories = [.books] } == .planner)
        #expect(try await plan("common") { $0.sellerID = "usr_1" } == .planner)
        #expect(try await plan("common") { $0.tags = ["oak"] } == .planner)

        // What the store answers, page by page: the points, then newest first.
        let hits = try await store.searchAll(ListingQuery(text: "lampshade", sort: .relevance), pageSize: 7)
        let lampshades = stride(from: 597, through: 3, by: -3).filter { $0 != 300 }
        #expect(hits.map(\.listing.id) == lampshades.map { "lst_impact\($0)" })
    }

    @Test("A database from before listings-v7 gets its listings' impact rows: relevance walks them at once")
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        try await makeDatabase(path, before: "listings-v7") { db in
            for index in 1...40 {
                try SQLiteListingsMigrationTests.insertOldListing(db, index, zip: "37235")
            }
            // "old old 7": 6 points for "old" in listing 7.
            try db.execute(sql: "UPDATE listing SET searchTitle = 'old old 7' WHERE id = 'lst_old7'")
            // One more, far along the row ids (the migration fills 10,000 row ids at a time).
            let columns = """
                sellerID, title, titleKey, description, priceCents, category, condition, size, tags, madeOnCampus,
                biddingEnabled, anonymous, zipCode, latitude, longitude, imageIDs, status, updatedAt, searchTitle,
                searchDescription, searchTags
                """
            try db.execute(
                sql: """
                    INSERT INTO listing (docID, id, createdAt, \(columns))
                    SELECT 25000, 'lst_old41', createdAt + 40, \(columns) FROM listing WHERE id = 'lst_old1'
                    """
            )
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let rows = try await database.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listingWordImpact WHERE word = 'old' AND points = 3")
        }
        #expect(rows == 40)
        let compiled = try CompiledListingQuery(ListingQuery(text: "old", sort: .relevance), page: PageRequest(size: 5))
        let plan = try await database.pool.read { db in try ListingSearchSQL.plan(compiled, size: 5, occupied: nil, db)
        }
        #expect(plan == .impact(word: "old"))
        let hits = try await database.listingsStore().searchAll(
            ListingQuery(text: "old", sort: .relevance),
            pageSize: 5
        )
        #expect(hits.map(\.listing.id) == ["lst_old7"] + (1...41).reversed().filter { $0 != 7 }.map { "lst_old\($0)" })
    }
}

extension ListingSearchSQL.Plan {
    /// The plan's case, without its word.
    fileprivate var name: String {
        switch self {
        case .impact: "impact"
        default: "\(self)"
        }
    }
}
