public import Foundation
import PostgresNIO
public import SkiffDomain
public import SkiffListings

/// The PostgreSQL ``SkiffListings/ListingsStore``.
///
/// Each use case is one ``PostgresStorage`` transaction: writes are SERIALIZABLE (run again when
/// PostgreSQL aborts them for a conflict), reads one read-only snapshot. Every mutation loads what
/// ``SkiffListings/ListingLifecycle`` needs, lets it decide (existence, ownership, state, limits,
/// request-id retries, image checks) and saves the result in the same transaction, as the SQLite and
/// in-memory stores do, so all three throw the same errors. Two servers racing on the same rows cannot
/// both act on what they read: PostgreSQL aborts one, which runs again and then sees the other's write.
/// So `setStatus` is exactly-once, a user's saved limit holds, a request id makes one listing, and an
/// image is either attached or deleted by housekeeping, never both, across every server.
///
/// Change events are numbered by `listing_change_head`, moved in the transaction that records the
/// event: gapless, in commit order. Writes that record events and are run again after a conflict
/// begin by locking out the other event writers (`LOCK TABLE listing_change_head`, which takes no
/// snapshot), so a busy log cannot starve a writer: optimistic until they conflict, then in turn.
///
/// Images are `bytea`, stored uncompressed out of line, so a download reads a piece at a time.
/// Search: see `PostgresListingsStore+Search.swift`.
///
/// Get one from ``PostgresStorage/listingsStore()``.
public struct PostgresListingsStore: ListingsStore {
    let storage: PostgresStorage

    init(storage: PostgresStorage) {
        self.storage = storage
    }

    // MARK: Listings

    public func createListing(_ listing: Listing, requestID: String?) async throws -> Listing {
        // Concurrent creations read and insert on the same index pages (the newest ids, the seller's
        // requests, the word index), so SERIALIZABLE aborts some of them; run again, a creation first
        // waits for the listing writers in flight and holds off new ones (every write of `listing`:
        // updates, sales), so it cannot lose to another creation again.
        try await storage.write(lockingOnRetry: Self.creationLock) { db in
            var earlier: ListingLifecycle.EarlierRequest?
            if let requestID {
                let rows = try await db.run(
                    """
                    SELECT listing_id, fingerprint FROM listing_request
                    WHERE seller_id = \(listing.sellerID) AND request_id = \(requestID)
                    """,
                    storage
                )
                for try await (listingID, fingerprint) in rows.decode((String, String).self) {
                    earlier = ListingLifecycle.EarlierRequest(
                        fingerprint: fingerprint,
                        listing: try await self.listing(db, id: listingID)
                    )
                }
            }
            let decision = try ListingLifecycle.create(
                listing,
                requestID: requestID,
                earlierRequest: earlier,
                imageOwners: try await imageOwners(db, listing.imageIDs),
                listingIDTaken: try await db.exists("SELECT 1 FROM listing WHERE id = \(listing.id)", storage)
            )
            switch decision {
            case .retry(let existing):
                return existing
            case .create(let stored, let request):
                try await db.run(ListingsRows.insert(stored), storage)
                if let request {
                    try await db.run(
                        """
                        INSERT INTO listing_request (seller_id, request_id, listing_id, fingerprint)
                        VALUES (\(request.sellerID), \(request.requestID), \(request.listingID), \(request.fingerprint))
                        """,
                        storage
                    )
                }
                return stored
            }
        }
    }

    public func listing(id: String) async throws -> Listing? {
        try await storage.read { db in try await listing(db, id: id) }
    }

    public func updateListing(
        id: String,
        sellerID: String,
        changes: ListingChanges,
        now: Date
    ) async throws -> ListingUpdate {
        try await eventWrite { db in
            let change = try ListingLifecycle.update(
                try await listing(db, id: id),
                sellerID: sellerID,
                changes: changes,
                imageOwners: try await imageOwners(db, changes.imageIDs ?? []),
                now: now
            )
            guard let draft = change.event else { return ListingUpdate(listing: change.listing, event: nil) }
            try await db.run(ListingsRows.update(change.listing), storage)
            return ListingUpdate(listing: change.listing, event: try await record(db, draft))
        }
    }

    public func setStatus(
        id: String,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) async throws -> StatusTransition {
        try await eventWrite { db in
            let change = try ListingLifecycle.setStatus(try await listing(db, id: id), to: status, by: actor, now: now)
            guard let draft = change.event else { return StatusTransition(listing: change.listing, event: nil) }
            // The status guard keeps the transition exactly-once even if the isolation ever let two through.
            let updated = try await db.count(
                """
                WITH updated AS (
                    UPDATE listing SET status = \(change.listing.status.rawValue),
                        updated_at = \(change.listing.updatedAt.millisecondsSince1970)
                    WHERE id = \(id) AND status = 'active'
                    RETURNING 1
                )
                SELECT count(*) FROM updated
                """,
                storage
            )
            guard updated == 1 else { throw DomainError(.aborted, "The listing changed meanwhile. Try again.") }
            return StatusTransition(listing: change.listing, event: try await record(db, draft))
        }
    }

    public func sellerListings(
        sellerID: String,
        statuses: Set<ListingStatus>,
        page: PageRequest
    ) async throws -> Page<Listing> {
        let cursor = try ListingsPaging.sellerCursor(page, sellerID: sellerID, statuses: statuses)
        var query = PostgresQueryBuilder("SELECT \(ListingsRows.columns) FROM listing WHERE listing.seller_id = ")
        query.append(query.bind(sellerID))
        if !statuses.isEmpty {
            query.append(" AND listing.status = ANY(\(query.bind(statuses.map(\.rawValue).sorted()))::text[])")
        }
        if let cursor {
            let c = query.bind(cursor.c)
            query.append(
                " AND listing.created_at <= \(c) AND (listing.created_at < \(c) OR "
                    + "(listing.created_at = \(c) AND listing.id < \(query.bind(cursor.i))))"
            )
        }
        query.append(" ORDER BY listing.created_at DESC, listing.id DESC LIMIT \(query.bind(page.size + 1))")
        let fetched = try await storage.read { db in try await ListingsRows.listings(db.run(query.query, storage)) }
        return ListingsPaging.sellerPage(fetched, size: page.size, sellerID: sellerID, statuses: statuses)
    }

    // MARK: Images

    public func putImage(_ image: StoredImage) async throws {
        try await storage.write { db in
            let stored = try ListingLifecycle.putImage(
                image,
                imageIDTaken: try await db.exists("SELECT 1 FROM listing_image WHERE id = \(image.id)", storage)
            )
            try await db.run(
                """
                INSERT INTO listing_image (id, owner_id, content_type, size_bytes, bytes, created_at)
                VALUES (\(stored.id), \(stored.ownerID), \(stored.contentType.rawValue), \(Int64(stored.sizeBytes)),
                    \(stored.bytes), \(stored.createdAt.millisecondsSince1970))
                """,
                storage
            )
        }
    }

    public func image(id: String) async throws -> StoredImage? {
        try await storage.read { db in
            let rows = try await db.run(
                "SELECT id, owner_id, content_type, bytes, created_at FROM listing_image WHERE id = \(id)",
                storage
            )
            for try await (id, ownerID, contentType, bytes, createdAt) in rows.decode(
                (String, String, String, Data, Int64).self
            ) {
                return StoredImage(
                    id: id,
                    ownerID: ownerID,
                    contentType: ImageContentType(rawValue: contentType) ?? .jpeg,
                    bytes: bytes,
                    createdAt: Date(millisecondsSince1970: createdAt)
                )
            }
            return nil
        }
    }

    public func imageHeader(id: String) async throws -> ImageHeader? {
        try await storage.read { db in
            let rows = try await db.run(
                "SELECT id, owner_id, content_type, size_bytes, created_at FROM listing_image WHERE id = \(id)",
                storage
            )
            for try await (id, ownerID, contentType, size, createdAt) in rows.decode(
                (String, String, String, Int64, Int64).self
            ) {
                return ImageHeader(
                    id: id,
                    ownerID: ownerID,
                    contentType: ImageContentType(rawValue: contentType) ?? .jpeg,
                    sizeBytes: Int(size),
                    createdAt: Date(millisecondsSince1970: createdAt)
                )
            }
            return nil
        }
    }

    /// Reads only the piece: `substring` of an uncompressed out-of-line value fetches the chunks it
    /// covers, so a download holds one piece at a time, as on SQLite.
    public func imageBytes(id: String, offset: Int, length: Int) async throws -> Data? {
        // `substring` counts from 1 in `integer`s; past the end it returns no bytes.
        let start = Int32(clamping: Int64(clamping: max(0, offset)) + 1)
        let count = Int32(clamping: max(0, length))
        return try await storage.read { db in
            let rows = try await db.run(
                "SELECT substring(bytes FROM \(start) FOR \(count)) FROM listing_image WHERE id = \(id)",
                storage
            )
            for try await bytes in rows.decode(Data.self) { return bytes }
            return nil
        }
    }

    public func unattachedImageIDs(uploadedBefore date: Date, after id: String?, limit: Int) async throws -> [String] {
        try await storage.read { db in
            var ids: [String] = []
            let rows = try await db.run(
                """
                SELECT id FROM listing_image
                WHERE created_at < \(date.millisecondsSince1970) AND id > \(id ?? "")
                    AND NOT EXISTS (SELECT 1 FROM listing WHERE listing.image_ids @> ARRAY[listing_image.id])
                ORDER BY id
                LIMIT \(max(limit, 0))
                """,
                storage
            )
            for try await id in rows.decode(String.self) { ids.append(id) }
            return ids
        }
    }

    public func deleteUnattachedImages(uploadedBefore date: Date, keeping: Set<String>) async throws -> Int {
        let kept = keeping.sorted()
        return try await storage.write { db in
            try await db.count(
                """
                WITH deleted AS (
                    DELETE FROM listing_image
                    WHERE created_at < \(date.millisecondsSince1970)
                        AND NOT EXISTS (SELECT 1 FROM listing WHERE listing.image_ids @> ARRAY[listing_image.id])
                        AND NOT (id = ANY(\(kept)::text[]))
                    RETURNING 1
                )
                SELECT count(*) FROM deleted
                """,
                storage
            )
        }
    }

    // MARK: Saved listings

    public func saveListing(userID: String, listingID: String, now: Date, limit: Int) async throws -> SavedListing {
        try await storage.write { db in
            var savedAt: Int64?
            for try await time in try await db.run(
                "SELECT saved_at FROM saved_listing WHERE user_id = \(userID) AND listing_id = \(listingID)",
                storage
            ).decode(Int64.self) {
                savedAt = time
            }
            let decision = try ListingLifecycle.save(
                try await listing(db, id: listingID),
                savedAt: savedAt.map(Date.init(millisecondsSince1970:)),
                savedCount: try await db.count(
                    "SELECT count(*) FROM saved_listing WHERE user_id = \(userID)",
                    storage
                ),
                limit: limit,
                now: now
            )
            switch decision {
            case .kept(let saved):
                return saved
            case .save(let saved):
                try await db.run(
                    """
                    INSERT INTO saved_listing (user_id, listing_id, saved_at)
                    VALUES (\(userID), \(listingID), \(saved.savedAt.millisecondsSince1970))
                    """,
                    storage
                )
                return saved
            }
        }
    }

    public func unsaveListing(userID: String, listingID: String) async throws {
        try await storage.write { db in
            try await db.run(
                "DELETE FROM saved_listing WHERE user_id = \(userID) AND listing_id = \(listingID)",
                storage
            )
        }
    }

    public func savedListings(userID: String, page: PageRequest) async throws -> Page<SavedListing> {
        let cursor = try ListingsPaging.savedCursor(page, userID: userID)
        var query = PostgresQueryBuilder(
            "SELECT \(ListingsRows.columns), saved.saved_at FROM saved_listing AS saved "
                + "JOIN listing ON listing.id = saved.listing_id WHERE saved.user_id = "
        )
        query.append(query.bind(userID))
        if let cursor {
            let t = query.bind(cursor.t)
            query.append(
                " AND saved.saved_at <= \(t) AND (saved.saved_at < \(t) OR "
                    + "(saved.saved_at = \(t) AND saved.listing_id < \(query.bind(cursor.i))))"
            )
        }
        query.append(" ORDER BY saved.saved_at DESC, saved.listing_id DESC LIMIT \(query.bind(page.size + 1))")
        let fetched = try await storage.read { db in
            var saved: [SavedListing] = []
            for try await row in try await db.run(query.query, storage) {
                let listing = try ListingsRows.listing(row)
                let savedAt = try row.makeRandomAccess()[19].decode(Int64.self)
                saved.append(SavedListing(listing: listing, savedAt: Date(millisecondsSince1970: savedAt)))
            }
            return saved
        }
        return ListingsPaging.savedPage(fetched, size: page.size, userID: userID)
    }

    public func savers(listingID: String) async throws -> [String] {
        try await storage.read { db in
            var users: [String] = []
            for try await user in try await db.run(
                "SELECT user_id FROM saved_listing WHERE listing_id = \(listingID) ORDER BY user_id",
                storage
            ).decode(String.self) {
                users.append(user)
            }
            return users
        }
    }

    // MARK: Change events

    public func changes(forUser userID: String, after sequence: Int64, limit: Int) async throws -> [ListingChangeEvent]
    {
        try await storage.read { db in
            try await ListingChangeRows.events(
                db.run(
                    """
                    SELECT c.sequence, c.listing_id, c.title, c.kind, c.new_price_cents, c.old_price_cents, c.changed_at
                    FROM listing_change AS c
                    JOIN saved_listing AS s ON s.listing_id = c.listing_id AND s.user_id = \(userID)
                    WHERE c.sequence > \(sequence)
                    ORDER BY c.sequence
                    LIMIT \(max(limit, 0))
                    """,
                    storage
                )
            )
        }
    }

    public func change(sequence: Int64) async throws -> ListingChangeEvent? {
        try await storage.read { db in
            try await ListingChangeRows.events(
                db.run(
                    "SELECT \(unescaped: ListingChangeRows.columns) FROM listing_change WHERE sequence = \(sequence)",
                    storage
                )
            ).first
        }
    }

    public func changes(since date: Date, limit: Int) async throws -> [ListingChangeEvent] {
        try await storage.read { db in
            try await ListingChangeRows.events(
                db.run(
                    """
                    SELECT \(unescaped: ListingChangeRows.columns) FROM listing_change
                    WHERE changed_at >= \(date.millisecondsSince1970)
                    ORDER BY sequence
                    LIMIT \(max(limit, 0))
                    """,
                    storage
                )
            )
        }
    }

    public func pruneChanges(before date: Date) async throws -> Int {
        try await storage.deleteInBatches { limit in
            """
            WITH deleted AS (
                DELETE FROM listing_change WHERE sequence IN
                    (SELECT sequence FROM listing_change WHERE changed_at < \(date.millisecondsSince1970) LIMIT \(limit))
                RETURNING 1
            )
            SELECT count(*) FROM deleted
            """
        }
    }

    // MARK: Shared steps

    /// The listing with this id, in this transaction.
    func listing(_ db: PostgresConnection, id: String) async throws -> Listing? {
        try await ListingsRows.listings(
            db.run("SELECT \(unescaped: ListingsRows.columns) FROM listing WHERE listing.id = \(id)", storage)
        ).first
    }

    /// The uploader of each image in `ids` that exists, by image id.
    func imageOwners(_ db: PostgresConnection, _ ids: [String]) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        var owners: [String: String] = [:]
        for try await (id, owner) in try await db.run(
            "SELECT id, owner_id FROM listing_image WHERE id = ANY(\(ids)::text[])",
            storage
        ).decode((String, String).self) {
            owners[id] = owner
        }
        return owners
    }

    /// Numbers and records a change event.
    func record(_ db: PostgresConnection, _ draft: ListingChangeDraft) async throws -> ListingChangeEvent {
        for try await sequence in try await db.run(ListingChangeRows.insert(draft), storage).decode(Int64.self) {
            return draft.numbered(sequence)
        }
        throw PostgresStorageError("the listing change log has no head row (listing_change_head)")
    }

    /// What a listing creation run again after a conflict takes first: SHARE ROW EXCLUSIVE on `listing`
    /// conflicts with itself and with the ROW EXCLUSIVE lock every write of the table takes.
    static let creationLock = PostgresStorage.RetryLock(table: "listing", mode: "SHARE ROW EXCLUSIVE")

    /// A write that may record change events: run again after a conflict, it first locks out the other
    /// event writers, so that it cannot lose to them on every attempt.
    func eventWrite<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await storage.write(lockingOnRetry: .init(table: "listing_change_head", mode: "EXCLUSIVE"), body)
    }
}

extension PostgresStorage {
    /// The Listings service's store on this database.
    ///
    /// Listings posted with only a ZIP code are placed for distance search at their ZIP's centroid in
    /// the bundled table; run ``fillListingsSearchPoints(centroids:)`` once at start so that listings
    /// written with another version of the table are placed by this one.
    public func listingsStore() -> PostgresListingsStore {
        PostgresListingsStore(storage: self)
    }
}
