import Foundation
import GRDB
import SkiffDomain
import SkiffListings

/// The SQLite ``SkiffListings/ListingsStore``.
///
/// Each use case is one `pool.write { }` transaction or one `pool.read { }` snapshot. Existence, ownership
/// and state are checked inside the transaction in the same order as ``SkiffListings/InMemoryListingsStore``,
/// so both throw the same errors; the single writer serializes transactions, which makes `setStatus`
/// exactly-once. Change events are appended in the transaction of the change. Images are BLOBs in the
/// `image` table. Search: see `SQLiteListingsStore+Search.swift`.
///
/// Get one from ``SQLiteDatabase/listingsStore()``.
public struct SQLiteListingsStore: ListingsStore {
    let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    // MARK: Listings

    public func createListing(_ listing: Listing, requestID: String?) async throws -> Listing {
        let stored = listing.rounded
        let fingerprint = stored.fields.fingerprint
        return try await pool.domainWrite { db in
            if let requestID,
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT listingID, fingerprint FROM listingRequest WHERE sellerID = ? AND requestID = ?",
                    arguments: [stored.sellerID, requestID]
                )
            {
                guard row["fingerprint"] == fingerprint,
                    let existing = try ListingRow.fetchOne(db, id: row["listingID"])
                else { throw ListingsStoreError.requestIDReused }
                return existing
            }
            try ImageRow.check(db, stored.imageIDs, ownerID: stored.sellerID)
            guard try ListingRow.fetchOne(db, id: stored.id) == nil else { throw ListingsStoreError.listingIDTaken }
            try ListingRow.insert(db, stored)
            if let requestID {
                try db.execute(
                    sql: "INSERT INTO listingRequest (sellerID, requestID, listingID, fingerprint) VALUES (?, ?, ?, ?)",
                    arguments: [stored.sellerID, requestID, stored.id, fingerprint]
                )
            }
            return stored
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
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            guard var listing = try ListingRow.fetchOne(db, id: id) else { throw ListingsStoreError.listingNotFound }
            guard listing.sellerID == sellerID else { throw ListingsStoreError.notSeller }
            guard listing.status == .active else { throw ListingsStoreError.notActive }
            if let imageIDs = changes.imageIDs { try ImageRow.check(db, imageIDs, ownerID: sellerID) }
            let fields = changes.applied(to: listing.fields)
            guard fields != listing.fields else { return ListingUpdate(listing: listing, event: nil) }
            let oldPrice = listing.priceCents
            listing.fields = fields
            listing.updatedAt = Date(millisecondsSince1970: now)
            try ListingRow.update(db, listing)
            let kind: ListingChangeKind = fields.priceCents != oldPrice ? .priceChanged : .updated
            let event = try ListingChangeRow.insert(db, listing, kind: kind, oldPrice: oldPrice, at: now)
            return ListingUpdate(listing: listing, event: event)
        }
    }

    public func setStatus(
        id: String,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) async throws -> StatusTransition {
        precondition(status != .active, "setStatus moves a listing to sold or withdrawn")
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            guard var listing = try ListingRow.fetchOne(db, id: id) else { throw ListingsStoreError.listingNotFound }
            if case .seller(let sellerID) = actor, listing.sellerID != sellerID { throw ListingsStoreError.notSeller }
            switch (listing.status, status) {
            case (.active, _):
                // The status guard makes the transition exactly-once even if this ever ran concurrently.
                try db.execute(
                    sql: "UPDATE listing SET status = ?, updatedAt = ? WHERE id = ? AND status = 'active'",
                    arguments: [status.rawValue, now, id]
                )
                guard db.changesCount == 1 else {
                    throw DomainError(.aborted, "The listing changed meanwhile. Try again.")
                }
                listing.status = status
                listing.updatedAt = Date(millisecondsSince1970: now)
                let event = try ListingChangeRow.insert(
                    db,
                    listing,
                    kind: status == .sold ? .sold : .withdrawn,
                    oldPrice: listing.priceCents,
                    at: now
                )
                return StatusTransition(listing: listing, event: event)
            case (.sold, .sold), (.withdrawn, .withdrawn):
                return StatusTransition(listing: listing, event: nil)
            case (.sold, _):
                throw ListingsStoreError.alreadySold
            default:
                throw ListingsStoreError.alreadyWithdrawn
            }
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
                conditions.append("(createdAt < ? OR (createdAt = ? AND id < ?))")
                arguments += [cursor.c, cursor.c, cursor.i]
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
            guard try !Bool(exists: db, "SELECT 1 FROM image WHERE id = ?", [image.id]) else {
                throw ListingsStoreError.imageIDTaken
            }
            try db.execute(
                sql: """
                    INSERT INTO image (id, ownerID, contentType, sizeBytes, bytes, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    image.id, image.ownerID, image.contentType.rawValue, image.sizeBytes, image.bytes,
                    image.createdAt.millisecondsSince1970,
                ]
            )
        }
    }

    public func image(id: String) async throws -> StoredImage? {
        try await pool.domainRead { db in
            try Row.fetchOne(db, sql: "SELECT * FROM image WHERE id = ?", arguments: [id]).map(ImageRow.image)
        }
    }

    public func unattachedImageIDs(uploadedBefore date: Date, after id: String?, limit: Int) async throws -> [String] {
        try await pool.domainRead { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT id FROM image
                    WHERE createdAt < ? AND id > ?
                      AND id NOT IN (SELECT value FROM listing, json_each(listing.imageIDs))
                    ORDER BY id
                    LIMIT ?
                    """,
                arguments: [date.millisecondsSince1970, id ?? "", max(limit, 0)]
            )
        }
    }

    public func deleteUnattachedImages(uploadedBefore date: Date, keeping: Set<String>) async throws -> Int {
        let kept = String(decoding: try JSONEncoder().encode(keeping.sorted()), as: UTF8.self)
        return try await pool.domainWrite { db in
            try db.execute(
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
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            guard let listing = try ListingRow.fetchOne(db, id: listingID) else {
                throw ListingsStoreError.listingNotFound
            }
            if let savedAt = try Int64.fetchOne(
                db,
                sql: "SELECT savedAt FROM savedListing WHERE userID = ? AND listingID = ?",
                arguments: [userID, listingID]
            ) {
                return SavedListing(listing: listing, savedAt: Date(millisecondsSince1970: savedAt))
            }
            guard listing.status == .active else { throw ListingsStoreError.notActive }
            let count = try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM savedListing WHERE userID = ?",
                arguments: [userID]
            )
            guard (count ?? 0) < limit else { throw ListingsStoreError.savedLimit }
            try db.execute(
                sql: "INSERT INTO savedListing (userID, listingID, savedAt) VALUES (?, ?, ?)",
                arguments: [userID, listingID, now]
            )
            return SavedListing(listing: listing, savedAt: Date(millisecondsSince1970: now))
        }
    }

    public func unsaveListing(userID: String, listingID: String) async throws {
        try await pool.domainWrite { db in
            try db.execute(
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
                sql += " AND (s.savedAt < ? OR (s.savedAt = ? AND s.listingID < ?))"
                arguments += [cursor.t, cursor.t, cursor.i]
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
                db,
                sql: "SELECT userID FROM savedListing WHERE listingID = ? ORDER BY userID",
                arguments: [listingID]
            )
        }
    }

    // MARK: Change events

    public func changes(forUser userID: String, after sequence: Int64, limit: Int) async throws -> [ListingChangeEvent]
    {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT c.* FROM listingChange c
                    JOIN savedListing s ON s.listingID = c.listingID AND s.userID = ?
                    WHERE c.sequence > ? ORDER BY c.sequence LIMIT ?
                    """,
                arguments: [userID, sequence, limit]
            ).map(ListingChangeRow.event)
        }
    }

    public func change(sequence: Int64) async throws -> ListingChangeEvent? {
        try await pool.domainRead { db in
            try Row.fetchOne(db, sql: "SELECT * FROM listingChange WHERE sequence = ?", arguments: [sequence])
                .map(ListingChangeRow.event)
        }
    }

    public func changes(since date: Date, limit: Int) async throws -> [ListingChangeEvent] {
        try await pool.domainRead { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM listingChange WHERE changedAt >= ? ORDER BY sequence LIMIT ?",
                arguments: [date.millisecondsSince1970, max(limit, 0)]
            ).map(ListingChangeRow.event)
        }
    }

    public func pruneChanges(before date: Date) async throws -> Int {
        try await pool.domainWrite { db in
            try db.execute(
                sql: "DELETE FROM listingChange WHERE changedAt < ?",
                arguments: [date.millisecondsSince1970]
            )
            return db.changesCount
        }
    }
}

extension Bool {
    /// Whether a query returns a row.
    init(exists db: Database, _ sql: String, _ arguments: StatementArguments) throws {
        self = try Row.fetchOne(db, sql: sql, arguments: arguments) != nil
    }
}
