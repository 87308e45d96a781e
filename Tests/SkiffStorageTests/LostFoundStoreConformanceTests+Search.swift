import Foundation
import SkiffDomain
import SkiffLostFound
import SkiffSQLite
import SkiffTesting
import Testing

extension LostFoundStoreConformanceTests {
    @Test(
        "Keywords match title and description, folded, every word, the last as a prefix",
        arguments: StoreKind.allCases
    )
    func keywords(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let items = try await store.report([
                F.item(.lost, "Crème-coloured scarf", at: 1) { $0.category = .clothing },
                F.item(.found, "Black iPhone", at: 2) { $0.description = "Cracked screen, café receipt in case" },
                F.item(.lost, "Calculus textbook", at: 3) { $0.category = .books },
            ])
            #expect(try await store.ids(LostFoundQuery(text: "CREME")) == [items[0].id])
            #expect(try await store.ids(LostFoundQuery(text: "cafe")) == [items[1].id])
            #expect(try await store.ids(LostFoundQuery(text: "iphone cra")) == [items[1].id])
            #expect(try await store.ids(LostFoundQuery(text: "cra iphone")) == [])
            #expect(try await store.ids(LostFoundQuery(text: "c")) == [items[2].id, items[1].id, items[0].id])
            #expect(try await store.ids(LostFoundQuery(text: "zzz")) == [])
            #expect(try await store.ids(LostFoundQuery(text: "  ")) == [items[2].id, items[1].id, items[0].id])
        }
    }

    @Test(
        "A prefix that several words of one item start with finds the item once, in either order",
        arguments: StoreKind.allCases
    )
    func prefixOfSeveralWords(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            // Umbrellas in the same place, so that checking the few items holding a word starting with "c"
            // costs less than walking the place's items.
            _ = try await store.report((0..<30).map { F.item(.found, "Blue umbrella", at: Double(10 + $0)) })
            let items = try await store.report([
                F.item(.found, "Black case", at: 1) { $0.description = "Cracked screen, café receipt inside" },
                F.item(.lost, "Calculus textbook", at: 2) { $0.category = .books },
            ])
            let expected = [items[1].id, items[0].id]
            #expect(try await store.ids(LostFoundQuery(text: "c")) == expected)
            var near = LostFoundQuery(text: "c", sort: .distance)
            near.filter.near = LostFoundCircle(center: F.library, radiusKm: 2)
            #expect(try await store.ids(near) == expected)
        }
    }

    @Test("Statuses (open by default), categories and building filter", arguments: StoreKind.allCases)
    func filters(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let items = try await store.report([
                F.item(.lost, "Keys", at: 1) {
                    $0.category = .keys
                    $0.building = "Science  Hall"
                },
                F.item(.found, "Laptop charger", at: 2) { $0.category = .electronics },
                F.item(.found, "Student card", at: 3) { $0.category = .idCard },
            ])
            _ = try await store.markReturned(id: items[2].id, reporterID: F.finder, now: F.t0)
            #expect(try await store.ids(LostFoundQuery()) == [items[1].id, items[0].id])
            var filter = LostFoundFilter()
            filter.statuses = [.returned]
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [items[2].id])
            filter.statuses = [.lost, .returned]
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [items[2].id, items[0].id])
            filter = LostFoundFilter()
            filter.categories = [.keys, .electronics]
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [items[1].id, items[0].id])
            filter = LostFoundFilter()
            filter.building = "science hall"
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [items[0].id])
            filter.building = "Science"
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [])
        }
    }

    @Test(
        "A circle keeps items with a point inside, each with its distance; sort by distance",
        arguments: StoreKind.allCases
    )
    func distance(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let items = try await store.report([
                F.item(.lost, "Near", at: 1) { $0.point = F.north(metres: 500) },
                F.item(.lost, "Nearer", at: 2) { $0.point = F.north(metres: 100) },
                F.item(.lost, "Far", at: 3) { $0.point = F.north(metres: 5_000) },
                F.item(.lost, "Nowhere", at: 4) { $0.point = nil },
            ])
            var filter = LostFoundFilter()
            filter.near = LostFoundCircle(center: F.library, radiusKm: 1)
            // As their reporter sees them: exact distances (others': see `approximateDistances`).
            let newest = try await store.searchAll(LostFoundQuery(filter: filter, viewerID: F.owner), pageSize: 10)
            #expect(newest.map(\.item.id) == [items[1].id, items[0].id])
            #expect(abs((newest[0].distanceKm ?? 0) - 0.1) < 0.001)
            #expect(abs((newest[1].distanceKm ?? 0) - 0.5) < 0.001)
            filter.near = LostFoundCircle(center: F.north(metres: 600), radiusKm: 10)
            let nearest = try await store.searchAll(
                LostFoundQuery(filter: filter, sort: .distance, viewerID: F.owner),
                pageSize: 1
            )
            #expect(nearest.map(\.item.id) == [items[0].id, items[1].id, items[2].id])
            #expect(try await store.searchAll(LostFoundQuery(), pageSize: 10).allSatisfy { $0.distanceKm == nil })
        }
    }

    @Test(
        "Paging is stable while items are reported between pages; tokens are tied to the query",
        arguments: StoreKind.allCases
    )
    func paging(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            // Several items share a creation instant, so ties are broken by id.
            let items = try await store.report((0..<12).map { F.item(.lost, "Umbrella \($0)", at: Double($0 / 3)) })
            let expected = items.sorted { a, b in
                a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id
            }.map(\.id)
            for size in [1, 5, 12, 50] {
                #expect(try await store.ids(LostFoundQuery(), pageSize: size) == expected)
                #expect(try await store.ids(LostFoundQuery(text: "umbrella"), pageSize: size) == expected)
            }
            let first = try await store.search(LostFoundQuery(), page: PageRequest(size: 5))
            #expect(first.items.map(\.item.id) == Array(expected.prefix(5)))
            // A newer item reported meanwhile does not shift the next page.
            _ = try await store.report([F.item(.lost, "Umbrella new", at: 100)])
            let second = try await store.search(
                LostFoundQuery(),
                page: PageRequest(size: 5, token: first.nextPageToken)
            )
            #expect(second.items.map(\.item.id) == Array(expected[5..<10]))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.search(
                    LostFoundQuery(text: "other"),
                    page: PageRequest(size: 5, token: first.nextPageToken)
                )
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.search(LostFoundQuery(), page: PageRequest(size: 5, token: "not-a-token"))
            }
            // Forged cursors of the right query: a distance in newest order, none (or a negative one) in
            // distance order.
            var near = LostFoundQuery(sort: .distance)
            near.filter.near = LostFoundCircle(center: F.library, radiusKm: 2)
            let byDistance = try await store.search(near, page: PageRequest(size: 5))
            func forged(_ query: LostFoundQuery, _ token: String?, distance: Double?) throws -> String {
                var cursor = try PageToken.decode(
                    try #require(token),
                    as: LostFoundSearchEngine.Cursor.self,
                    kind: "lostfound.search"
                )
                cursor.d = distance
                return PageToken.encode(cursor, kind: "lostfound.search")
            }
            for (query, token, distance) in [
                (LostFoundQuery(), first.nextPageToken, 1.0), (near, byDistance.nextPageToken, nil),
                (near, byDistance.nextPageToken, -1.0),
            ] {
                let token = try forged(query, token, distance: distance)
                await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                    _ = try await store.search(query, page: PageRequest(size: 5, token: token))
                }
            }
            // The tokens as issued still work.
            let unforged = try forged(near, byDistance.nextPageToken, distance: byDistance.items.last?.distanceKm)
            #expect(try await store.search(near, page: PageRequest(size: 5, token: unforged)).items.count == 5)
        }
    }

    @Test("Pages hold at most 100 items, whatever the size asked", arguments: StoreKind.allCases)
    func pageCap(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            _ = try await store.report((0..<103).map { F.item(.found, "Glove \($0)", at: Double($0)) })
            for query in [LostFoundQuery(), LostFoundQuery(text: "glove")] {
                let first = try await store.search(query, page: PageRequest(size: 1_000))
                #expect(first.items.count == 100)
                let rest = try await store.search(query, page: PageRequest(size: 1_000, token: first.nextPageToken))
                #expect(rest.items.count == 3)
                #expect(rest.nextPageToken == nil)
            }
        }
    }
}

/// The in-memory and SQLite stores side by side on one seeded random corpus: every random search
/// (keywords through FTS5 vs. the Swift scan, filters, circles, page sizes) must give identical pages.
@Suite("LostFoundStore differential (in-memory vs SQLite)")
struct LostFoundStoreDifferentialTests {
    static let words = [
        "wallet", "black", "leather", "keys", "silver", "crème", "café", "Straße", "iPhone", "charger", "umbrella",
        "red", "blue", "textbook", "calculus", "student", "card", "jacket", "x2", "2024", "école", "hand-made",
        "walnut", "cardigan",
    ]
    static let queryWords = [
        "wallet", "wa", "w", "cafe", "CAFÉ", "creme", "strasse", "straße", "iphone", "char", "red", "re", "x2",
        "20", "ecole", "hand made", "black wallet", "blue ke", "zzz", "student card", "e",
    ]
    static let buildings = ["Main Library", "Science Hall", "Gym", "Café Central"]

    @Test("Random corpus, random queries: identical pages on both backends")
    func equivalence() async throws {
        try await Self.withBothStores { stores in try await equivalence(stores) }
    }

    /// Runs `body` with an in-memory store and a SQLite store on a temporary file, in that order.
    static func withBothStores(_ body: ([any LostFoundStore]) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        try await body([InMemoryLostFoundStore(), database.lostFoundStore()])
    }

    private func equivalence(_ stores: [any LostFoundStore]) async throws {
        var random = SeededGenerator(seed: 0x105F_0D2026)
        let corpus = (0..<800).map { index in Self.item(index, &random) }
        var reports: [[LostFoundReport]] = [[], []]
        for (index, store) in stores.enumerated() {
            for item in corpus { reports[index].append(try await store.reportItem(item, matcher: .standard)) }
            for (position, item) in corpus.enumerated() where position % 9 == 4 {
                _ = try await store.markReturned(id: item.id, reporterID: item.reporterID, now: Fixture.t0)
            }
        }
        #expect(reports[0] == reports[1])
        #expect(reports[0].contains { !$0.matches.isEmpty })
        var nonEmpty = 0
        for round in 0..<100 {
            let query = Self.query(&random)
            let pageSize = Int.random(in: 6...30, using: &random)  // a few pages each: enough for paging
            let memory = try await stores[0].searchAll(query, pageSize: pageSize)
            let sqlite = try await stores[1].searchAll(query, pageSize: pageSize)
            #expect(memory == sqlite, "round \(round): \(query)")
            if !memory.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 15)
        for item in corpus.prefix(40) {
            let memory = try await stores[0].allMatches(itemID: item.id, pageSize: 3)
            let sqlite = try await stores[1].allMatches(itemID: item.id, pageSize: 3)
            #expect(memory == sqlite)
        }
    }

    @Test("Reports under a small candidate bound, with edits and returns between them: the same matches")
    func boundedMatching() async throws {
        try await Self.withBothStores { stores in try await boundedMatching(stores) }
    }

    private func boundedMatching(_ stores: [any LostFoundStore]) async throws {
        var random = SeededGenerator(seed: 0xB0_0D_2026)
        // About 30 items per kind and category, occurring on whole days (many ties, broken by id), against
        // a bound of 4: which candidates a report takes decides its matches. Every candidate is a match
        // (threshold 0), so the matches show the candidates taken.
        var matcher = LostFoundMatcher.standard
        matcher.maximumCandidates = 4
        matcher.threshold = 0
        var reported: [LostFoundItem] = []
        var bounded = 0
        for index in 0..<420 {
            let item = Self.item(index, &random)
            let reports = [
                try await stores[0].reportItem(item, matcher: matcher),
                try await stores[1].reportItem(item, matcher: matcher),
            ]
            #expect(reports[0] == reports[1], "report \(index)")
            if reports[0].matches.count == matcher.maximumCandidates { bounded += 1 }
            reported.append(item)
            let other = reported.randomElement(using: &random)!
            switch index % 5 {
            case 1:
                // New keywords, or another time: the item leaves its old lists for new ones.
                var changes = LostFoundItemChanges()
                changes.title = Self.words.shuffled(using: &random).prefix(2).joined(separator: " ")
                if Bool.random(using: &random) { changes.occurredAt = other.occurredAt.addingTimeInterval(86_400) }
                for store in stores {
                    _ = try? await store.updateItem(
                        id: other.id,
                        reporterID: other.reporterID,
                        changes: changes,
                        now: Fixture.t0
                    )
                }
            case 3:
                for store in stores {
                    _ = try await store.markReturned(id: other.id, reporterID: other.reporterID, now: Fixture.t0)
                }
            default: break
            }
        }
        #expect(bounded > 10)
    }

    static func item(_ index: Int, _ random: inout SeededGenerator) -> LostFoundItem {
        let title = (0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random)! }
        let description = (0..<Int.random(in: 0...4, using: &random)).map { _ in words.randomElement(using: &random)! }
        let kind: LostFoundKind = Bool.random(using: &random) ? .lost : .found
        let point: LostFoundPoint? =
            Int.random(in: 0..<4, using: &random) == 0
            ? nil : LostFoundFixture.north(metres: Double.random(in: -3_000...3_000, using: &random))
        return LostFoundFixture.item(
            kind,
            title.joined(separator: " "),
            reporter: "usr_\(Int.random(in: 0..<6, using: &random))",
            at: Double(Int.random(in: 0..<50, using: &random))
        ) {
            $0.description = description.joined(separator: " ")
            $0.category = LostFoundCategory.allCases.randomElement(using: &random)!
            $0.building = buildings.randomElement(using: &random)!
            $0.point = point
            $0.occurredAt = Fixture.t0.addingTimeInterval(Double(Int.random(in: -20...20, using: &random)) * 86_400)
        }
    }

    static func query(_ random: inout SeededGenerator) -> LostFoundQuery {
        var query = LostFoundQuery()
        if Bool.random(using: &random) { query.text = queryWords.randomElement(using: &random)! }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.filter.statuses = Set(LostFoundStatus.allCases.filter { _ in Bool.random(using: &random) })
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            query.filter.categories = Set(LostFoundCategory.allCases.filter { _ in Bool.random(using: &random) })
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            query.filter.building = buildings.randomElement(using: &random)!.uppercased()
        }
        if Bool.random(using: &random) {
            query.filter.near = LostFoundCircle(
                center: LostFoundFixture.north(metres: Double.random(in: -2_000...2_000, using: &random)),
                radiusKm: Double.random(in: 0.2...4, using: &random)
            )
            if Bool.random(using: &random) { query.sort = .distance }
        }
        // A signed-in searcher measures to their own items' exact points.
        if Bool.random(using: &random) { query.viewerID = "usr_\(Int.random(in: 0..<6, using: &random))" }
        return query
    }
}
