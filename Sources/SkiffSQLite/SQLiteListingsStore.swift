public import Foundation
import GRDB
public import SkiffDomain
public import SkiffListings

/// The SQLite ``SkiffListings/ListingsStore``.
///
/// Each use case is one `pool.write { }` transaction or one `pool.read { }` snapshot. Every mutation loads
/// what ``SkiffListings/ListingLifecycle`` needs, lets it decide (existence, ownership, state, limits,
/// request-id retries) and saves the result inside the same transaction, as
/// ``SkiffListings/InMemoryListingsStore`` does, so both throw the same errors; the single writer serializes
/// transactions, which makes `setStatus` exactly-once. Change events are appended in the transaction of the
/// change. Images are BLOBs in the `image` table. Search: see `SQLiteListingsStore+Search.swift`.
///
/// Get one from ``SQLiteDatabase/listingsStore()``.
public struct SQLiteListingsStore: ListingsStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    // MARK: Listings

    public func createListing(_ listing: Listing, requestID: String?) async throws -> Listing {
        // What needs nothing stored is worked out here, before the write joins a group: the group's
        // transaction runs its writes one after another on the one writer.
        let new = ListingLifecycle.NewListing(listing)
        let row = StatementArguments(ListingRow.values(new.listing))
        return try await pool.domainWrite { db in
            let earlier = try requestID.flatMap { requestID in
                try db.fetchOneCached(
                    sql: "SELECT listingID, fingerprint FROM listingRequest WHERE sellerID = ? AND requestID = ?",
                    arguments: [listing.sellerID, requestID]
                )
            }
            let decision = try ListingLifecycle.create(
                new,
                requestID: requestID,
                earlierRequest: try earlier.map { row in
                    ListingLifecycle.EarlierRequest(
                        fingerprint: row["fingerprint"],
                        listing: try ListingRow.fetchOne(db, id: row["listingID"])
                    )
                },
                imageOwners: try ImageRow.owners(db, listing.imageIDs),
                listingIDTaken: try Bool(exists: db, "SELECT 1 FROM listing WHERE id = ?", [listing.id])
            )
            switch decision {
            case .retry(let existing):
                return existing
            case .create(let stored, let request):
                try ListingRow.insert(db, stored, values: row)
                if let request {
                    try db.executeCached(
                        sql: """
                            INSERT INTO listingRequest (sellerID, requestID, listingID, fingerprint)
                            VALUES (?, ?, ?, ?)
                            """,
                        arguments: [request.sellerID, request.requestID, request.listingID, request.fingerprint]
                    )
                }
                return stored
            }
        }
    }

    public func listing(id: String) async throws -> Listing? {
        try await pool.domainRead { db in try ListingRow.fetchOne(db, id: id) }
    }

    public func updateListing(
        id: String,
        sellerID: String,
        changes: ListingChanges,
        now: Date
    ) async throws -> ListingUpdate {
        try await pool.domainWrite { db in
            let change = try ListingLifecycle.update(
                try ListingRow.fetchOne(db, id: id),
                sellerID: sellerID,
                changes: changes,
                imageOwners: try ImageRow.owners(db, changes.imageIDs ?? []),
                now: now
            )
            guard let draft = change.event else { return ListingUpdate(listing: change.listing, event: nil) }
            try ListingRow.update(db, change.listing)
            return ListingUpdate(listing: change.listing, event: try ListingChangeRow.insert(db, draft))
        }
    }

    public func setStatus(
        id: String,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) async throws -> StatusTransition {
        try await pool.domainWrite { db in
            let change = try ListingLifecycle.setStatus(
                try ListingRow.fetchOne(db, id: id),
                to: status,
                by: actor,
                now: now
            )
            guard let draft = change.event else { return StatusTransition(listing: change.listing, event: nil) }
            // The status guard makes the transition exactly-once even if this ever ran concurrently.
            try db.executeCached(
                sql: "UPDATE listing SET status = ?, updatedAt = ? WHERE id = ? AND status = 'active'",
                arguments: [change.listing.status.rawValue, change.listing.updatedAt.millisecondsSince1970, id]
            )
            guard db.changesCount == 1 else {
                throw DomainError(.aborted, "The listing changed meanwhile. Try again.")
            }
            return StatusTransition(listing: change.listing, event: try ListingChangeRow.insert(db, draft))
        }
    }

    public func sellerListings(
        sellerID: String,
        statuses: Set<ListingStatus>,
        page: PageRequest
    ) async throws -> Page<Listing> {
        let cursor = try ListingsPaging.sellerCursor(page, sellerID: sellerID, statuses: statuses)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            var conditions = ["sellerID = ?"]
            var arguments: StatementArguments = [sellerID]
            if !statuses.isEmpty {
                let values = statuses.map(\.rawValue).sorted()
                conditions.append("status IN (\(values.map { _ in "?" }.joined(separator: ", ")))")
                arguments += StatementArguments(values)
            }
            if let cursor {
                conditions.append("createdAt <= ? AND (createdAt < ? OR (createdAt = ? AND id < ?))")
                arguments += [cursor.c, cursor.c, cursor.c, cursor.i]
            }
            arguments += [limit]
            return try ListingRow.fetchAll(
                db,
                sql: """
                    SELECT * FROM listing WHERE \(conditions.joined(separator: " AND "))
                    ORDER BY createdAt DESC, id DESC LIMIT ?
                    """,
                arguments: arguments
            )
        }
        return ListingsPaging.sellerPage(fetched, size: page.size, sellerID: sellerID, statuses: statuses)
    }

    // MARK: Images

    public func putImage(_ image: StoredImage) async throws {
        try await pool.domainWrite { db in
            let stored = try ListingLifecycle.putImage(
                image,
                imageIDTaken: try Bool(exists: db, "SELECT 1 FROM image WHERE id = ?", [image.id])
            )
            try db.executeCached(
                sql: """
                    INSERT INTO image (id, ownerID, contentType, sizeBytes, bytes, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    stored.id, stored.ownerID, stored.contentType.rawValue, stored.sizeBytes, stored.bytes,
                    stored.createdAt.millisecondsSince1970,
                ]
            )
        }
    }

    public func image(id: String) async throws -> StoredImage? {
        try await pool.domainRead { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM image WHERE id = ?"), arguments: [id]).map(
                ImageRow.image
            )
        }
    }

    public func unattachedImageIDs(uploadedBefore date: Date, after id: String?, limit: Int) async throws -> [String] {
        try await pool.domainRead { db in
            try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id FROM image
                        WHERE createdAt < ? AND id > ?
                          AND id NOT IN (SELECT value FROM listing, json_each(listing.imageIDs))
                        ORDER BY id
                        LIMIT ?
                        """
                ),
                arguments: [date.millisecondsSince1970, id ?? "", max(limit, 0)]
            )
        }
    }

    public func deleteUnattachedImages(uploadedBefore date: Date, keeping: Set<String>) async throws -> Int {
        let kept = String(decoding: try JSONEncoder().encode(keeping.sorted()), as: UTF8.self)
        return try await pool.domainWrite { db in
            try db.executeCached(
                sql: """
                    DELETE FROM image
                    WHERE createdAt < ?
                      AND id NOT IN (SELECT value FROM listing, json_each(listing.imageIDs))
                      AND id NOT IN (SELECT value FROM json_each(?))
                    """,
                arguments: [date.millisecondsSince1970, kept]
            )
            return db.changesCount
        }
    }

    // MARK: Saved listings

    public func saveListing(userID: String, listingID: String, now: Date, limit: Int) async throws -> SavedListing {
        try await pool.domainWrite { db in
            let savedAt = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT savedAt FROM savedListing WHERE userID = ? AND listingID = ?"),
                arguments: [userID, listingID]
            )
            let count = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT COUNT(*) FROM savedListing WHERE userID = ?"),
                arguments: [userID]
            )
            let decision = try ListingLifecycle.save(
                try ListingRow.fetchOne(db, id: listingID),
                savedAt: savedAt.map(Date.init(millisecondsSince1970:)),
                savedCount: count ?? 0,
                limit: limit,
                now: now
            )
            switch decision {
            case .kept(let saved):
                return saved
            case .save(let saved):
                try db.executeCached(
                    sql: "INSERT INTO savedListing (userID, listingID, savedAt) VALUES (?, ?, ?)",
                    arguments: [userID, listingID, saved.savedAt.millisecondsSince1970]
                )
                return saved
            }
        }
    }

    public func unsaveListing(userID: String, listingID: String) async throws {
        try await pool.domainWrite { db in
            try db.executeCached(
                sql: "DELETE FROM savedListing WHERE userID = ? AND listingID = ?",
                arguments: [userID, listingID]
            )
        }
    }

    public func savedListings(userID: String, page: PageRequest) async throws -> Page<SavedListing> {
        let cursor = try ListingsPaging.savedCursor(page, userID: userID)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            var sql =
                "SELECT l.*, s.savedAt AS savedAt FROM savedListing s JOIN listing l ON l.id = s.listingID "
                + "WHERE s.userID = ?"
            var arguments: StatementArguments = [userID]
            if let cursor {
                sql += " AND s.savedAt <= ? AND (s.savedAt < ? OR (s.savedAt = ? AND s.listingID < ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY s.savedAt DESC, s.listingID DESC LIMIT ?"
            arguments += [limit]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                SavedListing(listing: ListingRow.listing(row), savedAt: Date(millisecondsSince1970: row["savedAt"]))
            }
        }
        return ListingsPaging.savedPage(fetched, size: page.size, userID: userID)
    }

    public func savers(listingID: String) async throws -> [String] {
        try await pool.domainRead { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT userID FROM savedListing WHERE listingID = ? ORDER BY userID"),
                arguments: [listingID]
            )
        }
    }

    // MARK: Change events

    public func changes(forUser userID: String, after sequence: Int64, limit: Int) async throws -> [ListingChangeEvent]
    {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT c.* FROM listingChange c
                        JOIN savedListing s ON s.listingID = c.listingID AND s.userID = ?
                        WHERE c.sequence > ? ORDER BY c.sequence LIMIT ?
                        """
                ),
                arguments: [userID, sequence, limit]
            ).map(ListingChangeRow.event)
        }
    }

    public func change(sequence: Int64) async throws -> ListingChangeEvent? {
        try await pool.domainRead { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM listingChange WHERE sequence = ?"),
                arguments: [sequence]
            )
            .map(ListingChangeRow.event)
        }
    }

    public func changes(since date: Date, limit: Int) async throws -> [ListingChangeEvent] {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM listingChange WHERE changedAt >= ? ORDER BY sequence LIMIT ?"),
                arguments: [date.millisecondsSince1970, max(limit, 0)]
            ).map(ListingChangeRow.event)
        }
    }

    public func pruneChanges(before date: Date) async throws -> Int {
        try await pool.deleteInBatches(
            "DELETE FROM listingChange WHERE sequence IN (SELECT sequence FROM listingChange WHERE changedAt < ? LIMIT ?)",
            [date.millisecondsSince1970]
        )
    }
}

extension Bool {
    /// Whether a query returns a row.
    init(exists db: Database, _ sql: String, _ arguments: StatementArguments) throws {
        self = try db.fetchOneCached(sql: sql, arguments: arguments) != nil
    }
}
