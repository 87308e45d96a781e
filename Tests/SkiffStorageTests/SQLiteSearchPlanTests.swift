import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain
import SkiffListings
import SkiffLostFound
import SkiffTesting
import Testing

@testable import SkiffSQLite

/// Every query shape listing search allows is answered from indexes: `EXPLAIN QUERY PLAN` of each statement
/// shows no full scan of a table, on a database large enough (a few thousand listings) that SQLite's planner
/// would prefer a scan if the statement needed one.
@Suite("SQLite search plans")
struct SQLiteSearchPlanTests {
    /// Lines of a plan that read a whole stored table: `SCAN <table>` without an index. Virtual tables (the
    /// FTS5 index and its token instances answer their own constraints) and the small intermediate results
    /// of subqueries are not tables.
    static func fullScans(_ plan: [String], tables: Set<String>) -> [String] {
        // A subquery's rows, produced by a co-routine, may carry a table's name as their alias.
        let subqueries = Set(plan.filter { $0.hasPrefix("CO-ROUTINE ") }.map { $0.dropFirst("CO-ROUTINE ".count) })
        return plan.filter { line in
            guard line.hasPrefix("SCAN "), !line.contains(" USING "), !line.contains("VIRTUAL TABLE") else {
                return false
            }
            let name = line.dropFirst("SCAN ".count).prefix { $0 != " " }
            return tables.contains(String(name)) && !subqueries.contains(name)
        }
    }

    /// The stored tables of the database.
    static func tables(_ database: SQLiteDatabase) async throws -> Set<String> {
        try await database.pool.read { db in
            try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        }
    }

    /// Every combination of sort, keywords, circle and the filters that change a plan.
    static func shapes() -> [ListingQuery] {
        var queries: [ListingQuery] = []
        let circle = GeoCircle(center: GeoPoint(latitude: 36.14, longitude: -86.80), radiusKm: 3)
        for sort in ListingSort.allCases {
            for text in ["", "lamp", "vintage desk"] {
                for near in [nil, circle] {
                    for variant in 0..<6 {
                        var filter = ListingFilter()
                        filter.near = near
                        switch variant {
                        case 1:
                            filter.categories = [.furniture, .books]
                            filter.minPriceCents = 500
                            filter.maxPriceCents = 5000
                        case 2: filter.tags = ["oak", "blue"]
                        case 3: filter.sellerID = "usr_3"
                        case 4:
                            filter.statuses = [.sold, .active, .withdrawn]
                            filter.postedSince = ListingFixture.t0
                        case 5:
                            filter.conditions = [.new]
                            filter.madeOnCampus = true
                        default: break
                        }
                        queries.append(ListingQuery(text: text, filter: filter, sort: sort, viewerID: "usr_3"))
                    }
                }
            }
        }
        return queries
    }

    @Test("No query shape scans the listing table: filters, keywords, circle, order, cursor and limit use indexes")
    func noFullScans() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.listingsStore()
        var random = SeededGenerator(seed: 10)
        let listings = (0..<3_000).map { ListingsStoreDifferentialTests.listing($0, &random) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for chunk in stride(from: 0, to: listings.count, by: 300) {
                let part = listings[chunk..<min(chunk + 300, listings.count)]
                group.addTask { for listing in part { _ = try await store.createListing(listing, requestID: nil) } }
            }
            try await group.waitForAll()
        }

        let tables = try await Self.tables(database)
        #expect(tables.contains("listing") && tables.contains("listingTag"))
        var checked = 0
        var bandChecks = 0
        for query in Self.shapes() {
            // The first page and a later one (the cursor adds its own condition).
            let first = try await store.search(query, page: try PageRequest(size: 5))
            var pages: [PageRequest] = [try PageRequest(size: 20)]
            if let token = first.nextPageToken { pages.append(try PageRequest(size: 20, token: token)) }
            for page in pages {
                let compiled = try CompiledListingQuery(query, page: page)
                // Both ways a search can run: SQLite's planner with FTS5 collecting, and (for the shapes
                // that allow it) the walk of an order index.
                var plans: [ListingSearchSQL.Plan] = [.planner]
                if let index = ListingSearchSQL.walkIndex(compiled) {
                    plans.append(.walk(index: index))
                    if !compiled.terms.isEmpty { plans.append(.collect) }
                } else if query.sort == .distance, query.filter.near != nil, !compiled.terms.isEmpty {
                    plans.append(.collect)  // distance order when the words keep fewer than a walk of the cells
                } else if query.sort == .relevance, compiled.terms == ["lamp"], compiled.statuses.count == 1 {
                    plans.append(.impact(word: "lamp"))  // relevance for one word: its impact-ordered rows
                }
                if ListingSearchSQL.ranksWithoutRows(compiled) {
                    plans.append(.scores)  // relevance with no filter but the statuses: from the word index alone
                }
                for searchPlan in plans {
                    let statement = ListingSearchSQL.statement(compiled, limit: page.size + 1, plan: searchPlan)
                    let plan = try await database.pool.read { db in
                        try Row.fetchAll(
                            db,
                            sql: "EXPLAIN QUERY PLAN " + statement.sql,
                            arguments: statement.arguments
                        )
                        .map { row -> String in row["detail"] }
                    }
                    let scans = Self.fullScans(plan, tables: tables)
                    if ProcessInfo.processInfo.environment["SKIFF_PRINT_PLANS"] != nil {
                        print("PLAN \(searchPlan) \(query.sort) \"\(query.text)\" \(query.filter.near != nil): \(plan)")
                    }
                    #expect(scans.isEmpty, "\(query.sort) text=\"\(query.text)\" \(query.filter): \(plan)")
                    if searchPlan == .collect {
                        // The keyword matches drive: each row is read by its id.
                        #expect(plan.contains { $0.contains("USING INTEGER PRIMARY KEY") }, "\(plan)")
                        if query.filter.near == nil {
                            // Filtered, ordered and cut to the page on the keys index, without a table row.
                            #expect(
                                plan.contains {
                                    $0.contains("USING COVERING INDEX \(ListingSearchSQL.keysIndex) (docID=?")
                                },
                                "\(plan)"
                            )
                        }
                    }
                    if searchPlan == .scores {
                        // Scores, order and page from the word index; a listing row only for the page.
                        #expect(plan.contains { $0.hasPrefix("SEARCH listing USING INTEGER PRIMARY KEY") }, "\(plan)")
                        #expect(!plan.contains { $0.contains("listingSearchInstance") }, "\(plan)")
                    }
                    if case .impact = searchPlan {
                        // The word's rows, of one status, in relevance order from the key: nothing sorted.
                        #expect(
                            plan.contains { $0.hasPrefix("SEARCH impact USING PRIMARY KEY (word=? AND status=?") },
                            "\(plan)"
                        )
                        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
                    }
                    if case .walk(let index) = searchPlan {
                        // The walk reads the order from its index: no sort of the matches.
                        #expect(plan.contains { $0.contains("USING INDEX \(index)") }, "\(plan)")
                        #expect(!plan.contains { $0.contains("USE TEMP B-TREE FOR ORDER BY") }, "\(plan)")
                    }
                    checked += 1
                }
                if query.filter.near != nil, query.sort == .distance || ListingSearchSQL.walkIndex(compiled) != nil {
                    let answer = try await store.search(query, page: page)
                    try await checkListingBands(compiled, size: page.size, answer: answer, database, tables)
                    bandChecks += 1
                }
            }
        }
        #expect(checked > ListingSort.allCases.count * 30)
        #expect(bandChecks >= 100)
    }

    /// The walk of a circle's cells (``SQLiteListingsStore/bandWalk(_:_:occupied:size:shapes:groupSize:)``):
    /// the store's page, and each band statement walks its (cell, status) pairs on the
    /// `(cell, status, createdAt, id)` index, merged, with nothing sorted and no table scanned.
    private func checkListingBands(
        _ compiled: CompiledListingQuery,
        size: Int,
        answer: Page<ListingSearchHit>,
        _ database: SQLiteDatabase,
        _ tables: Set<String>
    ) async throws {
        let shapes = BoundedStatementShapes()
        let (page, cells) = try await database.pool.read { db in
            let near = try #require(compiled.query.filter.near)
            let occupied = try #require(try SQLiteListingsStore.occupiedCells(db, near))
            let walk = try SQLiteListingsStore.bandWalk(db, compiled, occupied: occupied, size: size, shapes: shapes)
            let cells = try Int64.fetchAll(db, sql: "SELECT cell FROM listingCell ORDER BY cell LIMIT 3")
            return (ListingSearchEngine.page(walk, compiled, size: size), cells)
        }
        #expect(page.items == answer.items, "\(compiled.query)")
        #expect(page.nextPageToken == answer.nextPageToken, "\(compiled.query)")
        // The searcher's own listings, read apart, come from the seller's index, not the status's.
        if let viewer = compiled.query.viewerID {
            let own = ListingSearchSQL.statement(compiled, limit: size + 1, seller: viewer)
            let plan = try await database.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + own.sql, arguments: own.arguments)
                    .map { row -> String in row["detail"] }
            }
            #expect(plan.contains { $0.contains("USING INDEX listing_sellerID_createdAt_id") }, "\(plan)")
        }
        let statuses = compiled.statuses.map(\.rawValue).sorted()
        for count in 1...cells.count {
            let group = cells.prefix(count).map { key in
                let row = Int((Double(key) / 1_000_000).rounded(.down))
                return ApproximateLocation.Cell(row: row, column: Int(key - Int64(row) * 1_000_000))
            }
            let statement = SQLiteListingsStore.bandStatement(
                compiled,
                cells: group[...],
                statuses: statuses,
                after: compiled.cursor.map { (createdAt: $0.c, id: $0.i) }
            )
            let plan = try await database.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                    .map { row -> String in row["detail"] }
            }
            #expect(Self.fullScans(plan, tables: tables).isEmpty, "\(compiled.query): \(plan)")
            let walks = plan.filter {
                $0.hasPrefix("SEARCH l USING INDEX listing_cell_status_createdAt_id (cell=? AND status=?")
            }
            #expect(walks.count == count * statuses.count, "\(compiled.query): \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(compiled.query): \(plan)")
            if count * statuses.count > 1 { #expect(plan.contains("MERGE (UNION ALL)"), "\(plan)") }
        }
    }

    @Test("No lost-and-found search shape scans the item table; every driver a shape can take gives the same page")
    func lostFoundNoFullScans() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.lostFoundStore()
        var random = SeededGenerator(seed: 11)
        let items = (0..<1_000).map { LostFoundStoreDifferentialTests.item($0, &random) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for part in stride(from: 0, to: items.count, by: 100) {
                let chunk = items[part..<min(part + 100, items.count)]
                group.addTask { for item in chunk { _ = try await store.reportItem(item, matcher: .standard) } }
            }
            try await group.waitForAll()
        }
        let tables = try await Self.tables(database)
        #expect(tables.contains("lostFoundItem"))
        var checked = 0
        var bandChecks = 0
        for _ in 0..<120 {
            let query = LostFoundStoreDifferentialTests.query(&random)
            let first = try await store.search(query, page: try PageRequest(size: 5))
            var pages = [try PageRequest(size: 20)]
            if let token = first.nextPageToken { pages.append(try PageRequest(size: 20, token: token)) }
            for page in pages {
                let compiled = try CompiledLostFoundQuery(query, page: page)
                let chosen = try await database.pool.read { db in try SQLiteLostFoundStore.driver(db, compiled) }
                // The driver chosen, and every other the query could have (the band walk is checked below).
                let byDistance = query.sort == .distance && query.filter.near != nil
                var drivers: [SQLiteLostFoundStore.Driver?] = [chosen == .cells ? (byDistance ? nil : .newest) : chosen]
                if chosen != nil {
                    drivers.append(byDistance ? nil : .newest)
                    if !compiled.terms.isEmpty { drivers.append(.keywords) }
                    if query.filter.near != nil { drivers.append(.box) }
                    if !query.filter.categories.isEmpty { drivers.append(.categories) }
                    if compiled.buildingKey != nil { drivers.append(.building) }
                }
                var answers: [[String]] = []
                for driver in drivers {
                    let statement = SQLiteLostFoundStore.searchStatement(compiled, limit: page.size + 1, driver: driver)
                    let (plan, ids) = try await database.pool.read { db in
                        (
                            try Row.fetchAll(
                                db,
                                sql: "EXPLAIN QUERY PLAN " + statement.sql,
                                arguments: statement.arguments
                            ).map { row -> String in row["detail"] },
                            try LostFoundItemRow.fetchAll(db, sql: statement.sql, arguments: statement.arguments)
                                .map(\.id)
                        )
                    }
                    // Whatever reads first, the same rows in the same order.
                    answers.append(ids)
                    #expect(ids == answers[0], "\(query) with \(String(describing: driver))")
                    #expect(Self.fullScans(plan, tables: tables).isEmpty, "\(query): \(plan)")
                    if driver == .newest {
                        // A walk: the newest-first index in its order, nothing sorted.
                        let walk = plan.first.map {
                            $0 == "SCAN i USING INDEX lostFoundItem_createdAt_id"
                                || $0 == "SEARCH i USING INDEX lostFoundItem_createdAt_id (createdAt<?)"
                        }
                        #expect(walk == true, "\(query): \(plan)")
                        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(query): \(plan)")
                    }
                    checked += 1
                }
                if query.filter.near != nil {
                    try await checkBands(compiled, size: page.size, answer: answers[0], database, tables)
                    bandChecks += 1
                }
            }
        }
        #expect(checked >= 120)
        #expect(bandChecks >= 40)
    }

    /// The walk of a circle's cells (band by band in distance order): the same page as the search's one
    /// statement, and each band statement walks its cells' `(cell, createdAt, id)` index, merged, with
    /// nothing sorted.
    private func checkBands(
        _ compiled: CompiledLostFoundQuery,
        size: Int,
        answer: [String],
        _ database: SQLiteDatabase,
        _ tables: Set<String>
    ) async throws {
        let shapes = BoundedStatementShapes()
        let (page, cells) = try await database.pool.read { db in
            let walk = try SQLiteLostFoundStore.bandWalk(db, compiled, size: size, shapes: shapes, alwaysWalk: true)
            let cells = try Int64.fetchAll(db, sql: "SELECT cell FROM lostFoundCell ORDER BY cell LIMIT 3")
            return (LostFoundSearchEngine.page(try #require(walk), compiled, size: size), cells)
        }
        #expect(page.items.map(\.item.id) == Array(answer.prefix(size)), "\(compiled.query)")
        #expect((page.nextPageToken != nil) == (answer.count > size), "\(compiled.query)")
        for count in 1...cells.count {
            // Keys are row × 1,000,000 + column, with 0 ≤ column < 1,000,000 (rows may be negative).
            let group = cells.prefix(count).map { key in
                let row = Int((Double(key) / 1_000_000).rounded(.down))
                return ApproximateLocation.Cell(row: row, column: Int(key - Int64(row) * 1_000_000))
            }
            let after = compiled.cursor.map { (createdAt: $0.c, id: $0.i) }
            let statement = SQLiteLostFoundStore.bandStatement(
                compiled,
                cells: group[...],
                after: after,
                limit: size + 1
            )
            let plan = try await database.pool.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                    .map { row -> String in row["detail"] }
            }
            #expect(Self.fullScans(plan, tables: tables).isEmpty, "\(compiled.query): \(plan)")
            let walks = plan.filter { $0.hasPrefix("SEARCH i USING INDEX lostFoundItem_cell_createdAt_id (cell=?") }
            #expect(walks.count == count, "\(compiled.query): \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(compiled.query): \(plan)")
            #expect(!plan.contains { $0.contains("SUBQUERY") }, "the keywords are checked on the rows read: \(plan)")
            if count > 1 { #expect(plan.contains("MERGE (UNION ALL)"), "\(plan)") }
        }
    }

    @Test("A report walks its keywords' candidate rows in order and merges them: no scan, no sort of the walk")
    func matchCandidatesPlans() async throws {
        try await withTemporaryDirectory { directory in
            let database = try await SQLiteDatabase.open(atPath: directory.appendingPathComponent("s.sqlite").path)
            defer { try? database.close() }
            let store = database.lostFoundStore()
            var random = SeededGenerator(seed: 5)
            let items = (0..<1_000).map { LostFoundStoreDifferentialTests.item($0, &random) }
            for item in items { _ = try await store.reportItem(item, matcher: .standard) }
            let tables = try await Self.tables(database)
            #expect(tables.contains("lostFoundMatchKey"))
            var checked = 0
            for item in items.prefix(40) {
                var report = item
                report.fields.description = "spare " + item.fields.description
                if checked % 3 == 0 { report.fields.point = nil }
                let keywords = LostFoundMatcher.keywords(report.fields).sorted()
                let statement = SQLiteLostFoundStore.candidatesStatement(
                    for: report,
                    keywords: keywords[...],
                    matcher: .standard
                )
                let plan = try await database.pool.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                        .map { row -> String in row["detail"] }
                }
                #expect(Self.fullScans(plan, tables: tables).isEmpty, "\(plan)")
                // Each keyword is one ordered walk of the key table's primary key, merged; the only sort is the
                // one of the merged (at most `maximumCandidates`) rows at the end.
                let walks = plan.filter {
                    $0.hasPrefix("SEARCH k USING PRIMARY KEY (kind=? AND category=? AND keyword=?")
                }
                #expect(walks.count == keywords.count, "\(plan)")
                #expect(plan.filter { $0.contains("MERGE (UNION)") }.count == keywords.count - 1, "\(plan)")
                #expect(plan.filter { $0.contains("TEMP B-TREE") }.count <= 1, "\(plan)")
                // The candidates' rows are read by their rowid, not through the id index.
                #expect(plan.contains("SEARCH i USING INTEGER PRIMARY KEY (rowid=?)"), "\(plan)")
                checked += 1
            }
            #expect(checked == 40)
        }
    }

    @Test("Nearby and trending near a point use their indexes, on every page, level and radius of the walk")
    func nearbyNoFullScans() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.bucketListStore()
        var random = SeededGenerator(seed: 12)
        let activities = (0..<1_000).map { index in
            BucketListFixture.activity(
                "A\(index)",
                point: BucketListStoreDifferentialTests.point(&random),
                at: Double(index)
            )
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for part in stride(from: 0, to: activities.count, by: 100) {
                let chunk = activities[part..<min(part + 100, activities.count)]
                group.addTask { for activity in chunk { _ = try await store.createActivity(activity) } }
            }
            try await group.waitForAll()
        }
        let tables = try await Self.tables(database)
        for sort in NearbySort.allCases {
            for radius in [0.5, 5, 50] {
                let query = NearbyQuery(center: BucketListFixture.campus, radiusKm: radius, sort: sort)
                let first = try await store.nearbyActivities(query, page: try PageRequest(size: 3))
                var cursors: [ActivityRanking.NearbyCursor?] = [nil]
                if first.nextPageToken != nil {
                    cursors.append(
                        try ActivityRanking.nearbyCursor(try PageRequest(size: 3, token: first.nextPageToken), query)
                    )
                }
                // Each step of the walk: the whole circle, then a level (popularity) or a smaller radius.
                var statements: [(sql: String, arguments: StatementArguments)] = []
                for cursor in cursors {
                    statements.append(SQLiteBucketListStore.nearbyStatement(query, cursor: cursor, limit: 11))
                    statements.append(
                        SQLiteBucketListStore.nearbyStatement(query, radiusKm: radius / 8, cursor: cursor, limit: 11)
                    )
                    statements.append(
                        SQLiteBucketListStore.nearbyStatement(
                            query,
                            level: cursor?.n ?? 1,
                            radiusKm: radius / 4,
                            cursor: cursor,
                            limit: 11
                        )
                    )
                }
                for level in [nil, 0] as [Int?] {
                    statements.append(
                        SQLiteBucketListStore.nearbyCountStatement(
                            query.center,
                            radiusKm: radius,
                            level: level,
                            cap: 64
                        )
                    )
                }
                statements.append(
                    SQLiteBucketListStore.trendingStatement(center: query.center, radiusKm: radius, walk: false)
                )
                statements.append(
                    SQLiteBucketListStore.trendingStatement(
                        center: query.center,
                        radiusKm: radius,
                        walk: true,
                        after: (1, "act_x")
                    )
                )
                statements.append(SQLiteBucketListStore.trendingStatement(center: nil, radiusKm: 0, walk: true))
                for statement in statements {
                    let plan = try await database.pool.read { db in
                        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                            .map { row -> String in row["detail"] }
                    }
                    #expect(Self.fullScans(plan, tables: tables).isEmpty, "\(sort) \(radius) km: \(plan)")
                    #expect(!plan.contains { $0.contains("SCAN a") && !$0.contains("INDEX") }, "\(plan)")
                    // A keyset condition that SQLite cannot seek with turns into two index searches and a
                    // sort of everything past the cursor.
                    #expect(!plan.contains { $0.contains("MULTI-INDEX OR") }, "\(plan)")
                }
            }
        }
    }

    @Test("The full-scan detector recognises a scan")
    func detectorSeesScans() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let plan = try await database.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT * FROM listing WHERE size = 'M'")
                .map { row -> String in row["detail"] }
        }
        #expect(Self.fullScans(plan, tables: try await Self.tables(database)) == ["SCAN listing"])
    }
}
