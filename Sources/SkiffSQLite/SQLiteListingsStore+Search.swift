import Foundation
import GRDB
import SkiffDomain
import SkiffListings

extension SQLiteListingsStore {
    /// Searches with one SQL statement per query shape (``ListingSearchSQL``): the filters, keywords (FTS5),
    /// circle (a bounding box on the coordinate index, then the distance function), order, keyset cursor and
    /// `LIMIT page + 1` all run inside SQLite, so a page costs what its rows cost plus what the indexes
    /// touch, not the table. The page's rows are then checked by `ListingSearchEngine.hit` (the shared
    /// definition, which also supplies the distance shown) and paged with its cursors.
    public func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit> {
        let compiled = try CompiledListingQuery(query, page: page)
        let size = page.size
        return try await pool.domainRead { db in
            var rows: [Row] = []
            if try ListingSearchSQL.keywordStrategy(db, compiled, size: size) == .check {
                let statement = ListingSearchSQL.statement(compiled, limit: size + 1, keywords: .check)
                rows = try Row.fetchAll(db, sql: statement.sql, arguments: statement.arguments)
            }
            if rows.count <= size {
                // No keywords, rare ones, or a walk that did not fill the page: the complete statement.
                let statement = ListingSearchSQL.statement(compiled, limit: size + 1, keywords: .collect)
                rows = try Row.fetchAll(db, sql: statement.sql, arguments: statement.arguments)
            }
            let hits = rows.compactMap { row -> ListingSearchEngine.Hit? in
                guard var hit = ListingSearchEngine.hit(ListingRow.listing(row), compiled) else { return nil }
                // The order and the cursor use SQL's score, so the next page continues exactly where SQL
                // stopped (it equals the engine's score: both count the same tokens).
                if compiled.query.sort == .relevance, let score: Int = row[ListingSearchSQL.scoreColumn] {
                    hit.score = score
                }
                return hit
            }
            return ListingSearchEngine.page(ordered: hits, compiled, size: size)
        }
    }
}

/// The SQL of listing search, one statement per query, built from a ``CompiledListingQuery``.
///
/// Every shape the RPC allows is answered from indexes (a test reads `EXPLAIN QUERY PLAN` for each):
/// - filters on `status` (always present) lead every statement, so SQLite walks the
///   `(status, sort key, createdAt, id)` index of the order, or the FTS5 match, never the table;
/// - keywords (every term must match a token, the last one as a prefix): for rare words, `docID IN (FTS5
///   MATCH)` collects their few matches first; for common ones (``keywordStrategy(_:_:size:)``, from the
///   word counts of `listingSearchTerms`), each listing the order's index walks is checked from its own
///   indexed words (`WordsMatchFunction`), so a page costs about `page / share of listings matching`;
/// - relevance: ``SearchText``'s integer score, computed in SQL from the FTS5 index's token instances
///   (`listingSearchInstance`, an `fts5vocab` table): per query term, 3 for each matching title token, 2
///   for each tag token, 1 for each description token;
/// - a circle: a latitude/longitude box on the coordinate index, then `skiff_private_distance`
///   (``PrivateDistanceFunction``) filters and orders.
enum ListingSearchSQL {
    /// The column that holds the relevance score.
    static let scoreColumn = "relevanceScore"
    /// The column that holds the distance shown (distance sort).
    static let distanceColumn = "distanceShown"

    /// A statement and its arguments.
    struct Statement {
        var sql: String
        var arguments: StatementArguments
    }

    /// How keyword conditions are written.
    enum KeywordStrategy: CaseIterable {
        /// `docID IN (SELECT rowid … MATCH …)`: the matches are collected first (rare words; relevance).
        case collect
        /// `skiff_words_match(…)`: each listing the order's index walks is checked (`WordsMatchFunction`).
        case check
    }

    /// Collect when the words are rare (or every match is needed, for relevance), check when they are
    /// common: with `m` of `n` listings matching, collecting costs about `m`, walking `(size + 1) · n / m`.
    static func keywordStrategy(_ db: Database, _ query: CompiledListingQuery, size: Int) throws -> KeywordStrategy {
        guard !query.terms.isEmpty, query.query.sort != .relevance, query.query.sort != .distance else {
            return .collect
        }
        let total = try Int.fetchOne(db, sql: "SELECT MAX(docID) FROM listing") ?? 0
        var smallest = Int.max
        for (position, term) in query.terms.enumerated() {
            let count: Int
            if position == query.terms.count - 1, let upper = prefixUpperBound(term) {
                count =
                    try Int.fetchOne(
                        db,
                        sql: "SELECT SUM(doc) FROM listingSearchTerms WHERE term >= ? AND term < ?",
                        arguments: [term, upper]
                    ) ?? 0
            } else if position == query.terms.count - 1 {
                return .collect
            } else {
                count =
                    try Int.fetchOne(db, sql: "SELECT doc FROM listingSearchTerms WHERE term = ?", arguments: [term])
                    ?? 0
            }
            smallest = min(smallest, count)
        }
        return smallest * smallest < (size + 1) * max(total, 1) ? .collect : .check
    }

    /// The statement for `query`, returning at most `limit` rows in the query's order after its cursor.
    static func statement(_ query: CompiledListingQuery, limit: Int, keywords: KeywordStrategy = .collect) -> Statement
    {
        let sort = query.query.sort
        var conditions = filterConditions(query)
        var columns = "listing.*"
        var from = "listing"
        var columnArguments: StatementArguments = []
        var fromArguments: StatementArguments = []

        if !query.terms.isEmpty {
            switch keywords {
            case .collect:
                conditions.append(
                    "listing.docID IN (SELECT rowid FROM listingSearch WHERE listingSearch MATCH ?)",
                    [SearchText.ftsExpression(query.terms)]
                )
            case .check:
                break  // applied around the walk below
            }
        }
        if let near = query.query.filter.near {
            let box = ListingSearchEngine.boundingBox(near)
            conditions.append(
                "listing.latitude BETWEEN ? AND ?",
                [box.latitude.lowerBound, box.latitude.upperBound]
            )
            if let longitude = box.longitude {
                conditions.append("listing.longitude BETWEEN ? AND ?", [longitude.lowerBound, longitude.upperBound])
            }
            let viewer = query.query.viewerID
            conditions.append(
                PrivateDistanceFunction.call(table: "listing", owner: "sellerID", shown: false) + " <= ?",
                [near.center.latitude, near.center.longitude, viewer, near.radiusKm]
            )
            if sort == .distance {
                columns += ", " + PrivateDistanceFunction.call(table: "listing", owner: "sellerID", shown: true)
                columns += " AS \(distanceColumn)"
                columnArguments += [near.center.latitude, near.center.longitude, viewer]
            }
        }
        if sort == .relevance, !query.terms.isEmpty {
            let score = scoreSQL(query.terms)
            from += " JOIN (\(score.sql)) AS score ON score.doc = listing.docID"
            fromArguments += score.arguments
            columns += ", score.total AS \(scoreColumn)"
        }
        if let cursor = query.cursor { appendKeyset(&conditions, cursor: cursor, query: query) }

        let order: String
        switch sort {
        case .priceAscending: order = "listing.priceCents ASC, listing.createdAt DESC, listing.id DESC"
        case .priceDescending: order = "listing.priceCents DESC, listing.createdAt DESC, listing.id DESC"
        case .title: order = "listing.titleKey ASC, listing.createdAt DESC, listing.id DESC"
        case .relevance where !query.terms.isEmpty:
            order = "\(scoreColumn) DESC, listing.createdAt DESC, listing.id DESC"
        case .distance where query.query.filter.near != nil:
            order = "\(distanceColumn) ASC, listing.createdAt DESC, listing.id DESC"
        default: order = "listing.createdAt DESC, listing.id DESC"
        }
        var arguments = columnArguments
        arguments += fromArguments
        arguments += conditions.arguments
        if keywords == .check, !query.terms.isEmpty {
            // Walk at most `checkBudget` listings that pass the other filters, in order from the cursor, and
            // keep those whose own indexed words match (`WordsMatchFunction`; not an FTS5 lookup per row,
            // which evaluates its whole query again each time). The caller collects instead when the budget
            // did not fill the page.
            arguments += [checkBudget, query.terms.joined(separator: " "), limit]
            return Statement(
                sql: """
                    SELECT * FROM (
                        SELECT \(columns) FROM \(from) WHERE \(conditions.sql) ORDER BY \(order) LIMIT ?
                    ) AS walked
                    WHERE skiff_words_match(walked.searchTitle, walked.searchDescription, walked.searchTags, ?)
                    ORDER BY \(order.replacingOccurrences(of: "listing.", with: "walked.")) LIMIT ?
                    """,
                arguments: arguments
            )
        }
        arguments += [limit]
        return Statement(
            sql: "SELECT \(columns) FROM \(from) WHERE \(conditions.sql) ORDER BY \(order) LIMIT ?",
            arguments: arguments
        )
    }

    /// The most listings a `check` search walks before it gives up and collects the matches instead.
    static let checkBudget = 2_000

    /// The relevance score of every document holding a query term, from the FTS5 token instances: one
    /// `SELECT` per term (so a token matching two terms counts twice, as in ``SearchText/score``), the
    /// last term as a prefix range.
    static func scoreSQL(_ terms: [String]) -> Statement {
        let weight = "CASE col WHEN 'searchTitle' THEN 3 WHEN 'searchTags' THEN 2 ELSE 1 END"
        var parts: [String] = []
        var arguments: StatementArguments = []
        for (index, term) in terms.enumerated() {
            let select = "SELECT doc, \(weight) AS weight FROM listingSearchInstance WHERE "
            if index == terms.count - 1 {
                if let upper = prefixUpperBound(term) {
                    parts.append(select + "term >= ? AND term < ?")
                    arguments += [term, upper]
                } else {
                    parts.append(select + "term >= ? AND substr(term, 1, ?) = ?")
                    arguments += [term, term.count, term]
                }
            } else {
                parts.append(select + "term = ?")
                arguments += [term]
            }
        }
        return Statement(
            sql: "SELECT doc, SUM(weight) AS total FROM (\(parts.joined(separator: " UNION ALL "))) GROUP BY doc",
            arguments: arguments
        )
    }

    /// The smallest string greater than every string that starts with `prefix` (UTF-8 order is code-point
    /// order): the prefix with its last scalar incremented, or `nil` if there is none.
    static func prefixUpperBound(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }  // skip the surrogates, which are not scalars
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                return String(result)
            }
        }
        return nil
    }

    /// SQL conditions joined by AND, with their arguments.
    struct Conditions {
        var parts: [String] = []
        var arguments: StatementArguments = []

        mutating func append(_ sql: String, _ values: [(any DatabaseValueConvertible)?] = []) {
            parts.append("(" + sql + ")")
            arguments += StatementArguments(values)
        }

        var sql: String { parts.isEmpty ? "1" : parts.joined(separator: " AND ") }
    }

    /// The engine's filters (everything but keywords and the circle), in SQL.
    static func filterConditions(_ compiled: CompiledListingQuery) -> Conditions {
        let filter = compiled.query.filter
        var conditions = Conditions()
        func list(_ values: [String]) -> String { values.map { _ in "?" }.joined(separator: ", ") }
        let statuses = compiled.statuses.map(\.rawValue).sorted()
        conditions.append("listing.status IN (\(list(statuses)))", statuses)
        if !filter.categories.isEmpty {
            let values = filter.categories.map(\.rawValue).sorted()
            conditions.append("listing.category IN (\(list(values)))", values)
        }
        if !filter.conditions.isEmpty {
            let values = filter.conditions.map(\.rawValue).sorted()
            conditions.append("listing.condition IN (\(list(values)))", values)
        }
        if let min = filter.minPriceCents { conditions.append("listing.priceCents >= ?", [min]) }
        if let max = filter.maxPriceCents { conditions.append("listing.priceCents <= ?", [max]) }
        if let made = filter.madeOnCampus { conditions.append("listing.madeOnCampus = ?", [made]) }
        if let seller = filter.sellerID {
            if compiled.query.viewerID == seller {
                conditions.append("listing.sellerID = ?", [seller])
            } else {
                conditions.append("listing.sellerID = ? AND listing.anonymous = 0", [seller])
            }
        }
        if let since = filter.postedSince {
            conditions.append("listing.createdAt >= ?", [since.millisecondsSince1970])
        }
        // Every tag, as one condition whatever their number: a count over an `IN` list (the primary key
        // makes each (listing, tag) pair unique), not a chain of EXISTS whose expression tree grows with
        // the filter until SQLite refuses it ("Expression tree is too large").
        var seen: Set<String> = []
        let tags = compiled.tags.filter { seen.insert($0).inserted }
        if !tags.isEmpty {
            var values: [(any DatabaseValueConvertible)?] = tags.map { $0 }
            values.append(tags.count)
            conditions.append(
                "(SELECT COUNT(*) FROM listingTag t WHERE t.listingID = listing.id AND t.tag IN (\(list(tags)))) = ?",
                values
            )
        }
        return conditions
    }

    /// Adds "strictly after the cursor" in the query's order.
    static func appendKeyset(
        _ conditions: inout Conditions,
        cursor: ListingSearchEngine.Cursor,
        query: CompiledListingQuery
    ) {
        let tail = "(listing.createdAt < ? OR (listing.createdAt = ? AND listing.id < ?))"
        let tailValues: [(any DatabaseValueConvertible)?] = [cursor.c, cursor.c, cursor.i]
        // Each condition starts with a bound on the order's leading column (redundant with the exact
        // keyset that follows), so that SQLite seeks the index to the cursor instead of walking it from its
        // start on every page: deep pages cost what the first one does.
        switch query.query.sort {
        case .priceAscending:
            let p = cursor.p ?? 0
            conditions.append(
                "listing.priceCents >= ? AND (listing.priceCents > ? OR (listing.priceCents = ? AND \(tail)))",
                [p, p, p] + tailValues
            )
        case .priceDescending:
            let p = cursor.p ?? 0
            conditions.append(
                "listing.priceCents <= ? AND (listing.priceCents < ? OR (listing.priceCents = ? AND \(tail)))",
                [p, p, p] + tailValues
            )
        case .title:
            let t = cursor.t ?? ""
            conditions.append(
                "listing.titleKey >= ? AND (listing.titleKey > ? OR (listing.titleKey = ? AND \(tail)))",
                [t, t, t] + tailValues
            )
        case .relevance where !query.terms.isEmpty:
            let r = cursor.r ?? 0
            conditions.append("score.total < ? OR (score.total = ? AND \(tail))", [r, r] + tailValues)
        case .distance where query.query.filter.near != nil:
            guard let near = query.query.filter.near else { return }
            let d = cursor.d ?? 0
            let distance = PrivateDistanceFunction.call(table: "listing", owner: "sellerID", shown: true)
            let point: [(any DatabaseValueConvertible)?] = [
                near.center.latitude, near.center.longitude, query.query.viewerID,
            ]
            conditions.append(
                "\(distance) > ? OR (\(distance) = ? AND \(tail))",
                point + [d] + point + [d] + tailValues
            )
        default:
            conditions.append("listing.createdAt <= ? AND \(tail)", [cursor.c] + tailValues)
        }
    }
}
