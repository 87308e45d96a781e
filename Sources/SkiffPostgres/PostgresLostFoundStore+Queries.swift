import Foundation
import PostgresNIO
import SkiffDomain
import SkiffLostFound

/// The SQL of ``PostgresLostFoundStore``: each statement decides its rows, order and limit inside
/// PostgreSQL, on the indexes of `PostgresSchema.lostFoundMigrations`, so a call costs what its page (or
/// its bounded candidate set) and the index entries it touches cost, not the table.
extension PostgresLostFoundStore {
    /// The items that can match `item` — the same bounded set the SQLite and in-memory stores read: open
    /// items of the other kind in the same category, by someone else, within the time window, sharing a
    /// keyword (the GIN index) and, when `item` has a point, without a point or within the distance limit's
    /// box; at most `maximumCandidates` of them, the latest to occur first (ties: the greater id).
    static func candidatesQuery(for item: LostFoundItem, matcher: LostFoundMatcher) -> PostgresQuery? {
        let keywords = LostFoundMatcher.keywords(item.fields).sorted()
        guard !keywords.isEmpty else { return nil }
        let opposite = item.kind.opposite
        let occurred = item.occurredAt.millisecondsSince1970
        let window = matcher.candidateWindowMilliseconds
        var query = PostgresQueryBuilder("SELECT \(PostgresLostFoundItemRows.columns("i")) FROM lost_found_item i")
        query.append(" WHERE i.status = \(query.bind(opposite.openStatus.rawValue))")
        query.append(" AND i.kind = \(query.bind(opposite.rawValue))")
        query.append(" AND i.category = \(query.bind(item.category.rawValue))")
        query.append(" AND i.reporter_id <> \(query.bind(item.reporterID))")
        query.append(" AND i.occurred_at BETWEEN \(query.bind(occurred - window)) AND \(query.bind(occurred + window))")
        query.append(" AND i.search_keys && \(query.bind(keywords.map(PostgresLostFoundSearchKeys.exactKey)))")
        if keywords.contains(where: PostgresLostFoundSearchKeys.isLong) {
            query.append(" AND i.search_tokens && \(query.bind(keywords))")
        }
        if let box = matcher.candidateBox(item) {
            var near =
                "i.latitude BETWEEN \(query.bind(box.latitude.lowerBound)) AND \(query.bind(box.latitude.upperBound))"
            if let longitude = box.longitude {
                near += " AND i.longitude BETWEEN \(query.bind(longitude.lowerBound))"
                near += " AND \(query.bind(longitude.upperBound))"
            }
            query.append(" AND (i.latitude IS NULL OR (\(near)))")
        }
        query.append(" ORDER BY i.occurred_at DESC, i.id DESC LIMIT \(query.bind(Int64(matcher.maximumCandidates)))")
        return query.query
    }

    /// The one statement of a search: the filters, the keywords (GIN), the circle (a box on the GiST index,
    /// then `lost_found_private_distance_km`), the order, the keyset cursor and `LIMIT limit`.
    ///
    /// With `reporter`, only that reporter's items (the searcher's own, read apart from a walk of the
    /// circle's cells). `boxIndexed: false` leaves out the circle's box (the exact distance condition
    /// stays), so the planner reads by another index (``PostgresGridCells/Plan``).
    ///
    /// The rows hold ``PostgresLostFoundItemRows/columns(_:)``, then the distance shown (NULL without a
    /// circle).
    static func searchQuery(
        _ compiled: CompiledLostFoundQuery,
        limit: Int,
        reporter: String? = nil,
        boxIndexed: Bool = true
    ) -> PostgresQuery {
        let query = compiled.query
        var sql = PostgresQueryBuilder("")
        var conditions = filterConditions(compiled, &sql)
        if let reporter { conditions.append("i.reporter_id = \(sql.bind(reporter))") }
        var distance = "NULL::float8"
        let byDistance = query.sort == .distance && query.filter.near != nil
        if let near = query.filter.near {
            let box = LostFoundSearchEngine.boundingBox(near)
            let longitude = box.longitude ?? -180...180
            let (south, north) = (sql.bind(box.latitude.lowerBound), sql.bind(box.latitude.upperBound))
            let (west, east) = (sql.bind(longitude.lowerBound), sql.bind(longitude.upperBound))
            if boxIndexed {
                conditions.append(
                    "point(i.longitude, i.latitude) <@ box(point(\(west), \(south)), point(\(east), \(north)))"
                )
            }
            conditions.append("i.latitude BETWEEN \(south) AND \(north)")
            conditions.append("i.longitude BETWEEN \(west) AND \(east)")
            let center = "\(sql.bind(near.center.latitude)), \(sql.bind(near.center.longitude))"
            let viewer = query.viewerID.map { sql.bind($0) + "::text" } ?? "NULL::text"
            func call(shown: Bool) -> String {
                "lost_found_private_distance_km(i.latitude, i.longitude, i.reporter_id, \(center), \(viewer), \(shown))"
            }
            conditions.append("\(call(shown: false)) <= \(sql.bind(near.radiusKm))")
            distance = call(shown: true)
        }
        if let cursor = compiled.cursor {
            let tail = "(i.created_at, i.id) < (\(sql.bind(cursor.c)), \(sql.bind(cursor.i)))"
            if byDistance {
                let d = sql.bind(cursor.d ?? 0)
                conditions.append("(\(distance) > \(d) OR (\(distance) = \(d) AND \(tail)))")
            } else {
                conditions.append(tail)
            }
        }
        let order = byDistance ? "distance_shown, i.created_at DESC, i.id DESC" : "i.created_at DESC, i.id DESC"
        sql.append(
            """
            SELECT \(PostgresLostFoundItemRows.columns("i")), \(distance) AS distance_shown
            FROM lost_found_item i
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY \(order)
            LIMIT \(sql.bind(Int64(limit)))
            """
        )
        return sql.query
    }

    /// The conditions of a search's statuses, categories, building and keywords (the GIN index of
    /// `search_keys`, with the long tokens checked on `search_tokens`), on the items' alias `i`.
    static func filterConditions(_ compiled: CompiledLostFoundQuery, _ sql: inout PostgresQueryBuilder) -> [String] {
        let query = compiled.query
        var conditions = ["i.status = ANY(\(sql.bind(compiled.statuses.map(\.rawValue).sorted())))"]
        if !query.filter.categories.isEmpty {
            conditions.append("i.category = ANY(\(sql.bind(query.filter.categories.map(\.rawValue).sorted())))")
        }
        if let key = compiled.buildingKey {
            conditions.append("i.building_key = \(sql.bind(key))")
        }
        if let last = compiled.terms.last {
            let exact = Array(compiled.terms.dropLast())
            let keys = exact.map(PostgresLostFoundSearchKeys.exactKey) + [PostgresLostFoundSearchKeys.prefixKey(last)]
            conditions.append("i.search_keys @> \(sql.bind(keys))")
            let long = exact.filter(PostgresLostFoundSearchKeys.isLong)
            if !long.isEmpty {
                conditions.append("i.search_tokens @> \(sql.bind(long))")
            }
            if PostgresLostFoundSearchKeys.isLongPrefix(last) {
                conditions.append(
                    "EXISTS (SELECT FROM unnest(i.search_tokens) AS t WHERE starts_with(t, \(sql.bind(last))))"
                )
            }
        }
        return conditions
    }

    /// Up to `limit` of a reporter's items in `statuses` (all when empty) after the cursor, newest first,
    /// each with its number of matches: a walk of `lost_found_item_reporter` from the cursor, and each
    /// row's matches counted on the match indexes.
    static func ownItemsQuery(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        after cursor: LostFoundSearchEngine.OwnItemsCursor?,
        limit: Int
    ) -> PostgresQuery {
        var query = PostgresQueryBuilder(
            """
            SELECT \(PostgresLostFoundItemRows.columns("i")), CASE i.kind
                WHEN 'found' THEN (SELECT count(*) FROM lost_found_match m WHERE m.found_item_id = i.id)
                ELSE (SELECT count(*) FROM lost_found_match m WHERE m.lost_item_id = i.id) END
            FROM lost_found_item i
            """
        )
        query.append(" WHERE i.reporter_id = \(query.bind(reporterID))")
        if !statuses.isEmpty {
            query.append(" AND i.status = ANY(\(query.bind(statuses.map(\.rawValue).sorted())))")
        }
        if let cursor {
            query.append(" AND (i.created_at, i.id) < (\(query.bind(cursor.t)), \(query.bind(cursor.i)))")
        }
        query.append(" ORDER BY i.created_at DESC, i.id DESC LIMIT \(query.bind(Int64(limit)))")
        return query.query
    }

    /// Up to `limit` matches of `item` after the cursor, best first, then most recent, then candidate id
    /// descending — a walk of the item's match index from the cursor — each with its candidate as it is
    /// now. The rows hold the candidate's ``PostgresLostFoundItemRows/columns(_:)``, then the score, the
    /// distance and the time of the match.
    static func matchesQuery(
        of item: LostFoundItem,
        after cursor: LostFoundSearchEngine.MatchCursor?,
        limit: Int
    ) -> PostgresQuery {
        let (own, other) = item.kind == .found ? ("found_item_id", "lost_item_id") : ("lost_item_id", "found_item_id")
        var query = PostgresQueryBuilder(
            """
            SELECT \(PostgresLostFoundItemRows.columns("i")), m.score, m.distance_km, m.matched_at
            FROM lost_found_match m JOIN lost_found_item i ON i.id = m.\(other)
            """
        )
        query.append(" WHERE m.\(own) = \(query.bind(item.id))")
        if let cursor {
            let (score, time, id) = (query.bind(cursor.r), query.bind(cursor.t), query.bind(cursor.i))
            query.append(" AND (m.score, m.matched_at, m.\(other)) < (\(score), \(time), \(id))")
        }
        query.append(" ORDER BY m.score DESC, m.matched_at DESC, m.\(other) DESC LIMIT \(query.bind(Int64(limit)))")
        return query.query
    }
}
