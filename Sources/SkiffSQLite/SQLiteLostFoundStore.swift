import Foundation
import GRDB
import SkiffDomain
import SkiffLostFound

/// The SQLite ``SkiffLostFound/LostFoundStore``.
///
/// Each use case is one `pool.write { }` transaction or one `pool.read { }` snapshot. Existence, ownership
/// and state are checked inside the transaction in the same order as
/// ``SkiffLostFound/InMemoryLostFoundStore``, so both throw the same errors. Reporting an item inserts it,
/// fetches the match candidates (SQL narrows by kind, status, category, reporter and time window) and
/// records the matches ``SkiffLostFound/LostFoundMatcher`` accepts, all in one transaction.
///
/// Search works like Listings': SQL narrows the candidates (status, category, building, the FTS5 index with
/// prefix matching of the last word, a latitude/longitude bounding box), then `LostFoundSearchEngine` checks,
/// measures, orders and pages them, exactly as the in-memory store does. Without keywords or a circle, the
/// keyset cursor, the order and `LIMIT page + 1` run in SQL.
///
/// Get one from ``SQLiteDatabase/lostFoundStore()``.
public struct SQLiteLostFoundStore: LostFoundStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    public func reportItem(_ item: LostFoundItem, matcher: LostFoundMatcher) async throws -> LostFoundReport {
        let stored = item.rounded
        return try await pool.domainWrite { db in
            guard try LostFoundItemRow.fetchOne(db, id: stored.id) == nil else {
                throw LostFoundStoreError.itemIDTaken
            }
            let window = Int64(matcher.maximumTimeGapDays * 86_400_000) + 1
            let occurred = stored.occurredAt.millisecondsSince1970
            let opposite = stored.kind.opposite
            let candidates = try LostFoundItemRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM lostFoundItem
                    WHERE status = ? AND kind = ? AND category = ? AND reporterID <> ?
                    AND occurredAt BETWEEN ? AND ?
                    """,
                arguments: [
                    opposite.openStatus.rawValue, opposite.rawValue, stored.category.rawValue, stored.reporterID,
                    occurred - window, occurred + window,
                ]
            )
            let matches = matcher.matches(for: stored, among: candidates, at: stored.createdAt)
            try LostFoundItemRow.insert(db, stored)
            for match in matches { try LostFoundMatchRow.insert(db, match) }
            return LostFoundReport(item: stored, matches: matches)
        }
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
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            guard var item = try LostFoundItemRow.fetchOne(db, id: id) else { throw LostFoundStoreError.itemNotFound }
            guard item.reporterID == reporterID else { throw LostFoundStoreError.notReporter }
            guard item.isOpen else { throw LostFoundStoreError.returned }
            let fields = changes.applied(to: item.fields)
            guard fields != item.fields else { return item }
            item.fields = fields
            item.updatedAt = Date(millisecondsSince1970: now)
            try LostFoundItemRow.update(db, item)
            return item
        }
    }

    public func markReturned(id: String, reporterID: String, now: Date) async throws -> LostFoundItem {
        let now = Date(millisecondsSince1970: now.millisecondsSince1970)
        return try await pool.domainWrite { db in
            guard var item = try LostFoundItemRow.fetchOne(db, id: id) else { throw LostFoundStoreError.itemNotFound }
            guard item.reporterID == reporterID else { throw LostFoundStoreError.notReporter }
            guard item.isOpen else { return item }
            item.status = .returned
            item.returnedAt = now
            item.updatedAt = now
            try LostFoundItemRow.update(db, item)
            return item
        }
    }

    public func search(_ query: LostFoundQuery, page: PageRequest) async throws -> Page<LostFoundSearchHit> {
        let compiled = try CompiledLostFoundQuery(query, page: page)
        let size = page.size
        return try await pool.domainRead { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            func list(_ values: [String]) -> String { values.map { _ in "?" }.joined(separator: ", ") }
            let statuses = compiled.statuses.map(\.rawValue).sorted()
            conditions.append("status IN (\(list(statuses)))")
            arguments += StatementArguments(statuses)
            if !query.filter.categories.isEmpty {
                let values = query.filter.categories.map(\.rawValue).sorted()
                conditions.append("category IN (\(list(values)))")
                arguments += StatementArguments(values)
            }
            if let key = compiled.buildingKey {
                conditions.append("buildingKey = ?")
                arguments += [key]
            }
            let browsing = compiled.terms.isEmpty && query.filter.near == nil
            if browsing {
                // Newest first, entirely in SQL: keyset, order and limit on indexed columns.
                if let cursor = compiled.cursor {
                    conditions.append("(createdAt < ? OR (createdAt = ? AND id < ?))")
                    arguments += [cursor.c, cursor.c, cursor.i]
                }
                arguments += [size + 1]
                let items = try LostFoundItemRow.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM lostFoundItem WHERE \(conditions.joined(separator: " AND "))
                        ORDER BY createdAt DESC, id DESC LIMIT ?
                        """,
                    arguments: arguments
                )
                let hits = items.compactMap { LostFoundSearchEngine.hit($0, compiled) }
                return LostFoundSearchEngine.page(hits, compiled, size: size)
            }
            if !compiled.terms.isEmpty {
                conditions.append("docID IN (SELECT rowid FROM lostFoundItemSearch WHERE lostFoundItemSearch MATCH ?)")
                arguments += [TextSearch.ftsExpression(compiled.terms)]
            }
            if let near = query.filter.near {
                let box = GreatCircle.boundingBox(
                    latitude: near.center.latitude,
                    longitude: near.center.longitude,
                    // Others measure to an item's cell, up to this much from its exact point.
                    radiusKm: near.radiusKm + ApproximateLocation.maximumShiftKm
                )
                conditions.append("latitude IS NOT NULL AND latitude BETWEEN ? AND ?")
                arguments += [box.latitude.lowerBound, box.latitude.upperBound]
                if let longitude = box.longitude {
                    conditions.append("longitude BETWEEN ? AND ?")
                    arguments += [longitude.lowerBound, longitude.upperBound]
                }
            }
            let candidates = try LostFoundItemRow.fetchAll(
                db,
                sql: "SELECT * FROM lostFoundItem WHERE \(conditions.joined(separator: " AND "))",
                arguments: arguments
            )
            let hits = candidates.compactMap { LostFoundSearchEngine.hit($0, compiled) }
            return LostFoundSearchEngine.page(hits, compiled, size: size)
        }
    }

    public func matches(recordedSince date: Date, limit: Int) async throws -> [LostFoundMatch] {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM lostFoundMatch WHERE matchedAt >= ?
                    ORDER BY matchedAt, foundItemID, lostItemID LIMIT ?
                    """,
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
                     AND (m.score < ? OR (m.score = ? AND (m.matchedAt < ? OR (m.matchedAt = ? AND i.id < ?))))
                    """
                arguments += [cursor.r, cursor.r, cursor.t, cursor.t, cursor.i]
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
