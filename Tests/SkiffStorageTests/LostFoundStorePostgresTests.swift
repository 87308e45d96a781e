import Foundation
import Logging
import PostgresNIO
import SkiffDomain
import SkiffLostFound
import SkiffTesting
import Testing

@testable import SkiffPostgres

/// The PostgreSQL lost-and-found store as several servers use it: each "server" is a ``PostgresStorage``
/// of its own (its own pool) on one database, so nothing but PostgreSQL settles their races. Then what the
/// store computes in SQL checked against the Swift definitions: the private-distance rule, bit for bit, and
/// whole search pages against the in-memory store.
@Suite("LostFoundStore on PostgreSQL: several servers on one database")
struct LostFoundStorePostgresTests {
    typealias F = LostFoundFixture

    /// Runs `body` with `count` stores on one new database, each opened as a separate server would.
    private func withServers(_ count: Int, _ body: ([PostgresLostFoundStore]) async throws -> Void) async throws {
        try await TestPostgres.withStorages(count) { storages, _ in try await body(storages.map { $0.lostFoundStore() })
        }
    }

    /// Runs `operation` for each index concurrently; returns each result (or error) in index order.
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
            var results: [(Int, Result<T, any Error>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    @Test("Matching lost and found items reported at once on two servers: every pair is matched, once")
    func pairsReportedAtOnce() async throws {
        try await withServers(2) { servers in
            let pairs = 24
            // Pair i shares the words "zeta<i> omega<i>" and nothing with the other pairs.
            let items = (0..<pairs).flatMap { pair in
                [
                    F.item(.lost, "Zeta\(pair) omega\(pair)", id: "lfi_l\(pair)"),
                    F.item(.found, "Zeta\(pair) omega\(pair)", id: "lfi_f\(pair)", at: 1),
                ]
            }
            let reports = try await race(items.count) { index in
                try await servers[index % 2].reportItem(items[index], matcher: .standard)
            }
            .map { try $0.get() }
            for pair in 0..<pairs {
                let (lost, found) = (reports[2 * pair], reports[2 * pair + 1])
                // Whichever was recorded second scored the other: never neither, never both.
                #expect(lost.matches.count + found.matches.count == 1, "pair \(pair)")
                let recorded = try await servers[pair % 2].matches(itemID: lost.item.id, page: .first)
                #expect(recorded.items.map(\.candidate.id) == [found.item.id], "pair \(pair)")
            }
            let all = try await servers[0].matches(recordedSince: F.t0, limit: 1_000)
            #expect(all.count == pairs)
        }
    }

    @Test("Reports without pause in a busy category on two servers: each is stored by its second attempt")
    func busyCategory() async throws {
        try await TestPostgres.withStorages(2) { storages, _ in
            let servers = storages.map { $0.lostFoundStore() }
            // Open items sharing a word, so each report reads dozens of candidates: any two reports in
            // flight then conflict. The fill's reporter is one account, so the fill matches nothing.
            let fill = (0..<120).map {
                F.item($0 % 2 == 0 ? .found : .lost, "Black umbrella", reporter: "usr_fill", at: Double($0))
            }
            for lane in 0..<4 {
                _ = try await servers[lane % 2].report(Array(fill[(lane * 30)..<((lane + 1) * 30)]))
            }
            // Twelve reporters, each reporting as soon as its last report is stored: a report aborted
            // for a conflict runs again against new reports arriving all the time. Run again, it locks
            // out the other item writers, so it cannot lose again.
            let lanes = try await race(12) { lane in
                var reports: [LostFoundReport] = []
                for round in 0..<8 {
                    let kind: LostFoundKind = (lane + round) % 2 == 0 ? .lost : .found
                    let item = F.item(kind, "Black umbrella", reporter: "usr_\(lane)", at: Double(200 + round))
                    reports.append(try await servers[lane % 2].reportItem(item, matcher: .standard))
                }
                return reports
            }
            .map { try $0.get() }
            let reports = lanes.flatMap { $0 }
            #expect(reports.allSatisfy { $0.matches.count >= 60 })
            let all = try await servers[0].matches(recordedSince: F.t0, limit: 100_000)
            #expect(all.count == reports.reduce(0) { $0 + $1.matches.count })
            #expect(storages.map(\.mostTransactionAttempts).max() ?? 0 > 1, "the reports never conflicted")
            #expect(storages.map(\.mostTransactionAttempts).max() ?? 0 <= 2)
        }
    }

    @Test("A retried write waits for its table lock at most its timeout (behind maintenance), then UNAVAILABLE")
    func retryLockTimeout() async throws {
        try await TestPostgres.withDatabase { storage in
            let lock = PostgresStorage.RetryLock(
                table: "lost_found_item",
                mode: "SHARE ROW EXCLUSIVE",
                timeout: .milliseconds(300)
            )
            /// A write whose first attempt fails as a serialization failure does, so it runs again, locking.
            @Sendable func retriedWrite() async throws -> Int {
                var attempts = 0
                return try await storage.write(lockingOnRetry: lock) { db in
                    attempts += 1
                    if attempts == 1 {
                        try await db.query(
                            "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$",
                            logger: storage.logger
                        )
                    }
                    return attempts
                }
            }
            try await storage.withConnection { maintenance in
                // What VACUUM and ANALYZE hold on the table while they run.
                _ = try await maintenance.query("BEGIN", logger: storage.logger)
                _ = try await maintenance.query(
                    "LOCK TABLE lost_found_item IN SHARE UPDATE EXCLUSIVE MODE",
                    logger: storage.logger
                )
                let outcome = await withTaskGroup(of: Result<Int, any Error>?.self) { group in
                    group.addTask {
                        do { return .success(try await retriedWrite()) } catch { return .failure(error) }
                    }
                    group.addTask {
                        // Should the write wait on, maintenance ends after 20 s: the write then gets its
                        // lock, and the test fails rather than hangs.
                        try? await Task.sleep(for: .seconds(20))
                        if !Task.isCancelled { _ = try? await maintenance.query("ROLLBACK", logger: storage.logger) }
                        return nil
                    }
                    var outcome: Result<Int, any Error>?
                    while let next = await group.next() {
                        if let next {
                            outcome = next
                            group.cancelAll()
                        }
                    }
                    return outcome
                }
                _ = try await maintenance.query("ROLLBACK", logger: storage.logger)
                switch outcome {
                case .failure(let error as DomainError)?:
                    #expect(error.code == .unavailable)
                    #expect(error.message == "The database is busy. Try again.")
                case let other:
                    Issue.record(
                        "the retried write did not give up waiting behind maintenance: \(String(describing: other))"
                    )
                }
            }
            // The lock's timeout ends the write: it is not run again.
            #expect(storage.mostTransactionAttempts == 2)
            #expect(try await retriedWrite() == 2)
        }
    }

    @Test("One item returned from three servers at once: returned once, every call gets the stored item")
    func returnedAtOnce() async throws {
        try await withServers(3) { servers in
            for round in 0..<4 {
                let item = try await servers[0].reportItem(F.item(.found, "Blue backpack \(round)"), matcher: .standard)
                let results = try await race(9) { index in
                    try await servers[index % 3].markReturned(
                        id: item.item.id,
                        reporterID: F.finder,
                        now: F.t0.addingTimeInterval(Double(100 + index))
                    )
                }
                .map { try $0.get() }
                let stored = try #require(try await servers[1].item(id: item.item.id))
                #expect(stored.status == .returned)
                #expect(results.allSatisfy { $0 == stored })
            }
        }
    }

    @Test("An update racing a return on another server: the update is either kept or refused, never lost")
    func updateRacingReturn() async throws {
        try await withServers(2) { servers in
            for round in 0..<12 {
                let item = try await servers[0].reportItem(F.item(.lost, "Red umbrella \(round)"), matcher: .standard)
                var change = LostFoundItemChanges()
                change.title = "Red folding umbrella \(round)"
                let changes = change
                let later = F.t0.addingTimeInterval(60)
                let results = await race(2) { index -> LostFoundItem in
                    if index == 0 {
                        return try await servers[0].updateItem(
                            id: item.item.id,
                            reporterID: F.owner,
                            changes: changes,
                            now: later
                        )
                    }
                    return try await servers[1].markReturned(id: item.item.id, reporterID: F.owner, now: later)
                }
                // Either order is correct (the scheduler picks); a lost update is not.
                _ = try results[1].get()
                let stored = try #require(try await servers[0].item(id: item.item.id))
                #expect(stored.status == .returned)
                switch results[0] {
                case .success(let updated):
                    #expect(updated.title == changes.title)
                    #expect(stored.title == changes.title)
                case .failure(let error):
                    #expect((error as? DomainError) == LostFoundStoreError.returned)
                    #expect(stored.title == item.item.title)
                }
            }
        }
    }

    @Test("One id reported from three servers at once: stored once, the others are told it is taken")
    func sameIDAtOnce() async throws {
        try await withServers(3) { servers in
            let results = await race(9) { index in
                try await servers[index % 3].reportItem(
                    F.item(.lost, "Student card \(index)", id: "lfi_same", reporter: "usr_\(index)"),
                    matcher: .standard
                )
            }
            let stored = results.compactMap { try? $0.get() }
            #expect(stored.count == 1)
            let refusals = results.compactMap { result -> DomainError?? in
                guard case .failure(let error) = result else { return nil }
                return .some(error as? DomainError)
            }
            #expect(refusals == Array(repeating: LostFoundStoreError.itemIDTaken, count: 8))
            let saved = try await servers[2].item(id: "lfi_same")
            #expect(saved == stored.first?.item)
        }
    }

    @Test(
        "lost_found_private_distance_km is ApproximateLocation.distance, and skiff_grid_cell_key the cell's key, bit for bit, all over the globe"
    )
    func distanceFunctionIsExact() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            try await PostgresStorage.open(location).close()  // migrates
            var random = SeededGenerator(seed: 0x1057_F0D)
            var points: [(latitude: Double, longitude: Double)] = []
            var centers: [(latitude: Double, longitude: Double)] = []
            for index in 0..<6_000 {
                let latitude = Double.random(in: -90...90, using: &random)
                let longitude = Double.random(in: -180...180, using: &random)
                points.append((latitude, longitude))
                // Mostly centres a few kilometres away (what searches ask), some anywhere.
                centers.append(
                    index % 5 == 0
                        ? (Double.random(in: -90...90, using: &random), Double.random(in: -180...180, using: &random))
                        : (
                            min(90, max(-90, latitude + Double.random(in: -0.05...0.05, using: &random))),
                            min(180, max(-180, longitude + Double.random(in: -0.05...0.05, using: &random)))
                        )
                )
            }
            // Cell edges and the poles and the antimeridian, where rounding decides.
            for (latitude, longitude) in [(0.0, 0.0), (36.15, -86.8), (89.999, 179.999), (-90, -180), (90, 180)] {
                points.append((latitude, longitude))
                centers.append((latitude, longitude))
            }
            let logger = Logger(label: "skiff.tests.lostfound")
            var configuration = PostgresConnection.Configuration(
                host: location.host,
                port: location.port,
                username: location.username,
                password: location.password,
                database: location.database,
                tls: .disable
            )
            configuration.options.requireBackendKeyData = true
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            let results: [(Double, Double, Double, Int64)]
            do {
                results = try await Self.distances(connection, points: points, centers: centers, logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
            #expect(results.count == points.count)
            var mismatches = 0
            for (index, (exact, measured, shown, cell)) in results.enumerated() {
                let point = points[index]
                let center = centers[index]
                let own = ApproximateLocation.distance(from: center, to: point, exact: true)
                let other = ApproximateLocation.distance(from: center, to: point, exact: false)
                let key = ApproximateLocation.Cell.key(latitude: point.latitude, longitude: point.longitude)
                if exact != own.measured || measured != other.measured || shown != other.shown || cell != key {
                    mismatches += 1
                    if mismatches <= 5 {
                        Issue.record(
                            "\(point) from \(center): SQL \((exact, measured, shown, cell)), Swift \((own, other, key))"
                        )
                    }
                }
            }
            #expect(mismatches == 0)
        }
    }

    /// The three distances (exact, measured to the cell, shown) SQL computes from each centre to each point,
    /// and the key of each point's cell.
    private static func distances(
        _ connection: PostgresConnection,
        points: [(latitude: Double, longitude: Double)],
        centers: [(latitude: Double, longitude: Double)],
        logger: Logger
    ) async throws -> [(Double, Double, Double, Int64)] {
        let rows = try await connection.query(
            """
            SELECT lost_found_private_distance_km(p.la, p.lo, 'usr_a', p.cla, p.clo, 'usr_a', false),
                lost_found_private_distance_km(p.la, p.lo, 'usr_a', p.cla, p.clo, 'usr_b', false),
                lost_found_private_distance_km(p.la, p.lo, 'usr_a', p.cla, p.clo, NULL, true),
                skiff_grid_cell_key(p.la, p.lo)
            FROM unnest(\(points.map(\.latitude))::float8[], \(points.map(\.longitude))::float8[],
                \(centers.map(\.latitude))::float8[], \(centers.map(\.longitude))::float8[])
                WITH ORDINALITY AS p(la, lo, cla, clo, n)
            ORDER BY p.n
            """,
            logger: logger
        )
        var results: [(Double, Double, Double, Int64)] = []
        for try await row in rows.decode((Double, Double, Double, Int64).self) { results.append(row) }
        return results
    }

    @Test("Random corpus, random queries and viewers: PostgreSQL's pages and matches equal the in-memory store's")
    func equivalence() async throws {
        try await TestPostgres.withDatabase { storage in
            var random = SeededGenerator(seed: 0x2026_105F)
            let stores: [any LostFoundStore] = [InMemoryLostFoundStore(), storage.lostFoundStore()]
            typealias D = LostFoundStoreDifferentialTests
            var corpus = (0..<400).map { index in D.item(index, &random) }
            // A few long words: past the prefix keys (32 scalars) and past the exact keys (256 bytes).
            let long = String(repeating: "abcdefghij", count: 4)
            let longer = String(repeating: "é", count: 150) + "z"  // folds to "e"s: 151 bytes, 151 scalars
            let longest = String(repeating: "ж", count: 140)  // 280 bytes
            for (index, text) in ["\(long) wallet", "\(long)x keys", "\(longer) card", "\(longest) bag"].enumerated() {
                corpus.append(
                    F.item(index.isMultiple(of: 2) ? .lost : .found, "Long words", reporter: "usr_\(index)", at: 60) {
                        $0.description = text
                        $0.category = .other
                    }
                )
            }
            var reports: [[LostFoundReport]] = [[], []]
            for (index, store) in stores.enumerated() {
                for item in corpus { reports[index].append(try await store.reportItem(item, matcher: .standard)) }
                for (position, item) in corpus.enumerated() where position % 9 == 4 {
                    _ = try await store.markReturned(id: item.id, reporterID: item.reporterID, now: Fixture.t0)
                }
            }
            #expect(reports[0] == reports[1])
            #expect(reports[0].contains { !$0.matches.isEmpty })
            let folded = TextSearch.tokens(longer)[0]
            var queries = (0..<120).map { _ in
                var query = D.query(&random)
                query.viewerID = Bool.random(using: &random) ? "usr_\(Int.random(in: 0..<6, using: &random))" : nil
                return query
            }
            for text in [
                long, String(long.prefix(35)), "\(long)x", "\(long) wall", String(folded.prefix(40)), folded,
                folded + "z", String(longest.prefix(100)), longest, "\(longest) ba", "long \(long)",
            ] {
                queries.append(LostFoundQuery(text: text))
            }
            var nonEmpty = 0
            for (round, query) in queries.enumerated() {
                let pageSize = Int.random(in: 6...30, using: &random)
                let memory = try await stores[0].searchAll(query, pageSize: pageSize)
                let postgres = try await stores[1].searchAll(query, pageSize: pageSize)
                #expect(memory == postgres, "round \(round): \(query)")
                if !memory.isEmpty { nonEmpty += 1 }
            }
            #expect(nonEmpty > 40)
            for item in corpus.prefix(40) + corpus.suffix(4) {
                #expect(
                    try await stores[0].allMatches(itemID: item.id, pageSize: 3)
                        == stores[1].allMatches(itemID: item.id, pageSize: 3)
                )
            }
            for reporter in (0..<6).map({ "usr_\($0)" }) {
                for statuses: Set<LostFoundStatus> in [[], [.lost], [.found, .returned]] {
                    var pages: [[LostFoundOwnItem]] = [[], []]
                    for (index, store) in stores.enumerated() {
                        var token: String?
                        repeat {
                            let page = try await store.items(
                                reporterID: reporter,
                                statuses: statuses,
                                page: PageRequest(size: 17, token: token)
                            )
                            pages[index] += page.items
                            token = page.nextPageToken
                        } while token != nil
                    }
                    #expect(pages[0] == pages[1], "\(reporter) \(statuses)")
                }
            }
            #expect(
                try await stores[0].matches(recordedSince: Fixture.t0, limit: 10_000)
                    == stores[1].matches(recordedSince: Fixture.t0, limit: 10_000)
            )
        }
    }
}

/// Lost-and-found search in a circle on PostgreSQL: a walk of the circle's occupied grid cells.
@Suite("Lost-and-found search in a circle on PostgreSQL")
struct PostgresLostFoundCircleTests {
    @Test(
        "A circle's cells walked on PostgreSQL (band by band in distance order): the pages of the in-memory store, in groups too",
        arguments: [[36.1447, -86.8027], [-33.4489, -70.6693]]
    )
    func bandWalk(origin: [Double]) async throws {
        try await TestPostgres.withDatabase { storage in
            let reference = InMemoryLostFoundStore()
            let store = storage.lostFoundStore()
            var random = SeededGenerator(seed: 0xBA_4D_2026)
            let corpus = SQLiteLostFoundStoreTests.circleCorpus(origin: origin, &random)
            for target in [reference, store] as [any LostFoundStore] {
                try await SQLiteLostFoundStoreTests.fill(target, corpus)
            }
            // The plans' estimates read the statistics: these, not whenever autovacuum gets to it.
            try await storage.withConnection { db in
                _ = try await db.query("ANALYZE lost_found_item", logger: storage.logger)
            }
            /// Every page of a search read by the band walk alone, `groupSize` cells per statement.
            func walked(_ query: LostFoundQuery, pageSize: Int, groupSize: Int) async throws -> [LostFoundSearchHit] {
                var hits: [LostFoundSearchHit] = []
                var token: String?
                repeat {
                    let compiled = try CompiledLostFoundQuery(
                        query,
                        page: try PageRequest(size: pageSize, token: token)
                    )
                    let near = try #require(compiled.query.filter.near)
                    let page = try await storage.read { db in
                        let bands = try #require(
                            try await PostgresGridCells.bands(
                                LostFoundSearchEngine.grid(near),
                                table: "lost_found_item",
                                column: "cell",
                                db,
                                storage
                            )
                        )
                        let walk = try await PostgresLostFoundStore.bandWalk(
                            compiled,
                            bands: bands,
                            size: pageSize,
                            groupSize: groupSize,
                            statementBudget: .max,
                            db,
                            storage
                        )
                        return LostFoundSearchEngine.page(try #require(walk), compiled, size: pageSize)
                    }
                    hits += page.items
                    token = page.nextPageToken
                } while token != nil
                return hits
            }
            var plans: [String: Int] = [:]
            var paged = 0
            for round in 0..<60 {
                var query = SQLiteLostFoundStoreTests.circleQuery(round: round, origin: origin, &random)
                query.viewerID = round % 4 == 1 ? corpus[round].reporterID : nil
                let pageSize = Int.random(in: 10...40, using: &random)
                let expected = try await reference.searchAll(query, pageSize: pageSize)
                #expect(try await store.searchAll(query, pageSize: pageSize) == expected, "round \(round): \(query)")
                // Two arms per statement (many statements per page) every third round: the suite's time.
                for groupSize in round % 3 == 0
                    ? [PostgresGridCells.armsPerStatement, 2] : [PostgresGridCells.armsPerStatement]
                {
                    let hits = try await walked(query, pageSize: pageSize, groupSize: groupSize)
                    #expect(hits == expected, "round \(round), \(groupSize) cells per statement: \(query)")
                }
                let compiled = try CompiledLostFoundQuery(query, page: try PageRequest(size: pageSize))
                switch try await storage.read({ db in
                    try await PostgresLostFoundStore.circlePlan(compiled, size: pageSize, db, storage)
                }) {
                case .cells: plans["cells", default: 0] += 1
                case .matches: plans["matches", default: 0] += 1
                case .walk: plans["walk", default: 0] += 1
                case .planner: plans["planner", default: 0] += 1
                }
                if expected.count > pageSize { paged += 1 }
            }
            #expect(plans["cells", default: 0] >= 15, "\(plans)")
            #expect(plans["matches", default: 0] >= 3, "\(plans)")
            #expect(paged >= 20)
        }
    }
}
