public import Foundation
import GRDB
public import SkiffDomain
public import SkiffLostFound

/// The SQLite ``SkiffLostFound/LostFoundStore``.
///
/// Each use case is one `pool.write { }` transaction or one `pool.read { }` snapshot. Every mutation loads
/// what ``SkiffLostFound/LostFoundLifecycle`` needs, lets it decide (existence, ownership, state) and saves
/// the result inside the same transaction, as ``SkiffLostFound/InMemoryLostFoundStore`` does, so both throw
/// the same errors. Reporting an item fetches the match candidates
/// (``matchCandidates(_:for:matcher:shapes:)`` walks them in order on the keyword table), lets the lifecycle score them with ``SkiffLostFound/LostFoundMatcher``,
/// and inserts the item and the matches it accepts, all in one transaction.
///
/// Search is one SQL statement (``searchStatement(_:limit:driver:)``, read by the index ``driver(_:_:)`` chooses), or for a circle a walk of its grid cells (``bandWalk(_:_:size:shapes:groupSize:alwaysWalk:)``): filters, the FTS5 index with prefix matching
/// of the last word, the circle (a box on the coordinate index, then ``PrivateDistanceFunction``), the
/// order, the keyset cursor and `LIMIT page + 1` all run in SQLite; `LostFoundSearchEngine` then checks the
/// page's rows and makes its cursors, so results equal the in-memory store's.
///
/// Get one from ``SQLiteDatabase/lostFoundStore()``.
public struct SQLiteLostFoundStore: LostFoundStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    /// Reads and scores the candidates on a reader, then records the report in the writer with those
    /// matches when no change since the reader's snapshot touched a possible candidate (the
    /// `lostFoundGeneration` counter, raised by triggers on every change to an item, and the changes
    /// remembered with it: ``candidatesUnchanged(_:since:now:for:matcher:)``); otherwise it reads and scores
    /// them again in the writer. So the one writer, shared by every store, usually only inserts, and the matches are
    /// always those of the items as they are when the report is recorded.
    public func reportItem(_ item: LostFoundItem, matcher: LostFoundMatcher) async throws -> LostFoundReport {
        try await reportItem(item, matcher: matcher, betweenReadAndWrite: {})
    }

    /// ``reportItem(_:matcher:)`` with `betweenReadAndWrite` run after the reader's scoring (tests change
    /// items there).
    package func reportItem(
        _ item: LostFoundItem,
        matcher: LostFoundMatcher,
        betweenReadAndWrite: () async throws -> Void
    ) async throws -> LostFoundReport {
        let shapes = pool.shapes
        let (generation, scored) = try await pool.domainRead { db in
            (
                try Self.generation(db),
                LostFoundLifecycle.matches(
                    for: item,
                    candidates: try Self.matchCandidates(db, for: item, matcher: matcher, shapes: shapes),
                    matcher: matcher
                )
            )
        }
        try await betweenReadAndWrite()
        return try await pool.domainWrite { db in
            let matches =
                try Self.candidatesUnchanged(
                    db,
                    since: generation,
                    now: Self.generation(db),
                    for: item,
                    matcher: matcher
                )
                ? scored
                : LostFoundLifecycle.matches(
                    for: item,
                    candidates: try Self.matchCandidates(db, for: item, matcher: matcher, shapes: shapes),
                    matcher: matcher
                )
            let report = try LostFoundLifecycle.report(
                item,
                itemIDTaken: try LostFoundItemRow.fetchOne(db, id: item.id) != nil,
                matches: matches
            )
            try LostFoundItemRow.insert(db, report.item)
            for match in report.matches { try LostFoundMatchRow.insert(db, match) }
            return report
        }
    }

    /// The count of changes to `lostFoundItem` so far ("lostfound-v4").
    static func generation(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM lostFoundGeneration WHERE id = 1")) ?? 0
    }

    /// Whether the candidates of `item` are the same at generation `current` as at `generation`: every change
    /// since is remembered (`lostFoundChange`, the last 1,024) and none of them touched an item that could be
    /// one of them, before or after the change (open, of the other kind, in the same category, within the
    /// time window, and after the change sharing a keyword). Reporter and distance are not checked, so a
    /// change may be counted as touching when it does not; never the other way round.
    static func candidatesUnchanged(
        _ db: Database,
        since generation: Int64,
        now current: Int64,
        for item: LostFoundItem,
        matcher: LostFoundMatcher
    ) throws -> Bool {
        if current == generation { return true }
        guard current > generation, current - generation <= 1_024 else { return false }
        let window = matcher.candidateWindowMilliseconds
        let occurred = item.occurredAt.millisecondsSince1970
        let keywords = String(
            decoding: try JSONEncoder().encode(LostFoundMatcher.keywords(item.fields).sorted()),
            as: UTF8.self
        )
        let row = try db.fetchOneCached(
            sql: """
                SELECT COUNT(*), COALESCE(MAX(
                    (c.oldOpen AND c.oldKind = ?1 AND c.oldCategory = ?2 AND c.oldOccurredAt BETWEEN ?3 AND ?4)
                    OR (c.newOpen AND c.newKind = ?1 AND c.newCategory = ?2 AND c.newOccurredAt BETWEEN ?3 AND ?4
                        AND EXISTS (SELECT 1 FROM lostFoundMatchKey k WHERE k.docID = c.docID
                            AND k.keyword IN (SELECT value FROM json_each(?6))))
                ), 0)
                FROM lostFoundChange c WHERE c.generation > ?5
                """,
            arguments: [
                item.kind.opposite.rawValue, item.category.rawValue, occurred - window, occurred + window, generation,
                keywords,
            ]
        )
        guard let row else { return false }
        let remembered: Int64 = row[0]
        let touched: Int64 = row[1]
        return remembered == current - generation && touched == 0
    }

    /// The keywords one candidate statement merges (the arms of its compound `SELECT`); a report with more
    /// runs one statement per group and keeps the first candidates of all groups together.
    static let keywordsPerStatement = 32

    /// The candidate statements of up to this many keywords go through the statement cache.
    static let cachedKeywordCount = 12

    /// The items that can match `item` (a superset of its matches): open items of the other kind in the same
    /// category within the time window, sharing a keyword, reported by someone else and — when `item` has a
    /// point — without a point or within the distance limit's box; at most `maximumCandidates`, the latest to
    /// occur first (ties: the greater id).
    ///
    /// Each keyword's rows of `lostFoundMatchKey` ("lostfound-v5") are walked in that order from the end of
    /// the window (one arm of a compound `SELECT … UNION … ORDER BY … LIMIT`, which SQLite merges lazily),
    /// so a report reads about `maximumCandidates` rows per keyword at most, plus those it skips as its
    /// reporter's own or outside the box, whatever the table holds.
    static func matchCandidates(
        _ db: Database,
        for item: LostFoundItem,
        matcher: LostFoundMatcher,
        shapes: BoundedStatementShapes
    ) throws -> [LostFoundItem] {
        let keywords = LostFoundMatcher.keywords(item.fields).sorted()
        guard !keywords.isEmpty else { return [] }
        var candidates: [LostFoundItem] = []
        for start in stride(from: 0, to: keywords.count, by: keywordsPerStatement) {
            let group = keywords[start..<min(start + keywordsPerStatement, keywords.count)]
            let statement = candidatesStatement(for: item, keywords: group, matcher: matcher)
            let prepared = try db.boundedCachedStatement(
                sql: statement.sql,
                shapes: shapes,
                if: group.count <= cachedKeywordCount
            )
            candidates += try Row.fetchAll(prepared, arguments: statement.arguments).map(LostFoundItemRow.item)
        }
        guard keywords.count > keywordsPerStatement else { return candidates }
        // Each group's first candidates include every one of the first candidates overall that shares one of
        // its keywords, so the first of their union are the first overall.
        var seen = Set<String>()
        return Array(
            candidates.filter { seen.insert($0.id).inserted }.sorted(by: LostFoundMatcher.takenBefore)
                .prefix(max(0, matcher.maximumCandidates))
        )
    }

    /// The statement of ``matchCandidates(_:for:matcher:shapes:)`` for one group of keywords.
    static func candidatesStatement(
        for item: LostFoundItem,
        keywords: ArraySlice<String>,
        matcher: LostFoundMatcher
    ) -> (sql: String, arguments: StatementArguments) {
        let window = matcher.candidateWindowMilliseconds
        let occurred = item.occurredAt.millisecondsSince1970
        let opposite = item.kind.opposite
        // ?1 kind, ?2 category, ?3 and ?4 the window, ?5 the reporter, ?6 the limit, ?7… the box, then keywords.
        var arguments: StatementArguments = [
            opposite.rawValue, item.category.rawValue, occurred - window, occurred + window, item.reporterID,
            max(0, matcher.maximumCandidates),
        ]
        var near = ""
        var first = 7
        if let box = matcher.candidateBox(item) {
            near = "c.latitude BETWEEN ?7 AND ?8"
            arguments += [box.latitude.lowerBound, box.latitude.upperBound]
            first = 9
            if let longitude = box.longitude {
                near += " AND c.longitude BETWEEN ?9 AND ?10"
                arguments += [longitude.lowerBound, longitude.upperBound]
                first = 11
            }
            near = " AND (c.latitude IS NULL OR (\(near)))"
        }
        arguments += StatementArguments(Array(keywords))
        let arms = keywords.indices.map { index in
            """
            SELECT k.occurredAt, k.id, k.docID FROM lostFoundMatchKey k JOIN lostFoundItem c ON c.docID = k.docID \
            WHERE k.kind = ?1 AND k.category = ?2 AND k.keyword = ?\(first + index - keywords.startIndex) \
            AND k.occurredAt BETWEEN ?3 AND ?4 AND c.reporterID <> ?5\(near)
            """
        }
        return (
            """
            SELECT i.* FROM lostFoundItem i JOIN (\(arms.joined(separator: " UNION ")) ORDER BY 1 DESC, 2 DESC \
            LIMIT ?6) m ON i.docID = m.docID ORDER BY i.occurredAt DESC, i.id DESC
            """,
            arguments
        )
    }

    public func item(id: String) async throws -> LostFoundItem? {
        try await pool.domainRead { db in try LostFoundItemRow.fetchOne(db, id: id) }
    }

    public func updateItem(
        id: String,
        reporterID: String,
        changes: LostFoundItemChanges,
        now: Date
    ) async throws -> LostFoundItem {
        try await pool.domainWrite { db in
            let change = try LostFoundLifecycle.update(
                try LostFoundItemRow.fetchOne(db, id: id),
                reporterID: reporterID,
                changes: changes,
                now: now
            )
            if change.changed { try LostFoundItemRow.update(db, change.item) }
            return change.item
        }
    }

    public func markReturned(id: String, reporterID: String, now: Date) async throws -> LostFoundItem {
        try await pool.domainWrite { db in
            let change = try LostFoundLifecycle.markReturned(
                try LostFoundItemRow.fetchOne(db, id: id),
                reporterID: reporterID,
                now: now
            )
            if change.changed { try LostFoundItemRow.update(db, change.item) }
            return change.item
        }
    }

    public func search(_ query: LostFoundQuery, page: PageRequest) async throws -> Page<LostFoundSearchHit> {
        let compiled = try CompiledLostFoundQuery(query, page: page)
        let size = page.size
        let shapes = pool.shapes
        return try await pool.domainRead { db in
            let driver = try Self.driver(db, compiled)
            if driver == .cells, let hits = try Self.bandWalk(db, compiled, size: size, shapes: shapes) {
                return LostFoundSearchEngine.page(hits, compiled, size: size)
            }
            let byDistance = compiled.query.sort == .distance
            let statement = Self.searchStatement(
                compiled,
                limit: size + 1,
                driver: driver == .cells ? (byDistance ? nil : .newest) : driver
            )
            let items = try LostFoundItemRow.fetchAll(db, sql: statement.sql, arguments: statement.arguments)
            let hits = items.compactMap { LostFoundSearchEngine.hit($0, compiled) }
            return LostFoundSearchEngine.page(ordered: hits, compiled, size: size)
        }
    }

    /// What a search reads first: the index that answers its most selective filter, whose rows SQLite then
    /// sorts (`nil`: SQLite chooses), a walk of the newest-first index checking every filter on each item
    /// until the page is full, or for a search in a circle a walk of the circle's cells, band by band in
    /// distance order (``bandWalk(_:_:size:shapes:groupSize:alwaysWalk:)``). `reporter`: the searcher's own items, read on the reporter's index.
    enum Driver: Hashable, Sendable {
        case keywords, box, categories, building, newest, cells, reporter
    }

    /// Items read at most to estimate how many items a filter keeps.
    static let driverEstimateBound = 512

    /// Keyword matches read at most (each with its item) to estimate how many of them pass the other filters.
    static let keywordMatchBound = 4_096

    /// How a search reads (see ``Driver``): a filter keeping fewer than ``driverEstimateBound`` items drives it
    /// (its few items are read and sorted); otherwise a newest-first search walks newest first, which reads
    /// about page × (items ÷ kept) items when every filter keeps many, and a search in a circle walks the
    /// circle's cells (band by band in distance order). Each estimate reads at most the bound's entries of
    /// one index; with categories, a building or a circle, the keywords' reads their first
    /// ``keywordMatchBound`` matches with their items and counts those that pass those filters too (words and
    /// categories that are each common but rarely go together keep few).
    static func driver(_ db: Database, _ compiled: CompiledLostFoundQuery) throws -> Driver? {
        let query = compiled.query
        let bound = driverEstimateBound
        func few(_ sql: String, _ arguments: StatementArguments) throws -> Bool {
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM (\(sql) LIMIT \(bound))"),
                arguments: arguments
            )
                ?? 0 < bound
        }
        if !compiled.terms.isEmpty {
            // The keywords' matches that also pass the other column filters: words and categories, words and a
            // building, or words and a place can each be common and yet rarely go together.
            var sql = "SELECT 1 FROM lostFoundItemSearch"
            var arguments: StatementArguments = [TextSearch.ftsExpression(compiled.terms)]
            let filtered = !query.filter.categories.isEmpty || compiled.buildingKey != nil || query.filter.near != nil
            let filters =
                filtered
                ? filterConditions(compiled, box: true, column: { "+i.\($0)" }) { value in
                    arguments += [value]
                    return "?"
                } : []
            if filters.isEmpty {
                if try few(sql + " WHERE lostFoundItemSearch MATCH ?", arguments) { return .keywords }
            } else {
                // Counted among the first `keywordMatchBound` matches, and only decisive when there are no more.
                let matches = """
                    SELECT rowid FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH ? \
                    LIMIT \(keywordMatchBound)
                    """
                sql = """
                    SELECT 1 FROM (\(matches)) s CROSS JOIN lostFoundItem i ON i.docID = s.rowid \
                    WHERE \(filters.joined(separator: " AND "))
                    """
                if try few(sql, arguments),
                    try Int.fetchOne(
                        db.cachedStatement(sql: "SELECT COUNT(*) FROM (\(matches))"),
                        arguments: [TextSearch.ftsExpression(compiled.terms)]
                    ) ?? 0 < keywordMatchBound
                {
                    return .keywords
                }
            }
        }
        if let near = query.filter.near {
            let box = LostFoundSearchEngine.boundingBox(near)
            if try few(
                "SELECT 1 FROM lostFoundItem WHERE latitude BETWEEN ? AND ?",
                [box.latitude.lowerBound, box.latitude.upperBound]
            ) {
                return .box
            }
        }
        if let key = compiled.buildingKey, try few("SELECT 1 FROM lostFoundItem WHERE buildingKey = ?", [key]) {
            return .building
        }
        if !query.filter.categories.isEmpty {
            let statuses = compiled.statuses.map(\.rawValue).sorted()
            let categories = query.filter.categories.map(\.rawValue).sorted()
            let sql = """
                SELECT 1 FROM lostFoundItem WHERE status IN (\(databaseQuestionMarks(count: statuses.count))) \
                AND category IN (\(databaseQuestionMarks(count: categories.count)))
                """
            if try few(sql, StatementArguments(statuses + categories)) { return .categories }
        }
        return query.filter.near != nil ? .cells : .newest
    }

    /// The cells one band statement merges (the arms of its compound `SELECT`); a band with more runs one
    /// statement per group.
    static let cellsPerStatement = 32

    /// Band statements of up to this many cells go through the statement cache.
    static let cachedCellCount = 8

    /// The candidates of a page of a search in a circle, read from the circle's grid cells; `nil` when the
    /// circle's box wraps around the antimeridian or a pole, or when a newest-first search would read fewer
    /// rows walking every item newest first (the search then reads the box, or walks newest first).
    ///
    /// Everyone else's items are in the circle when their cell's centre is, and are shown the distance to it,
    /// rounded (``SkiffDomain/ApproximateLocation``), so distance order is band by band of the circle's cells
    /// (``SkiffDomain/GridCircle/bands(_:)``), newest first within a band; newest first is all the circle's cells
    /// as one band. A circle holding no cell's centre reads none of them. The cells holding items, with
    /// their item counts, are looked up in `lostFoundCell` ("lostfound-v6"), one range per row of the
    /// circle's box. Each band's items come from ``bandStatement(_:cells:after:limit:)`` (one statement per
    /// `groupSize` of its cells), which walks its cells' `(cell, createdAt, id)` index newest first; rows are
    /// stepped one at a time, those of items outside the keywords' FTS5 matches (listed once per walk)
    /// skipped, the others checked with `LostFoundSearchEngine.hit`, and the walk stops once `size + 1` hits
    /// are found, at the end of a band. The searcher's own items are measured to their exact points: read apart on the
    /// reporter's index (each of the reporter's items, sorted, the first `size + 1` kept), and merged in by
    /// `LostFoundSearchEngine.page`.
    ///
    /// Bounded by: the box's rows (at most about 900 range lookups at the largest radius); one index seek
    /// per occupied cell of the circle at most, and one statement per band or group of cells; the keywords'
    /// matches, once; the rows the walk steps through until `size + 1` pass every filter (per group of a
    /// band's cells); and the searcher's own items. Newest first takes this walk only when its statements (one per group of
    /// cells, each reading up to `size + 1` rows that pass) are fewer than the walk over every item would
    /// read per hit, as the items in the circle's cells and in the table say (`alwaysWalk`: it always does;
    /// for tests).
    static func bandWalk(
        _ db: Database,
        _ compiled: CompiledLostFoundQuery,
        size: Int,
        shapes: BoundedStatementShapes,
        groupSize: Int = cellsPerStatement,
        alwaysWalk: Bool = false
    ) throws -> [LostFoundSearchEngine.Hit]? {
        guard let near = compiled.query.filter.near, let box = LostFoundSearchEngine.grid(near).boxCells else {
            return nil
        }
        let items = try GridCells.occupied(db, table: "lostFoundCell", count: "items", box: box)
        let byDistance = compiled.query.sort == .distance
        var bands = LostFoundSearchEngine.grid(near).bands(items.keys)
        if !byDistance, !bands.isEmpty {
            bands = [(distance: 0, cells: bands.flatMap(\.cells))]
            // Newest first over many cells: the walk over every item, checking the circle, may read less.
            let statements = (bands[0].cells.count + groupSize - 1) / groupSize
            if statements > 1, !alwaysWalk {
                let kept = bands[0].cells.reduce(Int64(0)) { $0 + (items[$1] ?? 0) }
                let total = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(docID) FROM lostFoundItem")) ?? 0
                if Int64(statements) * kept > total { return nil }
            }
        }
        var hits: [LostFoundSearchEngine.Hit] = []
        if let viewer = compiled.query.viewerID {
            let own = searchStatement(compiled, limit: size + 1, driver: .reporter, reporter: viewer)
            hits += try LostFoundItemRow.fetchAll(db, sql: own.sql, arguments: own.arguments)
                .compactMap { LostFoundSearchEngine.hit($0, compiled) }
        }
        // The keywords' matches, listed once for the whole walk: rows of other items are skipped undecoded.
        let matching: Set<Int64>? =
            compiled.terms.isEmpty
            ? nil
            : try Int64.fetchSet(
                db.cachedStatement(sql: "SELECT rowid FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH ?"),
                arguments: [TextSearch.ftsExpression(compiled.terms)]
            )
        let cursor = compiled.cursor.map { (distance: $0.d, createdAt: $0.c, id: $0.i) }
        return try hits
            + GridCells.walk(
                db,
                bands: bands,
                order: byDistance ? .distance : .newest,
                cursor: cursor,
                size: size,
                groupSize: groupSize,
                cachedGroupSize: cachedCellCount,
                shapes: shapes,
                // Without keywords every row a statement returns is a hit: it stops at `need`.
                statement: { group, after, need in
                    bandStatement(compiled, cells: group, after: after, limit: compiled.terms.isEmpty ? need : -1)
                },
                hit: { row in
                    if let matching, !matching.contains(row[0]) { return nil }
                    return LostFoundSearchEngine.hit(LostFoundItemRow.item(row), compiled)
                }
            )
    }

    /// The statement of one band (or group of a band's cells) for ``bandWalk(_:_:size:shapes:groupSize:alwaysWalk:)``:
    /// the items of `cells`, newest first after `after`, reported by someone other than the searcher, that
    /// pass the search's status, category and building filters; at most `limit` (none: -1). The keywords are
    /// left to the caller.
    ///
    /// Each cell is one arm of a compound `SELECT … UNION ALL … ORDER BY createdAt DESC, id DESC` walking the
    /// `(cell, createdAt, id)` index; SQLite merges the arms lazily in a co-routine and checks the filters on
    /// the merged rows. The outer query has no `ORDER BY` of its own (one would make SQLite flatten the query
    /// and sort each arm): it relies on SQLite returning a subquery's rows in the subquery's order, which
    /// it does (3.40) but SQL does not promise; the search plan tests check the plan, and the differential
    /// tests the results.
    static func bandStatement(
        _ compiled: CompiledLostFoundQuery,
        cells: ArraySlice<ApproximateLocation.Cell>,
        after: (createdAt: Int64, id: String)?,
        limit: Int
    ) -> (sql: String, arguments: StatementArguments) {
        let query = compiled.query
        var values: [(any DatabaseValueConvertible)?] = [query.viewerID, after?.createdAt, after?.id, limit]
        func bind(_ value: (any DatabaseValueConvertible)?) -> String {
            values.append(value)
            return "?\(values.count)"
        }
        let tail =
            after == nil ? "" : " AND i.createdAt <= ?2 AND (i.createdAt < ?2 OR (i.createdAt = ?2 AND i.id < ?3))"
        let arms = cells.map { cell in
            "SELECT i.* FROM lostFoundItem i WHERE i.cell = \(bind(GridCells.key(cell))) "
                + "AND i.reporterID IS NOT ?1\(tail)"
        }
        let conditions = filterConditions(compiled, box: false, column: { "+i.\($0)" }, bind: bind)
        return (
            """
            SELECT i.* FROM (\(arms.joined(separator: " UNION ALL ")) ORDER BY createdAt DESC, id DESC) i \
            WHERE \(conditions.joined(separator: " AND ")) LIMIT ?4
            """,
            StatementArguments(values)
        )
    }

    /// The conditions of a search's status, category and building filters and, with `box`, its circle's box
    /// (``SkiffLostFound/LostFoundSearchEngine/boundingBox(_:)``), on the items' alias `i`: one definition for
    /// every statement and estimate that checks them. `column` writes a column (a unary `+` keeps SQLite
    /// from reading by its index); `bind` takes a value and gives its placeholder.
    static func filterConditions(
        _ compiled: CompiledLostFoundQuery,
        box: Bool,
        column: (String) -> String,
        bind: (any DatabaseValueConvertible) -> String
    ) -> [String] {
        let filter = compiled.query.filter
        func list(_ values: [String]) -> String { values.sorted().map(bind).joined(separator: ", ") }
        var conditions = ["\(column("status")) IN (\(list(compiled.statuses.map(\.rawValue))))"]
        if !filter.categories.isEmpty {
            conditions.append("\(column("category")) IN (\(list(filter.categories.map(\.rawValue))))")
        }
        if let key = compiled.buildingKey { conditions.append("\(column("buildingKey")) = \(bind(key))") }
        if box, let near = filter.near {
            let box = LostFoundSearchEngine.boundingBox(near)
            conditions.append(
                "\(column("latitude")) BETWEEN \(bind(box.latitude.lowerBound)) AND \(bind(box.latitude.upperBound))"
            )
            if let longitude = box.longitude {
                conditions.append(
                    "\(column("longitude")) BETWEEN \(bind(longitude.lowerBound)) AND \(bind(longitude.upperBound))"
                )
            }
        }
        return conditions
    }

    /// The one statement of a search: filters, keywords (FTS5), the circle (a box on the coordinate index,
    /// then ``PrivateDistanceFunction``), the order, the keyset cursor and the limit, all inside SQLite.
    /// `driver` says which index reads first (a unary `+` keeps SQLite from using the others' indexes).
    /// `reporter` keeps only that reporter's items (with the driver ``Driver/reporter``).
    static func searchStatement(
        _ compiled: CompiledLostFoundQuery,
        limit: Int,
        driver: Driver?,
        reporter: String? = nil
    ) -> (sql: String, arguments: StatementArguments) {
        let query = compiled.query
        var conditions: [String] = []
        var arguments: StatementArguments = []
        var columns = "i.*"
        var columnArguments: StatementArguments = []
        func column(_ name: String, drives: Bool) -> String { driver == nil || drives ? "i.\(name)" : "+i.\(name)" }
        let drivers: [String: Driver] = [
            "status": .categories, "category": .categories, "buildingKey": .building, "latitude": .box,
            "longitude": .box,
        ]
        conditions += filterConditions(compiled, box: true, column: { column($0, drives: driver == drivers[$0]) }) {
            arguments += [$0]
            return "?"
        }
        if let reporter {
            conditions.append("i.reporterID = ?")
            arguments += [reporter]
        }
        if !compiled.terms.isEmpty {
            conditions.append(
                "\(column("docID", drives: driver == .keywords)) IN "
                    + "(SELECT rowid FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH ?)"
            )
            arguments += [TextSearch.ftsExpression(compiled.terms)]
        }
        let byDistance = query.sort == .distance && query.filter.near != nil
        if let near = query.filter.near {
            let center: StatementArguments = [near.center.latitude, near.center.longitude, query.viewerID]
            conditions.append(PrivateDistanceFunction.call(table: "i", owner: "reporterID", shown: false) + " <= ?")
            arguments += center
            arguments += [near.radiusKm]
            if byDistance {
                columns += ", " + PrivateDistanceFunction.call(table: "i", owner: "reporterID", shown: true)
                columns += " AS distanceShown"
                columnArguments += center
            }
        }
        if let cursor = compiled.cursor {
            let created = column("createdAt", drives: driver == .newest)
            let tail = "(\(created) < ? OR (\(created) = ? AND \(column("id", drives: driver == .newest)) < ?))"
            if byDistance, let near = query.filter.near {
                let distance = PrivateDistanceFunction.call(table: "i", owner: "reporterID", shown: true)
                let d = cursor.d ?? 0
                conditions.append("(\(distance) > ? OR (\(distance) = ? AND \(tail)))")
                let center: StatementArguments = [near.center.latitude, near.center.longitude, query.viewerID]
                arguments += center
                arguments += [d]
                arguments += center
                arguments += [d, cursor.c, cursor.c, cursor.i]
            } else {
                // The bound on `createdAt` lets SQLite seek the index to the cursor (when it walks newest first).
                conditions.append("\(column("createdAt", drives: driver == .newest)) <= ? AND \(tail)")
                arguments += [cursor.c, cursor.c, cursor.c, cursor.i]
            }
        }
        let order = byDistance ? "distanceShown ASC, i.createdAt DESC, i.id DESC" : "i.createdAt DESC, i.id DESC"
        var all = columnArguments
        all += arguments
        all += [limit]
        return (
            "SELECT \(columns) FROM lostFoundItem i WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT ?",
            all
        )
    }

    public func matches(recordedSince date: Date, limit: Int) async throws -> [LostFoundMatch] {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM lostFoundMatch WHERE matchedAt >= ?
                        ORDER BY matchedAt, foundItemID, lostItemID LIMIT ?
                        """
                ),
                arguments: [date.millisecondsSince1970, max(limit, 0)]
            ).map { row in
                LostFoundMatch(
                    foundItemID: row["foundItemID"],
                    lostItemID: row["lostItemID"],
                    score: row["score"],
                    distanceKm: row["distanceKm"],
                    matchedAt: Date(millisecondsSince1970: row["matchedAt"])
                )
            }
        }
    }

    public func items(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        page: PageRequest
    ) async throws -> Page<LostFoundOwnItem> {
        let cursor = try LostFoundSearchEngine.ownItemsCursor(page, reporterID: reporterID, statuses: statuses)
        // The reporter's index (lostfound-v3) in order; each row's matches counted through the match keys.
        var sql = """
            SELECT i.*, CASE i.kind
                WHEN 'found' THEN (SELECT COUNT(*) FROM lostFoundMatch m WHERE m.foundItemID = i.id)
                ELSE (SELECT COUNT(*) FROM lostFoundMatch m WHERE m.lostItemID = i.id) END AS matchCount
            FROM lostFoundItem i INDEXED BY lostFoundItem_reporterID_createdAt_id
            WHERE i.reporterID = ?
            """
        var arguments: StatementArguments = [reporterID]
        if !statuses.isEmpty {
            let ordered = statuses.map(\.rawValue).sorted()
            sql += " AND i.status IN (\(ordered.map { _ in "?" }.joined(separator: ", ")))"
            arguments += StatementArguments(ordered)
        }
        if let cursor {
            // The bound on `createdAt` lets SQLite seek the index to the cursor (the OR alone would not).
            sql += " AND i.createdAt <= ? AND (i.createdAt < ? OR (i.createdAt = ? AND i.id < ?))"
            arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
        }
        sql += " ORDER BY i.createdAt DESC, i.id DESC LIMIT ?"
        arguments += [page.size + 1]
        let (query, values) = (sql, arguments)
        let fetched = try await pool.domainRead { db in
            try Row.fetchAll(db, sql: query, arguments: values).map { row in
                LostFoundOwnItem(item: LostFoundItemRow.item(row), matchCount: row["matchCount"])
            }
        }
        return LostFoundSearchEngine.ownItemsPage(fetched, size: page.size, reporterID: reporterID, statuses: statuses)
    }

    public func matches(itemID: String, page: PageRequest) async throws -> Page<LostFoundMatchHit> {
        let cursor = try LostFoundSearchEngine.matchCursor(page, itemID: itemID)
        return try await pool.domainRead { db in
            guard let item = try LostFoundItemRow.fetchOne(db, id: itemID) else {
                throw LostFoundStoreError.itemNotFound
            }
            let (own, other) = item.kind == .found ? ("foundItemID", "lostItemID") : ("lostItemID", "foundItemID")
            var sql = """
                SELECT i.*, m.score AS matchScore, m.distanceKm AS matchDistanceKm, m.matchedAt AS matchedAt
                FROM lostFoundMatch m JOIN lostFoundItem i ON i.id = m.\(other)
                WHERE m.\(own) = ?
                """
            var arguments: StatementArguments = [itemID]
            if let cursor {
                sql += """
                     AND m.score <= ? AND (m.score < ? OR (m.score = ? AND (m.matchedAt < ? OR (m.matchedAt = ? AND i.id < ?))))
                    """
                arguments += [cursor.r, cursor.r, cursor.r, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY m.score DESC, m.matchedAt DESC, i.id DESC LIMIT ?"
            arguments += [page.size + 1]
            let hits = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                LostFoundMatchHit(
                    candidate: LostFoundItemRow.item(row),
                    score: row["matchScore"],
                    distanceKm: row["matchDistanceKm"],
                    matchedAt: Date(millisecondsSince1970: row["matchedAt"])
                )
            }
            return LostFoundSearchEngine.matchesPage(hits, itemID: itemID, cursor: nil, size: page.size)
        }
    }
}
