import Foundation
import GRDB
import SkiffDomain
import SkiffLostFound
import SkiffTesting
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

    @Test("Rows are decoded by position: the item table's columns are in the order the decoder reads")
    func columnOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let names = try await database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('lostFoundItem') ORDER BY cid")
        }
        #expect(names == LostFoundItemRow.tableColumns)
        #expect(Set(LostFoundItemRow.columns).isSubset(of: Set(names)))
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

    @Test("Changes between a report's scoring and its recording: rescored only when they could touch a candidate")
    func changesBetweenScoringAndRecording() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.lostFoundStore()
        try await InMemoryLostFoundStoreTests.changesBetweenScoringAndRecording(store) { item, change in
            try await store.reportItem(item, matcher: .standard, betweenReadAndWrite: change)
        }
        // What the writer decides from the remembered changes.
        let lost = try await store.reportItem(F.item(.lost, "Green umbrella, bamboo handle"), matcher: .standard).item
        let found = F.item(.found, "Found a green umbrella", reporter: "usr_x")
        func unchanged(since generation: Int64) async throws -> Bool {
            try await database.pool.read { db in
                try SQLiteLostFoundStore.candidatesUnchanged(
                    db,
                    since: generation,
                    now: SQLiteLostFoundStore.generation(db),
                    for: found,
                    matcher: .standard
                )
            }
        }
        func generation() async throws -> Int64 {
            try await database.pool.read { db in try SQLiteLostFoundStore.generation(db) }
        }
        var start = try await generation()
        #expect(try await unchanged(since: start))
        // Unrelated: another category, the same kind, other words, months away.
        _ = try await store.reportItem(F.item(.lost, "Green umbrella") { $0.category = .bags }, matcher: .standard)
        _ = try await store.reportItem(F.item(.found, "Green umbrella", reporter: "usr_y"), matcher: .standard)
        _ = try await store.reportItem(F.item(.lost, "Red scarf"), matcher: .standard)
        _ = try await store.reportItem(
            F.item(.lost, "Green umbrella") { $0.occurredAt = F.t0.addingTimeInterval(-90 * 86_400) },
            matcher: .standard
        )
        #expect(try await unchanged(since: start))
        // A new item sharing a word.
        _ = try await store.reportItem(F.item(.lost, "Umbrella"), matcher: .standard)
        #expect(try await !unchanged(since: start))
        // An edit of a possible candidate, even to other words; its return.
        start = try await generation()
        var changes = LostFoundItemChanges()
        changes.title = "Red scarf"
        _ = try await store.updateItem(id: lost.id, reporterID: F.owner, changes: changes, now: F.t0)
        #expect(try await !unchanged(since: start))
        start = try await generation()
        _ = try await store.markReturned(id: lost.id, reporterID: F.owner, now: F.t0)
        #expect(try await !unchanged(since: start))
        // More changes than remembered: unknown, so changed.
        start = try await generation()
        for index in 0..<1_025 {
            _ = try await store.reportItem(
                F.item(.lost, "Spare key \(index)") { $0.category = .keys },
                matcher: .standard
            )
        }
        #expect(try await !unchanged(since: start))
        #expect(try await unchanged(since: try await generation() - 1_024))
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

    /// Inserts items into a database from before "lostfound-v6": every written column but `cell`.
    static func insertBeforeCells(_ db: Database, _ items: [LostFoundItem]) throws {
        #expect(LostFoundItemRow.columns.last == "cell")
        let columns = LostFoundItemRow.columns.dropLast()
        for item in items {
            try db.execute(
                sql: """
                    INSERT INTO lostFoundItem (\(columns.joined(separator: ", "))) \
                    VALUES (\(databaseQuestionMarks(count: columns.count)))
                    """,
                arguments: StatementArguments(Array(LostFoundItemRow.values(item).dropLast()))
            )
        }
    }

    /// Each item's stored cell, and `lostFoundCell` against a count of the items per cell.
    static func cells(_ database: SQLiteDatabase) async throws -> (items: [String: Int64?], counted: Bool) {
        try await database.pool.read { db in
            let items = try Row.fetchAll(db, sql: "SELECT id, cell FROM lostFoundItem").reduce(
                into: [String: Int64?]()
            ) { $0[$1[0]] = $1[1] as Int64? }
            let kept = try Row.fetchAll(db, sql: "SELECT cell, items FROM lostFoundCell ORDER BY cell")
                .map { "\($0[0] as Int64) \($0[1] as Int64)" }
            let counted = try Row.fetchAll(
                db,
                sql: "SELECT cell, COUNT(*) FROM lostFoundItem WHERE cell IS NOT NULL GROUP BY cell ORDER BY cell"
            ).map { "\($0[0] as Int64) \($0[1] as Int64)" }
            return (items, kept == counted && !kept.isEmpty)
        }
    }

    @Test("lostfound-v6 stores each item's grid cell and counts the items per cell; the store keeps both in step")
    func cellsMigrationAndUpkeep() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("skiff.sqlite").path
            let south = LostFoundPoint(latitude: -33.9249, longitude: 18.4241)
            let earlier = [
                F.item(.lost, "Umbrella"),
                F.item(.found, "Scarf") { $0.point = F.north(metres: 2_500) },
                F.item(.found, "Gloves") { $0.point = south },
                F.item(.lost, "Hat") { $0.point = nil },
                F.item(.lost, "Mug") { $0.point = F.north(metres: 30) },
            ]
            try await makeDatabase(path, before: "lostfound-v6") { [earlier] db in
                try Self.insertBeforeCells(db, earlier)
            }

            let database = try await SQLiteDatabase.open(atPath: path)
            defer { try? database.close() }
            @Sendable func expected(_ point: LostFoundPoint?) -> Int64? {
                point.map {
                    GridCells.key(ApproximateLocation.cell(latitude: $0.latitude, longitude: $0.longitude)!)
                }
            }
            var stored = try await Self.cells(database)
            #expect(stored.counted)
            for item in earlier {
                #expect(stored.items[item.id] == .some(expected(item.fields.point)), "\(item.title)")
            }
            // Four cells' worth of points, two of them (the library and 30 m north) in one cell.
            #expect(Set(stored.items.values.compactMap { $0 }).count == 3)
            #expect(expected(south).map { $0 < 0 } == true)

            // Reports, moves, clearing a point and deleting keep the cells and their counts.
            let store = database.lostFoundStore()
            let report = try await store.reportItem(F.item(.found, "Mug") { $0.point = south }, matcher: .standard)
            var moved = LostFoundItemChanges()
            moved.point = .some(F.north(metres: 2_500))
            _ = try await store.updateItem(id: earlier[0].id, reporterID: F.owner, changes: moved, now: F.t0)
            var cleared = LostFoundItemChanges()
            cleared.point = .some(nil)
            _ = try await store.updateItem(id: earlier[4].id, reporterID: F.owner, changes: cleared, now: F.t0)
            var placed = LostFoundItemChanges()
            placed.point = .some(south)
            _ = try await store.updateItem(id: earlier[3].id, reporterID: F.owner, changes: placed, now: F.t0)
            stored = try await Self.cells(database)
            #expect(stored.counted)
            #expect(stored.items[report.item.id] == .some(expected(south)))
            #expect(stored.items[earlier[0].id] == .some(expected(F.north(metres: 2_500))))
            #expect(stored.items[earlier[4].id] == .some(nil))
            #expect(stored.items[earlier[3].id] == .some(expected(south)))
            try await database.pool.write { db in
                try db.execute(sql: "DELETE FROM lostFoundMatch")
                try db.execute(
                    sql: "DELETE FROM lostFoundItem WHERE id IN (?, ?)",
                    arguments: [earlier[2].id, report.item.id]
                )
            }
            stored = try await Self.cells(database)
            #expect(stored.counted)
            let emptied = try await database.pool.read { db in
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM lostFoundCell WHERE cell = ?",
                    arguments: [expected(south)]
                )
            }
            #expect(emptied == 1)  // earlier[3] is still there; the two others have gone
        }
    }

    @Test(
        "A circle's cells walked (band by band in distance order): the pages of the in-memory store, in groups too",
        arguments: [[36.1447, -86.8027], [-33.4489, -70.6693]]  // north and west; south and west
    )
    func bandWalk(origin: [Double]) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let stores: [any LostFoundStore] = [InMemoryLostFoundStore(), database.lostFoundStore()]
        var random = SeededGenerator(seed: 0xBA_4D_2026)
        let corpus = Self.circleCorpus(origin: origin, &random)
        for store in stores { try await Self.fill(store, corpus) }
        let shapes = BoundedStatementShapes()
        /// Every page of a search read by the band walk alone, `groupSize` cells per statement.
        func walked(_ query: LostFoundQuery, pageSize: Int, groupSize: Int) async throws -> [LostFoundSearchHit] {
            var hits: [LostFoundSearchHit] = []
            var token: String?
            repeat {
                let compiled = try CompiledLostFoundQuery(query, page: try PageRequest(size: pageSize, token: token))
                let page = try await database.pool.read { db in
                    let walk = try SQLiteLostFoundStore.bandWalk(
                        db,
                        compiled,
                        size: pageSize,
                        shapes: shapes,
                        groupSize: groupSize,
                        alwaysWalk: true
                    )
                    return LostFoundSearchEngine.page(try #require(walk), compiled, size: pageSize)
                }
                hits += page.items
                token = page.nextPageToken
            } while token != nil
            return hits
        }
        var chosen = 0
        var nonEmpty = 0
        for round in 0..<60 {
            let query = Self.circleQuery(round: round, origin: origin, &random)
            let pageSize = Int.random(in: 5...40, using: &random)
            let expected = try await stores[0].searchAll(query, pageSize: pageSize)
            #expect(try await stores[1].searchAll(query, pageSize: pageSize) == expected, "round \(round): \(query)")
            for groupSize in [SQLiteLostFoundStore.cellsPerStatement, 2] {
                let hits = try await walked(query, pageSize: pageSize, groupSize: groupSize)
                #expect(hits == expected, "round \(round), \(groupSize) cells per statement: \(query)")
            }
            let compiled = try CompiledLostFoundQuery(query, page: try PageRequest(size: pageSize))
            if try await database.pool.read({ db in try SQLiteLostFoundStore.driver(db, compiled) }) == .cells {
                chosen += 1
            }
            if expected.count > pageSize { nonEmpty += 1 }
        }
        #expect(chosen >= 10)
        #expect(nonEmpty >= 20)
        // Newest first in a circle over every cell, two cells per statement: walking every item costs less.
        for (radiusKm, walks) in [(500.0, false), (0.6, true)] {
            var query = LostFoundQuery()
            query.filter.near = LostFoundCircle(center: Self.point(origin, &random, within: 0), radiusKm: radiusKm)
            let compiled = try CompiledLostFoundQuery(query, page: try PageRequest(size: 10))
            let walk = try await database.pool.read { db in
                try SQLiteLostFoundStore.bandWalk(db, compiled, size: 10, shapes: shapes, groupSize: 2)
            }
            #expect((walk != nil) == walks, "\(radiusKm) km")
        }
    }

    /// A point within `metres` north–south and east–west of `origin`.
    static func point(_ origin: [Double], _ random: inout SeededGenerator, within metres: Double) -> LostFoundPoint {
        let latitude = origin[0] + Double.random(in: -metres...metres, using: &random) / 111_195
        let east = Double.random(in: -metres...metres, using: &random) / (111_195 * cos(latitude * .pi / 180))
        return LostFoundPoint(latitude: latitude, longitude: origin[1] + east)
    }

    /// 700 items over an 8 km square around `origin` (about 50 cells), one in ten without a point.
    static func circleCorpus(origin: [Double], _ random: inout SeededGenerator) -> [LostFoundItem] {
        (0..<700).map { index in
            var item = LostFoundStoreDifferentialTests.item(index, &random)
            item.fields.point = index % 10 == 0 ? nil : point(origin, &random, within: 4_000)
            return item
        }
    }

    /// Reports the corpus to `store`, then marks one item in seven returned.
    static func fill(_ store: any LostFoundStore, _ corpus: [LostFoundItem]) async throws {
        for item in corpus { _ = try await store.reportItem(item, matcher: .standard) }
        for (position, item) in corpus.enumerated() where position % 7 == 3 {
            _ = try await store.markReturned(id: item.id, reporterID: item.reporterID, now: F.t0)
        }
    }

    /// A random search in a circle of 0.4–500 km around `origin`, in distance order on even rounds and newest
    /// first on odd ones; one round in three with no filter but the circle.
    static func circleQuery(round: Int, origin: [Double], _ random: inout SeededGenerator) -> LostFoundQuery {
        var query = LostFoundStoreDifferentialTests.query(&random)
        query.filter.near = LostFoundCircle(
            center: point(origin, &random, within: 3_000),
            radiusKm: [0.4, 1, 2.5, 4, 8, 500].randomElement(using: &random)!
        )
        query.sort = round % 2 == 0 ? .distance : .newest
        if round % 3 == 0 {
            query.text = ""
            query.filter.categories = []
            query.filter.building = nil
        }
        return query
    }

    @Test("Common words with a category, building or place they never go with: the search reads the words' items")
    func correlatedFilters() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.lostFoundStore()
        // 600 key fobs at the library, 600 scarves in the gym: each word, category and building keeps many.
        for index in 0..<1_200 {
            let fob = index % 2 == 0
            let item = F.item(.found, fob ? "Fob \(index)" : "Scarf \(index)", at: Double(index)) {
                $0.category = fob ? .keys : .clothing
                $0.building = fob ? "Main Library" : "Gym"
            }
            _ = try await store.reportItem(item, matcher: .standard)
        }
        /// The driver a search takes, and how many items its first page of 10 holds.
        func driver(
            _ configure: (inout LostFoundQuery) -> Void
        ) async throws -> (driver: SQLiteLostFoundStore.Driver?, found: Int) {
            var query = LostFoundQuery()
            configure(&query)
            let compiled = try CompiledLostFoundQuery(query, page: try PageRequest(size: 10))
            let found = try await store.search(query, page: try PageRequest(size: 10)).items.count
            return (try await database.pool.read { db in try SQLiteLostFoundStore.driver(db, compiled) }, found)
        }
        let far = LostFoundCircle(center: F.north(metres: 20_000), radiusKm: 1)
        let apart: [(inout LostFoundQuery) -> Void] = [
            { $0.filter.categories = [.clothing] }, { $0.filter.building = "Gym" }, { $0.filter.near = far },
        ]
        for filter in apart {
            let search = try await driver {
                $0.text = "fob"
                filter(&$0)
            }
            #expect(search.driver == .keywords && search.found == 0, "\(search)")
        }
        // Together they keep many: the search walks newest first.
        let together = try await driver {
            $0.text = "fob"
            $0.filter.categories = [.keys]
        }
        #expect(together.driver == .newest && together.found == 10)
        let words = try await driver { $0.text = "fob" }
        #expect(words.driver == .newest && words.found == 10)
    }

    /// The keyword rows of every item, as (id, keyword) pairs.
    static func keyRows(_ database: SQLiteDatabase) async throws -> Set<String> {
        try await database.pool.read { db in
            try Set(String.fetchAll(db, sql: "SELECT id || ' ' || keyword FROM lostFoundMatchKey"))
        }
    }

    /// The keyword rows the store must hold for `items`: one per keyword of each open item.
    static func expectedKeyRows(_ items: [LostFoundItem]) -> Set<String> {
        Set(
            items.filter { $0.status == $0.kind.openStatus }.flatMap { item in
                LostFoundMatcher.keywords(item.fields).map { "\(item.id) \($0)" }
            }
        )
    }

    @Test("lostfound-v5 fills the keyword table for items stored before it; the store keeps it in step")
    func matchKeysMigrationAndUpkeep() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("skiff.sqlite").path
            var earlier = [
                F.item(.lost, "Blue Hydro-Flask bottle, the 32 oz one") { $0.description = "Sticker of a fox; a dent" },
                F.item(.found, "Café loyalty card (Ünïcode)") { $0.description = "x y Zz 12 lost near the desk" },
                F.item(.found, "") { $0.description = "" },
                F.item(.lost, "Keys on a red lanyard", reporter: "usr_other"),
            ]
            earlier[3].status = .returned
            earlier[3].returnedAt = F.t0
            try await makeDatabase(path, before: "lostfound-v5") { [earlier] db in
                try Self.insertBeforeCells(db, earlier)
            }

            let database = try await SQLiteDatabase.open(atPath: path)
            defer { try? database.close() }
            let expected = Self.expectedKeyRows(earlier)
            #expect(expected.contains("\(earlier[0].id) hydro") && expected.contains("\(earlier[1].id) zz"))
            #expect(try await Self.keyRows(database) == expected)

            // The migrated rows find candidates: a found bottle matches the lost one stored before the migration.
            let store = database.lostFoundStore()
            let report = try await store.reportItem(
                F.item(.found, "Hydro Flask bottle with a fox sticker"),
                matcher: .standard
            )
            #expect(report.matches.map(\.lostItemID) == [earlier[0].id])

            // Inserts, edits and returns keep the rows those of the open items' keywords.
            var changes = LostFoundItemChanges()
            changes.title = "Green umbrella"
            changes.category = .clothing
            let edited = try await store.updateItem(id: earlier[0].id, reporterID: F.owner, changes: changes, now: F.t0)
            let returned = try await store.markReturned(id: earlier[1].id, reporterID: F.finder, now: F.t0)
            let items = [edited, returned, earlier[2], earlier[3], report.item]
            #expect(try await Self.keyRows(database) == Self.expectedKeyRows(items))
            let categories = try await database.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: "SELECT DISTINCT category FROM lostFoundMatchKey WHERE id = ?",
                    arguments: [edited.id]
                )
            }
            #expect(categories == ["clothing"])
            try await database.pool.write { db in
                try db.execute(sql: "DELETE FROM lostFoundMatch")
                try db.execute(sql: "DELETE FROM lostFoundItem WHERE id = ?", arguments: [report.item.id])
            }
            #expect(try await Self.keyRows(database) == Self.expectedKeyRows([edited]))
        }
    }

    @Test(
        "Candidates are the first of one ordered walk, with more keywords than one statement merges too",
        arguments: [3, 20, 75]
    )
    func candidatesInGroups(reportWords: Int) async throws {
        try await withTemporaryDirectory { directory in
            let database = try await SQLiteDatabase.open(atPath: directory.appendingPathComponent("s.sqlite").path)
            defer { try? database.close() }
            let store = database.lostFoundStore()
            var random = SeededGenerator(seed: UInt64(reportWords))
            let words = (0..<90).map { "w\($0)" }
            let reporters = [F.owner, F.finder, "usr_third"]
            var items: [LostFoundItem] = []
            for number in 0..<240 {
                let item = F.item(
                    Bool.random(using: &random) ? .lost : .found,
                    (0..<Int.random(in: 1...3, using: &random)).map { _ in words.randomElement(using: &random)! }
                        .joined(separator: " "),
                    id: "lfi_\(number % 7)_\(number)",
                    reporter: reporters.randomElement(using: &random)!
                ) { fields in
                    fields.occurredAt = F.t0.addingTimeInterval(Double(Int.random(in: -5...5, using: &random)) * 86_400)
                    fields.category = Bool.random(using: &random) ? .other : .keys
                    fields.point = [F.library, F.north(metres: 20_000), nil].randomElement(using: &random)!
                }
                items.append(try await store.reportItem(item, matcher: .standard).item)
                if Int.random(in: 0..<5, using: &random) == 0 {
                    items[items.count - 1] = try await store.markReturned(
                        id: item.id,
                        reporterID: item.reporterID,
                        now: F.t0
                    )
                }
            }
            var matcher = LostFoundMatcher.standard
            matcher.maximumCandidates = 9
            var bounded = 0
            var found = 0
            for round in 0..<12 {
                let report = F.item(
                    round % 2 == 0 ? .lost : .found,
                    words.shuffled(using: &random).prefix(reportWords).joined(separator: " "),
                    reporter: reporters[round % 3]
                ) { fields in
                    fields.category = round % 3 == 0 ? .keys : .other
                    fields.point = round % 4 == 0 ? nil : F.library
                }
                let keywords = LostFoundMatcher.keywords(report.fields)
                let window = matcher.candidateWindowMilliseconds
                let box = matcher.candidateBox(report)
                let expected = items.filter { item in
                    guard item.kind == report.kind.opposite, item.status == item.kind.openStatus,
                        item.category == report.category, item.reporterID != report.reporterID,
                        abs(item.occurredAt.millisecondsSince1970 - report.occurredAt.millisecondsSince1970) <= window,
                        !keywords.isDisjoint(with: LostFoundMatcher.keywords(item.fields))
                    else { return false }
                    guard let box, let point = item.point else { return true }
                    return box.latitude.contains(point.latitude) && box.longitude?.contains(point.longitude) != false
                }.sorted(by: LostFoundMatcher.takenBefore).prefix(matcher.maximumCandidates).map(\.id)
                let candidates = try await database.pool.read { [matcher] db in
                    try SQLiteLostFoundStore.matchCandidates(
                        db,
                        for: report,
                        matcher: matcher,
                        shapes: BoundedStatementShapes()
                    )
                }
                if expected.count == matcher.maximumCandidates { bounded += 1 }
                found += expected.count
                #expect(candidates.map(\.id) == expected, "round \(round)")
            }
            // The rounds cut candidates at the bound (and with 3 words still find some).
            #expect(reportWords == 3 ? found > 0 : bounded >= 6, "\(bounded) rounds at the bound, \(found) found")
        }
    }
}
