import Foundation
import GRDB
import SkiffDomain
import SkiffListings

extension SQLiteListingsStore {
    /// Searches in two ways, both ending in `ListingSearchEngine`, so results equal the in-memory store's:
    ///
    /// - **Browsing** (no keywords, no circle, sort newest/price/title): the filters, the keyset cursor, the
    ///   order and `LIMIT page + 1` all run in SQL on indexed columns, so deep paging stays cheap and memory
    ///   flat. The SQL conditions are the engine's filters written in SQL.
    /// - **Keywords or a circle, or sort relevance/distance**: SQL narrows the candidates (filters, the FTS5
    ///   index with prefix matching of the last word, a latitude/longitude bounding box), then every
    ///   candidate is checked, scored and measured (haversine) in Swift, sorted and paged by keyset there.
    ///   FTS5 indexes the shared tokenizer's output, so its candidates are a superset of the engine's
    ///   matches and the Swift check makes them exact. Relevance is the engine's integer score rather than
    ///   bm25, so that both backends order identically.
    public func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit> {
        let compiled = try CompiledListingQuery(query, page: page)
        let size = page.size
        return try await pool.domainRead { db in
            var where_ = Self.filterSQL(compiled)
            let filter = query.filter
            let browsing =
                compiled.terms.isEmpty && filter.near == nil && query.sort != .relevance
                && query.sort != .distance
            if browsing {
                if let cursor = compiled.cursor { Self.appendKeyset(&where_, cursor: cursor, sort: query.sort) }
                let order: String
                switch query.sort {
                case .priceAscending: order = "priceCents ASC, createdAt DESC, id DESC"
                case .priceDescending: order = "priceCents DESC, createdAt DESC, id DESC"
                case .title: order = "titleKey ASC, createdAt DESC, id DESC"
                default: order = "createdAt DESC, id DESC"
                }
                where_.arguments += [size + 1]
                let listings = try ListingRow.fetchAll(
                    db,
                    sql: "SELECT * FROM listing WHERE \(where_.sql) ORDER BY \(order) LIMIT ?",
                    arguments: where_.arguments
                )
                let hits = listings.compactMap { ListingSearchEngine.hit($0, compiled) }
                return ListingSearchEngine.page(ordered: hits, compiled, size: size)
            }
            if !compiled.terms.isEmpty {
                where_.append(
                    "docID IN (SELECT rowid FROM listingSearch WHERE listingSearch MATCH ?)",
                    [SearchText.ftsExpression(compiled.terms)]
                )
            }
            if let near = filter.near {
                let box = ListingSearchEngine.boundingBox(near)
                where_.append(
                    "latitude IS NOT NULL AND latitude BETWEEN ? AND ?",
                    [box.latitude.lowerBound, box.latitude.upperBound]
                )
                if let longitude = box.longitude {
                    where_.append("longitude BETWEEN ? AND ?", [longitude.lowerBound, longitude.upperBound])
                }
            }
            let candidates = try ListingRow.fetchAll(
                db,
                sql: "SELECT * FROM listing WHERE \(where_.sql)",
                arguments: where_.arguments
            )
            let hits = candidates.compactMap { ListingSearchEngine.hit($0, compiled) }
            return ListingSearchEngine.page(hits, compiled, size: size)
        }
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
    static func filterSQL(_ compiled: CompiledListingQuery) -> Conditions {
        let filter = compiled.query.filter
        var conditions = Conditions()
        func list(_ values: [String]) -> String { values.map { _ in "?" }.joined(separator: ", ") }
        let statuses = compiled.statuses.map(\.rawValue).sorted()
        conditions.append("status IN (\(list(statuses)))", statuses)
        if !filter.categories.isEmpty {
            let values = filter.categories.map(\.rawValue).sorted()
            conditions.append("category IN (\(list(values)))", values)
        }
        if !filter.conditions.isEmpty {
            let values = filter.conditions.map(\.rawValue).sorted()
            conditions.append("condition IN (\(list(values)))", values)
        }
        if let min = filter.minPriceCents { conditions.append("priceCents >= ?", [min]) }
        if let max = filter.maxPriceCents { conditions.append("priceCents <= ?", [max]) }
        if let made = filter.madeOnCampus { conditions.append("madeOnCampus = ?", [made]) }
        if let seller = filter.sellerID {
            if compiled.query.viewerID == seller {
                conditions.append("sellerID = ?", [seller])
            } else {
                conditions.append("sellerID = ? AND anonymous = 0", [seller])
            }
        }
        if let since = filter.postedSince { conditions.append("createdAt >= ?", [since.millisecondsSince1970]) }
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

    /// Adds "strictly after the cursor" for the browsing sorts.
    static func appendKeyset(_ conditions: inout Conditions, cursor: ListingSearchEngine.Cursor, sort: ListingSort) {
        let tail = "(createdAt < ? OR (createdAt = ? AND id < ?))"
        let tailValues: [(any DatabaseValueConvertible)?] = [cursor.c, cursor.c, cursor.i]
        switch sort {
        case .priceAscending:
            let p = cursor.p ?? 0
            conditions.append("priceCents > ? OR (priceCents = ? AND \(tail))", [p, p] + tailValues)
        case .priceDescending:
            let p = cursor.p ?? 0
            conditions.append("priceCents < ? OR (priceCents = ? AND \(tail))", [p, p] + tailValues)
        case .title:
            let t = cursor.t ?? ""
            conditions.append("titleKey > ? OR (titleKey = ? AND \(tail))", [t, t] + tailValues)
        default:
            conditions.append(tail, tailValues)
        }
    }
}
