public import Foundation
import PostgresNIO
public import SkiffDomain
public import SkiffLostFound

/// The PostgreSQL ``SkiffLostFound/LostFoundStore``.
///
/// Each mutation is one SERIALIZABLE transaction (``PostgresStorage/write(_:)``): it loads what
/// ``SkiffLostFound/LostFoundLifecycle`` needs, lets it decide (existence, ownership, state) and saves the
/// result, as the SQLite and in-memory stores do, so every backend throws the same errors. Reporting an
/// item reads its match candidates (the same bounded set as SQLite's: see
/// ``SkiffLostFound/LostFoundMatcher``), lets the lifecycle score them and inserts the item with the
/// matches it accepts, all in that transaction. Several servers may share the database: of two
/// transactions that act on what the other changes (a lost and a found item that match, reported at
/// once; a report scoring an item another server is changing; two servers returning one item),
/// PostgreSQL aborts one, which runs again and then sees the other's write — so no pair of matching items
/// is missed and no change is lost.
///
/// Reads are one snapshot each. Search is one statement: filters, keywords on a GIN index of the tokens
/// Swift computes (``SkiffDomain/TextSearch``), the circle on a GiST index and then the private-distance
/// rule in SQL (exact for an item's reporter, to its grid cell for anyone else), the order, the keyset
/// cursor and `LIMIT page + 1`; `LostFoundSearchEngine` then checks the page's rows and makes its cursors,
/// so results equal the other stores'. A reporter's items and an item's matches are keyset walks of
/// indexes in their order.
///
/// Get one from ``PostgresStorage/lostFoundStore()``.
public struct PostgresLostFoundStore: LostFoundStore {
    let storage: PostgresStorage

    init(storage: PostgresStorage) {
        self.storage = storage
    }

    public func reportItem(_ item: LostFoundItem, matcher: LostFoundMatcher) async throws -> LostFoundReport {
        try await itemWrite { db in
            let taken = try await db.exists("SELECT 1 FROM lost_found_item WHERE id = \(item.id)", storage)
            var candidates: [LostFoundItem] = []
            if !taken, let query = Self.candidatesQuery(for: item.rounded, matcher: matcher) {
                candidates = try await PostgresLostFoundItemRows.items(db.run(query, storage))
            }
            let report = try LostFoundLifecycle.report(
                item,
                itemIDTaken: taken,
                candidates: candidates,
                matcher: matcher
            )
            guard try await db.exists(PostgresLostFoundItemRows.insert(report.item), storage) else {
                throw LostFoundStoreError.itemIDTaken
            }
            if !report.matches.isEmpty {
                try await db.run(PostgresLostFoundMatchRows.insert(report.matches), storage)
            }
            return report
        }
    }

    public func item(id: String) async throws -> LostFoundItem? {
        try await storage.read { db in try await Self.item(db, id: id, storage) }
    }

    public func updateItem(
        id: String,
        reporterID: String,
        changes: LostFoundItemChanges,
        now: Date
    ) async throws -> LostFoundItem {
        try await itemWrite { db in
            let change = try LostFoundLifecycle.update(
                try await Self.item(db, id: id, storage),
                reporterID: reporterID,
                changes: changes,
                now: now
            )
            if change.changed { try await db.run(PostgresLostFoundItemRows.update(change.item), storage) }
            return change.item
        }
    }

    public func markReturned(id: String, reporterID: String, now: Date) async throws -> LostFoundItem {
        try await itemWrite { db in
            let change = try LostFoundLifecycle.markReturned(
                try await Self.item(db, id: id, storage),
                reporterID: reporterID,
                now: now
            )
            if change.changed { try await db.run(PostgresLostFoundItemRows.update(change.item), storage) }
            return change.item
        }
    }

    public func search(_ query: LostFoundQuery, page: PageRequest) async throws -> Page<LostFoundSearchHit> {
        let compiled = try CompiledLostFoundQuery(query, page: page)
        let size = page.size
        return try await storage.read { db in
            var statement = Self.searchQuery(compiled, limit: size + 1)
            switch try await Self.circlePlan(compiled, size: size, db, storage) {
            case .cells(let bands):
                if let hits = try await Self.bandWalk(compiled, bands: bands, size: size, db, storage) {
                    return LostFoundSearchEngine.page(hits, compiled, size: size)
                }
            case .matches:
                statement = Self.searchQuery(compiled, limit: size + 1, boxIndexed: false)
            case .walk:
                statement = Self.searchQuery(compiled, limit: size + 1, boxIndexed: false)
                try await PostgresGridCells.walkOrderIndex(db, storage)
            case .planner: break
            }
            let items = try await PostgresLostFoundItemRows.items(db.run(statement, storage))
            let hits = items.compactMap { LostFoundSearchEngine.hit($0, compiled) }
            return LostFoundSearchEngine.page(ordered: hits, compiled, size: size)
        }
    }

    public func matches(recordedSince date: Date, limit: Int) async throws -> [LostFoundMatch] {
        let limit = Int64(max(limit, 0))
        return try await storage.read { db in
            try await PostgresLostFoundMatchRows.matches(
                db.run(
                    """
                    SELECT found_item_id, lost_item_id, score, distance_km, matched_at FROM lost_found_match
                    WHERE matched_at >= \(date.millisecondsSince1970)
                    ORDER BY matched_at, found_item_id, lost_item_id
                    LIMIT \(limit)
                    """,
                    storage
                )
            )
        }
    }

    public func items(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        page: PageRequest
    ) async throws -> Page<LostFoundOwnItem> {
        let cursor = try LostFoundSearchEngine.ownItemsCursor(page, reporterID: reporterID, statuses: statuses)
        let statement = Self.ownItemsQuery(
            reporterID: reporterID,
            statuses: statuses,
            after: cursor,
            limit: page.size + 1
        )
        let fetched = try await storage.read { db in
            var fetched: [LostFoundOwnItem] = []
            for try await row in try await db.run(statement, storage) {
                let row = row.makeRandomAccess()
                fetched.append(
                    LostFoundOwnItem(
                        item: try PostgresLostFoundItemRows.item(row),
                        matchCount: Int(try row[PostgresLostFoundItemRows.columnCount].decode(Int64.self))
                    )
                )
            }
            return fetched
        }
        return LostFoundSearchEngine.ownItemsPage(fetched, size: page.size, reporterID: reporterID, statuses: statuses)
    }

    public func matches(itemID: String, page: PageRequest) async throws -> Page<LostFoundMatchHit> {
        let cursor = try LostFoundSearchEngine.matchCursor(page, itemID: itemID)
        let hits = try await storage.read { db in
            guard let item = try await Self.item(db, id: itemID, storage) else {
                throw LostFoundStoreError.itemNotFound
            }
            var hits: [LostFoundMatchHit] = []
            let column = PostgresLostFoundItemRows.columnCount
            for try await row in try await db.run(
                Self.matchesQuery(of: item, after: cursor, limit: page.size + 1),
                storage
            ) {
                let row = row.makeRandomAccess()
                hits.append(
                    LostFoundMatchHit(
                        candidate: try PostgresLostFoundItemRows.item(row),
                        score: try row[column].decode(Double.self),
                        distanceKm: try row[column + 1].decode(Double?.self),
                        matchedAt: Date(millisecondsSince1970: try row[column + 2].decode(Int64.self))
                    )
                )
            }
            return hits
        }
        // Already in order and after the cursor: this only cuts the page and makes its token.
        return LostFoundSearchEngine.matchesPage(hits, itemID: itemID, cursor: nil, size: page.size)
    }

    /// Runs a write of items (a report, an update, a return): run again after a conflict, it first locks
    /// out every other writer of items (SHARE ROW EXCLUSIVE), so it cannot lose to another again. Reports
    /// read ranges of the item indexes that concurrent reports insert into (recent times, the same
    /// category and words), so under many reports at once PostgreSQL aborts most of them for
    /// serialization failures; without the lock a report could lose every attempt. Item writers touch
    /// `lost_found_item` before any other table, so the writers this lock waits for never wait for it.
    private func itemWrite<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await storage.write(lockingOnRetry: .init(table: "lost_found_item", mode: "SHARE ROW EXCLUSIVE"), body)
    }

    /// The item with this id, if there is one.
    static func item(_ db: PostgresConnection, id: String, _ storage: PostgresStorage) async throws -> LostFoundItem? {
        try await PostgresLostFoundItemRows.items(
            db.run(
                "SELECT \(unescaped: PostgresLostFoundItemRows.columns("i")) FROM lost_found_item i WHERE i.id = \(id)",
                storage
            )
        ).first
    }
}

extension PostgresStorage {
    /// The LostFound service's store on this database.
    public func lostFoundStore() -> PostgresLostFoundStore {
        PostgresLostFoundStore(storage: self)
    }
}
