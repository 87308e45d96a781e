import Foundation
import GRDB
import SkiffDomain
import SkiffListings

// Rows of the Listings tables (see `SQLiteSchema+Listings`, migration "listings-v1"). Internal: they never
// cross the `ListingsStore` protocol. Dates are INTEGER milliseconds since 1970; tags and image ids are JSON
// arrays of strings. `searchLatitude`/`searchLongitude` ("listings-v5") and their `cell` ("listings-v6") are written with every listing and
// read by search SQL only: a `Listing` has no such field, its search point follows from its location
// (`ListingRules.searchPoint`).

enum ListingRow {
    /// The columns written for a listing (all but `docID`).
    static let columns = [
        "id", "sellerID", "title", "titleKey", "description", "priceCents", "category", "condition", "size", "tags",
        "madeOnCampus", "biddingEnabled", "anonymous", "zipCode", "latitude", "longitude", "imageIDs", "status",
        "createdAt", "updatedAt", "searchTitle", "searchDescription", "searchTags", "searchLatitude",
        "searchLongitude", "cell",
    ]

    static func values(_ listing: Listing) -> [(any DatabaseValueConvertible)?] {
        let fields = listing.fields
        // Where distance search places the listing (its point, or its zip code's centroid): "listings-v5".
        let searchPoint = ListingRules.searchPoint(for: fields.location)
        return [
            listing.id, listing.sellerID, fields.title, SearchText.sortKey(fields.title), fields.description,
            fields.priceCents, fields.category.rawValue, fields.condition.rawValue, fields.size, json(fields.tags),
            fields.madeOnCampus, fields.biddingEnabled, fields.anonymous, fields.location.zipCode,
            fields.location.point?.latitude, fields.location.point?.longitude, json(fields.imageIDs),
            listing.status.rawValue, listing.createdAt.millisecondsSince1970, listing.updatedAt.millisecondsSince1970,
            SearchText.indexText(fields.title), SearchText.indexText(fields.description),
            SearchText.indexText(tags: fields.tags), searchPoint?.latitude, searchPoint?.longitude,
            GridCells.key(latitude: searchPoint?.latitude, longitude: searchPoint?.longitude),
        ]
    }

    private static let insertSQL =
        "INSERT INTO listing (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    private static let updateSQL =
        "UPDATE listing SET \(columns.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// Inserts `listing`, given its ``values(_:)`` worked out beforehand (outside the write transaction).
    static func insert(_ db: Database, _ listing: Listing, values: StatementArguments) throws {
        try db.executeCached(sql: insertSQL, arguments: values)
        try replaceTags(db, listing)
    }

    static func update(_ db: Database, _ listing: Listing) throws {
        let arguments = StatementArguments(Array(values(listing).dropFirst()) + [listing.id])
        try db.executeCached(sql: updateSQL, arguments: arguments)
        try replaceTags(db, listing)
    }

    private static func replaceTags(_ db: Database, _ listing: Listing) throws {
        try db.executeCached(sql: "DELETE FROM listingTag WHERE listingID = ?", arguments: [listing.id])
        for tag in listing.tags {
            try db.executeCached(
                sql: "INSERT INTO listingTag (listingID, tag) VALUES (?, ?)",
                arguments: [listing.id, tag]
            )
        }
    }

    static func fetchOne(_ db: Database, id: String) throws -> Listing? {
        try db.fetchOneCached(sql: "SELECT * FROM listing WHERE id = ?", arguments: [id]).map(listing)
    }

    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Listing] {
        let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
        guard let first = rows.first else { return [] }
        let layout = Layout(first)
        return rows.map { listing($0, layout) }
    }

    /// A listing from a row holding the `listing` columns (possibly with others).
    static func listing(_ row: Row) -> Listing {
        listing(row, Layout(row))
    }

    /// Where a statement's rows hold the `listing` columns, found once per statement: GRDB's lookup by name
    /// folds the case of both names on every access, which cost more than the rest of decoding a page.
    struct Layout {
        let id, sellerID, title, description, priceCents, category, condition, size, tags, madeOnCampus: Int
        let biddingEnabled, anonymous, zipCode, latitude, longitude, imageIDs, status, createdAt, updatedAt: Int

        init(_ row: Row) {
            let at = ColumnPositions(row).at
            (id, sellerID, title, description) = (at("id"), at("sellerID"), at("title"), at("description"))
            (priceCents, category, condition, size) = (at("priceCents"), at("category"), at("condition"), at("size"))
            (tags, madeOnCampus, biddingEnabled) = (at("tags"), at("madeOnCampus"), at("biddingEnabled"))
            (anonymous, zipCode, latitude, longitude) = (
                at("anonymous"), at("zipCode"), at("latitude"), at("longitude")
            )
            (imageIDs, status, createdAt, updatedAt) = (at("imageIDs"), at("status"), at("createdAt"), at("updatedAt"))
        }
    }

    /// A listing from a row laid out as `layout` says.
    static func listing(_ row: Row, _ layout: Layout) -> Listing {
        let latitude: Double? = row[layout.latitude]
        let longitude: Double? = row[layout.longitude]
        let point = latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
        let fields = ListingFields(
            title: row[layout.title],
            description: row[layout.description],
            priceCents: row[layout.priceCents],
            category: ListingCategory(rawValue: row[layout.category]) ?? .other,
            condition: ListingCondition(rawValue: row[layout.condition]) ?? .heavilyUsed,
            size: row[layout.size],
            tags: strings(row[layout.tags]),
            madeOnCampus: row[layout.madeOnCampus],
            biddingEnabled: row[layout.biddingEnabled],
            anonymous: row[layout.anonymous],
            location: ListingLocation(zipCode: row[layout.zipCode], point: point),
            imageIDs: strings(row[layout.imageIDs])
        )
        return Listing(
            id: row[layout.id],
            sellerID: row[layout.sellerID],
            fields: fields,
            status: ListingStatus(rawValue: row[layout.status]) ?? .withdrawn,
            createdAt: Date(millisecondsSince1970: row[layout.createdAt]),
            updatedAt: Date(millisecondsSince1970: row[layout.updatedAt])
        )
    }

    private static func json(_ strings: [String]) -> String {
        StringListColumn.text(strings)
    }

    private static func strings(_ text: String) -> [String] {
        StringListColumn.strings(text)
    }
}

enum ListingChangeRow {
    /// Numbers and inserts a change event: its sequence is the row id.
    static func insert(_ db: Database, _ draft: ListingChangeDraft) throws -> ListingChangeEvent {
        try db.executeCached(
            sql: """
                INSERT INTO listingChange (listingID, title, kind, newPriceCents, oldPriceCents, changedAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                draft.listingID, draft.title, draft.kind.rawValue, draft.newPriceCents, draft.oldPriceCents,
                draft.changedAt.millisecondsSince1970,
            ]
        )
        return draft.numbered(db.lastInsertedRowID)
    }

    static func event(_ row: Row) -> ListingChangeEvent {
        ListingChangeEvent(
            sequence: row["sequence"],
            listingID: row["listingID"],
            title: row["title"],
            kind: ListingChangeKind(rawValue: row["kind"]) ?? .updated,
            newPriceCents: row["newPriceCents"],
            oldPriceCents: row["oldPriceCents"],
            changedAt: Date(millisecondsSince1970: row["changedAt"])
        )
    }
}

enum ImageRow {
    static func image(_ row: Row) -> StoredImage {
        StoredImage(
            id: row["id"],
            ownerID: row["ownerID"],
            contentType: ImageContentType(rawValue: row["contentType"]) ?? .jpeg,
            bytes: row["bytes"],
            createdAt: Date(millisecondsSince1970: row["createdAt"])
        )
    }

    /// The uploader of each image in `ids` that exists, by image id.
    static func owners(_ db: Database, _ ids: [String]) throws -> [String: String] {
        var owners: [String: String] = [:]
        for id in ids {
            owners[id] = try db.fetchOneCached(sql: "SELECT ownerID FROM image WHERE id = ?", arguments: [id])?[0]
        }
        return owners
    }
}
