import Foundation
import GRDB
public import SkiffDomain
public import SkiffListings

extension SQLiteListingsStore {
    /// Searches with one SQL statement per query shape (``ListingSearchSQL``), or a few for a walk of a
    /// circle's grid cells: the filters, keywords (FTS5), circle, order, keyset cursor and `LIMIT page + 1`
    /// all run inside SQLite, so a page costs what its rows cost plus what the indexes touch, not the table. How the statement finds its rows (``ListingSearchSQL/Plan``: walk an order
    /// index, collect the keyword matches, walk a circle's grid cells, or leave it to SQLite's planner) is
    /// chosen first, in the same read; distance order in a circle walks its cells band by band
    /// (``bandWalk(_:_:occupied:size:shapes:groupSize:)``) unless ``distancePlan(_:_:size:occupied:)`` says a
    /// filter keeps few. The page's rows are then checked by `ListingSearchEngine.hit` (the shared definition of the
    /// filters, which also supplies the distance shown; the keywords SQL matched are not tokenized again)
    /// and paged with its cursors.
    public func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit> {
        let compiled = try CompiledListingQuery(query, page: page)
        let size = page.size
        let shapes = pool.shapes
        return try await pool.domainRead { db in
            // The circle's occupied cells, for the shapes that may read them.
            let byDistance = compiled.query.sort == .distance && compiled.query.filter.near != nil
            let occupied =
                byDistance || ListingSearchSQL.walkIndex(compiled) != nil
                ? try compiled.query.filter.near.flatMap { try Self.occupiedCells(db, $0) } : nil
            let plan: ListingSearchSQL.Plan
            if byDistance {
                plan = try Self.distancePlan(db, compiled, size: size, occupied: occupied)
            } else {
                plan = try ListingSearchSQL.plan(compiled, size: size, occupied: occupied, db)
            }
            if plan == .cells, let occupied {
                let hits = try Self.bandWalk(db, compiled, occupied: occupied, size: size, shapes: shapes)
                return ListingSearchEngine.page(hits, compiled, size: size)
            }
            let statement = ListingSearchSQL.statement(compiled, limit: size + 1, plan: plan)
            let rows = try Row.fetchAll(
                db.boundedCachedStatement(sql: statement.sql, shapes: shapes),
                arguments: statement.arguments
            )
            guard let first = rows.first else { return ListingSearchEngine.page(ordered: [], compiled, size: size) }
            let layout = ListingRow.Layout(first)
            let scoreIndex = rows.first.flatMap { Array($0.columnNames).firstIndex(of: ListingSearchSQL.scoreColumn) }
            let hits = rows.compactMap { row -> ListingSearchEngine.Hit? in
                // The keywords were matched in SQL; the order and the cursor use SQL's score, so the next
                // page continues exactly where SQL stopped (it equals the engine's score: both count the
                // same tokens, which the differential test checks).
                guard
                    var hit = ListingSearchEngine.hit(ListingRow.listing(row, layout), compiled, keywordsMatched: true)
                else { return nil }
                if compiled.query.sort == .relevance, let scoreIndex, let score: Int = row[scoreIndex] {
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
/// - filters on `status` (always present) lead every statement, so SQLite walks the order's index
///   (`listing_newest`, `listing_price`, `listing_title`, or their `listing_category_…` forms, which also
///   carry the category, condition and price filters), or the FTS5 match, never the table;
/// - keywords, collected (``Plan/collect``, or in the planner's shapes): `docID IN (FTS5 MATCH)`; every
///   term must match a token, the last one as a prefix (a page costs about the number of matches);
/// - keywords, walked (``Plan/walk(index:)``): one `EXISTS` probe of `listingWord` (listing, token) per
///   term, on the listings the walk reaches (a page costs about `page · listings / matches` entries);
/// - relevance: ``SearchText``'s integer score, computed in SQL from each listing's words' points in
///   `listingWordImpact` (per query term, 3 for each matching title token, 2 for each tag token, 1 for
///   each description token), summed for the listings FTS5 matches; or, for one term that begins exactly one stored
///   word, read in that order from the word's rows of `listingWordImpact` (``Plan/impact(word:)``);
/// - a circle: a latitude/longitude box on the search point (each listing's point, or its zip code's
///   centroid), then `skiff_private_distance` (``PrivateDistanceFunction``) filters and orders; walked
///   (``Plan/walk(index:)``), the box and distance are checked on each row the walk reaches; or the circle's
///   grid cells are read instead (``Plan/cells``, ``SQLiteListingsStore/bandWalk(_:_:occupied:size:shapes:groupSize:)``);
/// - a seller: the seller's index (`listing_sellerID_createdAt_id`), every listing of the seller.
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

    /// How a statement finds its rows.
    enum Plan: Hashable {
        /// SQLite's planner chooses (shapes with a seller, which read the seller's index, tags, several
        /// statuses, relevance order, or a circle whose box wraps); keywords are collected from FTS5
        /// (`docID IN (MATCH)`).
        case planner
        /// The keyword matches drive: FTS5 collects their row ids, and each match's filter and order columns
        /// are read by its id from ``ListingSearchSQL/keysIndex``, filtered, sorted and cut to the page; only
        /// the page's rows are then read (`INDEXED BY`, so that SQLite's planner, which cannot know how many
        /// listings match, does not walk an order index instead). With a circle, each match's row is read
        /// (`NOT INDEXED`). A page costs about the number of matches, in entries of a narrow index.
        case collect
        /// Walk the named order index (`INDEXED BY`) from the cursor, checking the filters in the index
        /// and each keyword with one probe of `listingWord`, until the page is full: a page costs about
        /// `(page + 1) · listings / matches` index entries, and reads a table row only for a result.
        case walk(index: String)
        /// The circle's grid cells drive (``SQLiteListingsStore/bandWalk(_:_:occupied:size:shapes:groupSize:)``):
        /// newest first, each group of cells until it holds the page; in another order, every listing of the
        /// cells, sorted. A page costs about the listings it reads in the circle's cells.
        case cells
        /// Relevance order for one term that is a prefix of exactly one stored word: walk that word's rows
        /// of the status in `listingWordImpact` backwards from the cursor (points, then newest first: the
        /// relevance order), reading each listing by its id to check the filters, until the page is full. A
        /// page costs about `(page + 1) / filter selectivity` rows, however many listings hold the word.
        case impact(word: String)
        /// Relevance order with no filter but the statuses (``ranksWithoutRows(_:)``): the matches' scores are
        /// summed from `listingWordImpact`, whose rows carry the order's tie-breakers (created, id), then sorted
        /// and cut to the page before a listing row is read. A page costs about the words' rows (the
        /// statuses' rows for a whole word; a prefix's range reads every status's), with no row read per match.
        case scores
    }

    /// The order index a search can walk, or `nil` when its shape needs SQLite's planner: a seller, tags,
    /// several statuses, relevance order (which needs every match's score) or distance order in a circle
    /// (which walks the circle's cells instead).
    static func walkIndex(_ query: CompiledListingQuery) -> String? {
        let filter = query.query.filter
        guard filter.sellerID == nil, query.tags.isEmpty, query.statuses.count == 1 else {
            return nil
        }
        let order: String
        switch query.query.sort {
        case .priceAscending, .priceDescending: order = "price"
        case .title: order = "title"
        case .relevance where !query.terms.isEmpty: return nil
        case .distance where filter.near != nil: return nil
        default: order = "newest"
        }
        return filter.categories.count == 1 ? "listing_category_\(order)" : "listing_\(order)"
    }

    /// The most vocabulary entries a prefix's estimate reads; a prefix of more words counts as common.
    static let prefixEstimateWords = 64

    /// Chooses between walking the order's index, collecting the keyword matches, reading the circle's cells
    /// and reading a narrow price range (``priceRange(_:_:)``), by their estimated costs, in index steps: a walk visits about
    /// `walked = (page + 1) · listings / (matches · filter selectivity · circle share)` index entries, and each
    /// entry that passes the index's filters costs a read at a random place, about 8 steps (measured): a probe
    /// of its words (`listingWord`) with keywords, and its row too with a circle; collecting reads each
    /// match's row; the cells cost a seek per (cell, status) and a row per listing
    /// read (newest first, at most `page + 1` per statement of ``SQLiteListingsStore/armsPerStatement``).
    /// Matches are estimated from `listingWordCount` (the rarest term, times the other terms' frequencies, as
    /// if independent); the circle's listings from `occupied`, the occupied cells of its box with their
    /// counts (``SQLiteListingsStore/occupiedCells(_:_:)``; `nil`: no circle, or a box that wraps).
    static func plan(
        _ query: CompiledListingQuery,
        size: Int,
        occupied: SQLiteListingsStore.CircleCells?,
        _ db: Database
    ) throws -> Plan {
        guard let index = walkIndex(query) else {
            if let word = try impactWord(query, size: size, db) { return .impact(word: word) }
            return ranksWithoutRows(query) ? .scores : .planner
        }
        let near = query.query.filter.near
        guard !query.terms.isEmpty || near != nil else { return .walk(index: index) }
        let rowCost = 8.0
        let total = try listingCount(db)
        var cells: (listings: Double, arms: Double)?
        if near != nil {
            guard let occupied else { return .planner }
            cells = (min(total, Double(occupied.listings)), Double(occupied.cellCount * query.statuses.count))
        }
        let matches = query.terms.isEmpty ? total : try estimatedMatches(query, total: total, db)
        let circleShare = cells.map { max($0.listings, 1) / total } ?? 1
        let selectivity = ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: true)
        let passing = Double(size + 1) * total / max(matches * circleShare, 1)
        let walked = min(total, passing / max(selectivity, 1 / total))
        let randomReads = Double((query.terms.isEmpty ? 0 : 1) + (cells == nil ? 0 : 1))
        var best = (cost: walked + min(total, passing) * rowCost * randomReads, plan: Plan.walk(index: index))
        if !query.terms.isEmpty, matches * rowCost < best.cost { best = (matches * rowCost, .collect) }
        if let cells {
            let statements = (cells.arms / Double(SQLiteListingsStore.armsPerStatement)).rounded(.up)
            // Newest first, each statement reads until `size + 1` of its listings pass the filters and words.
            let density = max(matches / total * selectivity, 1 / total)
            let read =
                query.query.sort == .newest
                ? min(cells.listings, statements * Double(size + 1) / density) : cells.listings
            let cost = (read + cells.arms) * rowCost
            if cost < best.cost { best = (cost, .cells) }
        }
        if let range = try priceRange(query, db), range.listings * rowCost < best.cost {
            best = (range.listings * rowCost, .walk(index: range.index))
        }
        return best.plan
    }

    /// The word whose `listingWordImpact` rows a relevance search can walk (``Plan/impact(word:)``): one term
    /// (the prefix) that begins exactly one stored word, one status, no seller, tags or circle, and a walk
    /// estimated to read fewer rows, about `(size + 1) / filter selectivity`, than scoring every listing that
    /// holds the word. `nil` otherwise: several words add their points up per listing, which no single walk
    /// orders, and no word at all leaves nothing to walk. Reads at most two `listingWordCount` entries.
    static func impactWord(_ query: CompiledListingQuery, size: Int, _ db: Database) throws -> String? {
        let filter = query.query.filter
        guard query.query.sort == .relevance, query.terms.count == 1, let term = query.terms.first,
            query.statuses.count == 1, filter.sellerID == nil, query.tags.isEmpty, filter.near == nil
        else { return nil }
        let upper = prefixUpperBound(term) ?? term + "\u{10FFFF}"
        let words = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT word, listings FROM listingWordCount WHERE word >= ? AND word < ? LIMIT 2"),
            arguments: [term, upper]
        )
        guard words.count == 1, let word: String = words[0]["word"], word.hasPrefix(term) else { return nil }
        let matches: Double = words[0]["listings"]
        let selectivity = ListingSearchEngine.filterSelectivity(query, categoryLeadsIndex: false)
        let walked = Double(size + 1) / max(selectivity, 1 / max(matches, 1))
        return walked < matches ? word : nil
    }

    /// Whether a search orders by relevance with keywords and no filter but the statuses, so that its page is
    /// decided from `listingWordImpact` alone (``Plan/scores``).
    static func ranksWithoutRows(_ query: CompiledListingQuery) -> Bool {
        let filter = query.query.filter
        return query.query.sort == .relevance && !query.terms.isEmpty && filter.categories.isEmpty
            && filter.conditions.isEmpty && filter.minPriceCents == nil && filter.maxPriceCents == nil
            && query.tags.isEmpty && filter.madeOnCampus == nil && filter.sellerID == nil
            && filter.postedSince == nil && filter.near == nil
    }

    /// Listings counted at most in a price range's index entries (``priceRange(_:_:)``).
    static let priceRangeBound = 1_024

    /// The price index (``Plan/walk(index:)``) a search with a price range can read that range on, with how
    /// many listings of its status the range holds (the category's index and listings for a single category):
    /// when it holds fewer than ``priceRangeBound``, reading the range and sorting it costs about a row per
    /// listing, whatever the order. `nil` without a price range, with several statuses, or for a larger
    /// range. Reads at most ``priceRangeBound`` entries of a covering index.
    static func priceRange(_ query: CompiledListingQuery, _ db: Database) throws -> (index: String, listings: Double)? {
        let filter = query.query.filter
        guard filter.minPriceCents != nil || filter.maxPriceCents != nil, let status = query.statuses.first,
            query.statuses.count == 1
        else { return nil }
        let single = filter.categories.count == 1 ? filter.categories.first : nil
        let index = single == nil ? "listing_price" : "listing_category_price"
        let category = single.map { _ in " AND category = ?" } ?? ""
        var arguments: StatementArguments = [status.rawValue]
        if let single { arguments += [single.rawValue] }
        arguments += [filter.minPriceCents ?? Int64.min, filter.maxPriceCents ?? Int64.max]
        let count =
            try Int.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT COUNT(*) FROM (SELECT 1 FROM listing INDEXED BY \(index) WHERE status = ?\(category) \
                        AND priceCents BETWEEN ? AND ? LIMIT \(priceRangeBound))
                        """
                ),
                arguments: arguments
            ) ?? priceRangeBound
        return count < priceRangeBound ? (index, Double(count)) : nil
    }

    /// About how many listings there are: the largest row id (deleted rows included), read in one step.
    static func listingCount(_ db: Database) throws -> Double {
        Double(max(1, try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(docID) FROM listing")) ?? 1))
    }

    /// About how many listings match the keywords, from `listingWordCount`: the rarest term, times the other
    /// terms' frequencies, as if independent; a repeated term counts once, and a prefix of more than
    /// ``prefixEstimateWords`` words counts as matching every listing. Reads one entry per term and at most ``prefixEstimateWords`` + 1 for the last.
    static func estimatedMatches(_ query: CompiledListingQuery, total: Double, _ db: Database) throws -> Double {
        var matches = total
        for (position, term) in query.terms.enumerated() {
            // A term repeated, or a last term (a prefix) that an earlier term begins with, keeps no fewer
            // listings than that earlier term: it adds no factor (independence would square its share).
            let earlier = query.terms[..<position]
            if position == query.terms.count - 1
                ? earlier.contains(where: { $0.hasPrefix(term) }) : earlier.contains(term)
            {
                continue
            }
            let count: Int
            if position == query.terms.count - 1 {
                let upper = prefixUpperBound(term) ?? term + "\u{10FFFF}"
                let rows = try Int.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT listings FROM listingWordCount WHERE word >= ? AND word < ? LIMIT ?"
                    ),
                    arguments: [term, upper, prefixEstimateWords + 1]
                )
                count = rows.count > prefixEstimateWords ? Int(total) : rows.reduce(0, +)
            } else {
                count =
                    try Int.fetchOne(
                        db.cachedStatement(sql: "SELECT listings FROM listingWordCount WHERE word = ?"),
                        arguments: [term]
                    )
                    ?? 0
            }
            matches *= min(Double(count), total) / total
        }
        return matches
    }

    /// The statement for `query`, returning at most `limit` rows in the query's order after its cursor;
    /// with `seller`, only that seller's listings.
    static func statement(
        _ query: CompiledListingQuery,
        limit: Int,
        plan: Plan = .planner,
        seller: String? = nil
    ) -> Statement {
        if plan == .scores { return scoresStatement(query, limit: limit) }
        let sort = query.query.sort
        let keyed = plan == .collect && query.query.filter.near == nil
        var conditions = filterConditions(query)
        if let seller { conditions.append("listing.sellerID = ?", [seller]) }
        var columns = "listing.*"
        var from = "listing"
        var columnArguments: StatementArguments = []
        var fromArguments: StatementArguments = []

        if plan == .planner, seller ?? query.query.filter.sellerID != nil {
            // A seller's listings are few against the table: read them on the seller's index (without
            // statistics SQLite's planner would rather walk the status index, every listing of the status).
            from += " INDEXED BY listing_sellerID_createdAt_id"
        }
        if case .walk(let index) = plan {
            from += " INDEXED BY \(index)"
            appendKeywordProbes(&conditions, query)
        } else if case .impact(let word) = plan {
            // The word's rows drive (CROSS JOIN keeps them the outer loop); each listing is read by its id.
            from = "listingWordImpact AS impact CROSS JOIN listing"
            conditions.append(
                "impact.word = ? AND impact.status = ? AND listing.docID = impact.docID",
                [word, query.statuses.first?.rawValue]
            )
        } else if !query.terms.isEmpty {
            // Collected without a circle, the matches are filtered, ordered and cut to the page on their keys
            // (``keysIndex``); with one, each match's row is read by its id (the circle's box and distance
            // need its point and seller).
            if plan == .collect { from += keyed ? " INDEXED BY \(keysIndex)" : " NOT INDEXED" }
            conditions.append(
                "listing.docID IN (SELECT rowid FROM listingSearch WHERE listingSearch MATCH ?)",
                [SearchText.ftsExpression(query.terms)]
            )
        }
        if let near = query.query.filter.near {
            let box = ListingSearchEngine.boundingBox(near)
            conditions.append(
                "listing.searchLatitude BETWEEN ? AND ?",
                [box.latitude.lowerBound, box.latitude.upperBound]
            )
            if let longitude = box.longitude {
                conditions.append(
                    "listing.searchLongitude BETWEEN ? AND ?",
                    [longitude.lowerBound, longitude.upperBound]
                )
            }
            let viewer = query.query.viewerID
            conditions.append(
                distance(shown: false) + " <= ?",
                [near.center.latitude, near.center.longitude, viewer, near.radiusKm]
            )
            if sort == .distance {
                columns += ", " + distance(shown: true)
                columns += " AS \(distanceColumn)"
                columnArguments += [near.center.latitude, near.center.longitude, viewer]
            }
        }
        if case .impact = plan {
            columns += ", impact.points AS \(scoreColumn)"
        } else if sort == .relevance, !query.terms.isEmpty {
            let score = scoreSQL(query.terms, statuses: query.statuses.map(\.rawValue).sorted())
            from += " JOIN (\(score.sql)) AS score ON score.doc = listing.docID"
            fromArguments += score.arguments
            columns += ", score.total AS \(scoreColumn)"
        }
        if let cursor = query.cursor {
            if case .impact = plan {
                // Seeks the word's rows to the cursor (a row value is a range on the key).
                conditions.append(
                    "(impact.points, impact.createdAt, impact.id) < (?, ?, ?)",
                    [cursor.r ?? 0, cursor.c, cursor.i]
                )
            } else {
                appendKeyset(&conditions, cursor: cursor, query: query)
            }
        }

        let order: String
        switch sort {
        case .priceAscending: order = "listing.priceCents ASC, listing.createdAt DESC, listing.id DESC"
        case .priceDescending: order = "listing.priceCents DESC, listing.createdAt DESC, listing.id DESC"
        case .title: order = "listing.titleKey ASC, listing.createdAt DESC, listing.id DESC"
        case .relevance where !query.terms.isEmpty:
            if case .impact = plan {
                order = "impact.points DESC, impact.createdAt DESC, impact.id DESC"
            } else {
                order = "\(scoreColumn) DESC, listing.createdAt DESC, listing.id DESC"
            }
        case .distance where query.query.filter.near != nil:
            order = "\(distanceColumn) ASC, listing.createdAt DESC, listing.id DESC"
        default: order = "listing.createdAt DESC, listing.id DESC"
        }
        var arguments = columnArguments
        arguments += fromArguments
        arguments += conditions.arguments
        arguments += [limit]
        if keyed {
            // The page's keys from the narrow index, then only the page's rows, in the same order.
            return Statement(
                sql: """
                    SELECT listing.* FROM (SELECT \(keyColumns) FROM \(from) WHERE \(conditions.sql) \
                    ORDER BY \(order) LIMIT ?) AS top CROSS JOIN listing ON listing.docID = top.docID \
                    ORDER BY \(order.replacingOccurrences(of: "listing.", with: "top."))
                    """,
                arguments: arguments
            )
        }
        return Statement(
            sql: "SELECT \(columns) FROM \(from) WHERE \(conditions.sql) ORDER BY \(order) LIMIT ?",
            arguments: arguments
        )
    }

    /// The index a keyed collect (``Plan/collect`` without a circle) reads each match from: its row id, then
    /// every listing column the filters (but a seller's and a circle's) and the orders read ("listings-v8").
    static let keysIndex = "listing_docID_keys"

    /// The columns a keyed collect's inner select returns: the row id and the orders' keys.
    static let keyColumns = ["docID", "createdAt", "id", "priceCents", "titleKey"]
        .map { "listing.\($0) AS \($0)" }.joined(separator: ", ")

    /// The statement of ``Plan/scores``: the page's listings by summed score, then newest first, after the
    /// cursor (a row value on the grouped scores), and only then their rows.
    static func scoresStatement(_ query: CompiledListingQuery, limit: Int) -> Statement {
        let score = scoreSQL(query.terms, statuses: query.statuses.map(\.rawValue).sorted())
        var arguments = score.arguments
        var having = ""
        if let cursor = query.cursor {
            having = " HAVING (total, createdAt, id) < (?, ?, ?)"
            arguments += [cursor.r ?? 0, cursor.c, cursor.i]
        }
        arguments += [limit]
        return Statement(
            sql: """
                SELECT listing.*, top.total AS \(scoreColumn) FROM (\(score.sql)\(having) \
                ORDER BY total DESC, createdAt DESC, id DESC LIMIT ?) AS top \
                CROSS JOIN listing ON listing.docID = top.doc \
                ORDER BY top.total DESC, top.createdAt DESC, top.id DESC
                """,
            arguments: arguments
        )
    }

    /// Adds one `EXISTS` probe of `listingWord` (listing, token) per keyword term, the last as a prefix
    /// range: each costs one index seek per listing checked.
    static func appendKeywordProbes(_ conditions: inout Conditions, _ query: CompiledListingQuery) {
        for (position, term) in query.terms.enumerated() {
            let probe = "EXISTS (SELECT 1 FROM listingWord WHERE listingWord.docID = listing.docID AND "
            if position < query.terms.count - 1 {
                conditions.append(probe + "listingWord.word = ?)", [term])
            } else if let upper = prefixUpperBound(term) {
                conditions.append(probe + "listingWord.word >= ? AND listingWord.word < ?)", [term, upper])
            } else {
                conditions.append(
                    probe + "listingWord.word >= ? AND substr(listingWord.word, 1, ?) = ?)",
                    [term, term.unicodeScalars.count, term]
                )
            }
        }
    }

    /// The distance from the circle's centre (the arguments: its latitude and longitude, then the viewer) to
    /// a listing's search point — its point, or its zip code's centroid ("listings-v5") — as
    /// ``PrivateDistanceFunction`` measures it.
    static func distance(shown: Bool) -> String {
        PrivateDistanceFunction.call(
            table: "listing",
            latitude: "searchLatitude",
            longitude: "searchLongitude",
            owner: "sellerID",
            shown: shown
        )
    }

    /// The relevance score of every listing of `statuses` that matches the query, from the words' points in
    /// `listingWordImpact`: one `SELECT` per part of ``TextSearch/queryParts(_:)`` (a distinct term, the last
    /// as a prefix range), its points times its repeats, so a token matching two terms counts twice, as in
    /// ``SearchText/score``. With several terms, each part's rows are kept to the listings FTS5 matches for
    /// all of them (found once), so only those are grouped and summed. Reads each part's rows (of the
    /// statuses for a whole word, of every status for a prefix's range): about the listings holding its
    /// words. Each listing's created time and id come with its score.
    static func scoreSQL(_ terms: [String], statuses: [String]) -> Statement {
        // One part per distinct (term, whole or prefix), its points times its repeats: a query repeating a
        // common word reads its rows once, not once per repeat.
        let parts = TextSearch.queryParts(terms)
        var arguments: StatementArguments = []
        var with = ""
        var matching = ""
        if terms.count > 1 {
            // FTS5's matches, found once; a part reads no row when there are none.
            with = "WITH matched(doc) AS MATERIALIZED (SELECT rowid FROM listingSearch WHERE listingSearch MATCH ?) "
            matching = " AND EXISTS (SELECT 1 FROM matched) AND docID IN matched"
            arguments += [SearchText.ftsExpression(terms)]
        }
        let statusList = statuses.map { _ in "?" }.joined(separator: ", ")
        var selects: [String] = []
        for part in parts {
            let select =
                "SELECT docID AS doc, points * ? AS points, createdAt, id FROM listingWordImpact "
                + "WHERE status IN (\(statusList)) AND "
            arguments += [part.times]
            arguments += StatementArguments(statuses)
            if !part.prefix {
                selects.append(select + "word = ?" + matching)
                arguments += [part.term]
            } else if let upper = prefixUpperBound(part.term) {
                selects.append(select + "word >= ? AND word < ?" + matching)
                arguments += [part.term, upper]
            } else {
                selects.append(select + "word >= ? AND substr(word, 1, ?) = ?" + matching)
                arguments += [part.term, part.term.unicodeScalars.count, part.term]
            }
        }
        return Statement(
            sql: """
                \(with)SELECT doc, SUM(points) AS total, createdAt, id FROM (\(selects.joined(separator: " UNION ALL "))) \
                GROUP BY doc
                """,
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

    /// The engine's filters (everything but keywords and the circle), in SQL. `column` writes a column of
    /// the listing (a unary `+` keeps SQLite from reading by its index).
    static func filterConditions(
        _ compiled: CompiledListingQuery,
        column: (String) -> String = { "listing.\($0)" }
    ) -> Conditions {
        let filter = compiled.query.filter
        var conditions = Conditions()
        func list(_ values: [String]) -> String { values.map { _ in "?" }.joined(separator: ", ") }
        let statuses = compiled.statuses.map(\.rawValue).sorted()
        conditions.append("\(column("status")) IN (\(list(statuses)))", statuses)
        if !filter.categories.isEmpty {
            let values = filter.categories.map(\.rawValue).sorted()
            conditions.append("\(column("category")) IN (\(list(values)))", values)
        }
        if !filter.conditions.isEmpty {
            let values = filter.conditions.map(\.rawValue).sorted()
            conditions.append("\(column("condition")) IN (\(list(values)))", values)
        }
        if let min = filter.minPriceCents { conditions.append("\(column("priceCents")) >= ?", [min]) }
        if let max = filter.maxPriceCents { conditions.append("\(column("priceCents")) <= ?", [max]) }
        if let made = filter.madeOnCampus { conditions.append("\(column("madeOnCampus")) = ?", [made]) }
        if let seller = filter.sellerID {
            if compiled.query.viewerID == seller {
                conditions.append("\(column("sellerID")) = ?", [seller])
            } else {
                conditions.append("\(column("sellerID")) = ? AND \(column("anonymous")) = 0", [seller])
            }
        }
        if let since = filter.postedSince {
            conditions.append("\(column("createdAt")) >= ?", [since.millisecondsSince1970])
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
                "(SELECT COUNT(*) FROM listingTag t WHERE t.listingID = \(column("id")) AND t.tag IN (\(list(tags)))) = ?",
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
            let shown = distance(shown: true)
            let point: [(any DatabaseValueConvertible)?] = [
                near.center.latitude, near.center.longitude, query.query.viewerID,
            ]
            conditions.append(
                "\(shown) > ? OR (\(shown) = ? AND \(tail))",
                point + [d] + point + [d] + tailValues
            )
        default:
            conditions.append("listing.createdAt <= ? AND \(tail)", [cursor.c] + tailValues)
        }
    }
}
