import Foundation
import PostgresNIO
import SkiffDomain
import SkiffListings

// How the Listings values map to rows (see `PostgresSchema.listingsMigrations`). Internal: no PostgreSQL
// type crosses the `ListingsStore` protocol. Instants are bigint milliseconds since 1970.

enum ListingsRows {
    /// The columns ``listing(_:)`` decodes, in its order (a query may select more after them).
    static let columns = """
        listing.id, listing.seller_id, listing.title, listing.description, listing.price_cents, \
        listing.category, listing.condition, listing.size, listing.tags, listing.made_on_campus, \
        listing.bidding_enabled, listing.anonymous, listing.zip_code, listing.latitude, listing.longitude, \
        listing.image_ids, listing.status, listing.created_at, listing.updated_at
        """

    /// The listing in the first ``columns`` of a row.
    static func listing(_ row: PostgresRow) throws -> Listing {
        let (
            id, sellerID, title, description, price, category, condition, size, tags, madeOnCampus, bidding,
            anonymous, zipCode, latitude, longitude, imageIDs, status, createdAt, updatedAt
        ) = try row.decode(
            (
                String, String, String, String, Int64, String, String, String, [String], Bool, Bool, Bool, String,
                Double?, Double?, [String], String, Int64, Int64
            ).self
        )
        let point = latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
        return Listing(
            id: id,
            sellerID: sellerID,
            fields: ListingFields(
                title: title,
                description: description,
                priceCents: price,
                category: ListingCategory(rawValue: category) ?? .other,
                condition: ListingCondition(rawValue: condition) ?? .heavilyUsed,
                size: size,
                tags: tags,
                madeOnCampus: madeOnCampus,
                biddingEnabled: bidding,
                anonymous: anonymous,
                location: ListingLocation(zipCode: zipCode, point: point),
                imageIDs: imageIDs
            ),
            status: ListingStatus(rawValue: status) ?? .withdrawn,
            createdAt: Date(millisecondsSince1970: createdAt),
            updatedAt: Date(millisecondsSince1970: updatedAt)
        )
    }

    static func listings(_ rows: PostgresRowSequence) async throws -> [Listing] {
        var listings: [Listing] = []
        for try await row in rows { listings.append(try listing(row)) }
        return listings
    }

    /// What search reads of a listing besides its fields, computed in Swift by the rules every backend
    /// shares.
    struct SearchColumns {
        var titleKey: String
        var titleWords: [String]
        var descriptionWords: [String]
        var tagWords: [String]
        /// The distinct tokens, each cut to a `tsvector` lexeme's longest (see the schema).
        var lexemes: [String]
        var point: GeoPoint?
        var cell: (latitude: Double, longitude: Double)?

        init(_ fields: ListingFields, centroids: ZipCentroids = .shared) {
            titleKey = SearchText.sortKey(fields.title)
            let tokens = SearchText.DocumentTokens(fields)
            titleWords = tokens.title
            descriptionWords = tokens.description
            tagWords = tokens.tags
            var seen: Set<String> = []
            lexemes = (tokens.title + tokens.tags + tokens.description).map(ListingsRows.lexeme)
                .filter { seen.insert($0).inserted }
            (point, cell) = ListingsRows.searchPoint(fields.location, centroids: centroids)
        }
    }

    /// Where distance search places a listing (``ListingRules/searchPoint(for:centroids:)``) and that
    /// point's grid cell centre (``SkiffDomain/ApproximateLocation/cellCenter(latitude:longitude:)``).
    static func searchPoint(
        _ location: ListingLocation,
        centroids: ZipCentroids
    ) -> (point: GeoPoint?, cell: (latitude: Double, longitude: Double)?) {
        guard let point = ListingRules.searchPoint(for: location, centroids: centroids) else { return (nil, nil) }
        return (point, ApproximateLocation.cellCenter(latitude: point.latitude, longitude: point.longitude))
    }

    /// The longest lexeme a `tsvector` holds, in bytes.
    static let lexemeMaximumBytes = 2047

    /// A token as a lexeme: whole, or its longest prefix of whole scalars within ``lexemeMaximumBytes``.
    static func lexeme(_ token: String) -> String {
        guard token.utf8.count > lexemeMaximumBytes else { return token }
        var bytes = 0
        var scalars = String.UnicodeScalarView()
        for scalar in token.unicodeScalars {
            bytes += String(scalar).utf8.count
            guard bytes <= lexemeMaximumBytes else { break }
            scalars.append(scalar)
        }
        return String(scalars)
    }

    static func insert(_ listing: Listing) -> PostgresQuery {
        let fields = listing.fields
        let search = SearchColumns(fields)
        return """
            INSERT INTO listing (id, seller_id, title, title_key, description, price_cents, category, condition,
                size, tags, made_on_campus, bidding_enabled, anonymous, zip_code, latitude, longitude, image_ids,
                status, created_at, updated_at, title_words, description_words, tag_words, search_words,
                search_latitude, search_longitude, search_cell_latitude, search_cell_longitude)
            VALUES (\(listing.id), \(listing.sellerID), \(fields.title), \(search.titleKey), \(fields.description),
                \(fields.priceCents), \(fields.category.rawValue), \(fields.condition.rawValue), \(fields.size),
                \(fields.tags)::text[], \(fields.madeOnCampus), \(fields.biddingEnabled), \(fields.anonymous),
                \(fields.location.zipCode), \(fields.location.point?.latitude), \(fields.location.point?.longitude),
                \(fields.imageIDs)::text[], \(listing.status.rawValue), \(listing.createdAt.millisecondsSince1970),
                \(listing.updatedAt.millisecondsSince1970), \(search.titleWords)::text[],
                \(search.descriptionWords)::text[], \(search.tagWords)::text[],
                array_to_tsvector(\(search.lexemes)::text[]), \(search.point?.latitude), \(search.point?.longitude),
                \(search.cell?.latitude), \(search.cell?.longitude))
            """
    }

    static func update(_ listing: Listing) -> PostgresQuery {
        let fields = listing.fields
        let search = SearchColumns(fields)
        return """
            UPDATE listing SET seller_id = \(listing.sellerID), title = \(fields.title), title_key = \(search.titleKey),
                description = \(fields.description), price_cents = \(fields.priceCents),
                category = \(fields.category.rawValue), condition = \(fields.condition.rawValue), size = \(fields.size),
                tags = \(fields.tags)::text[], made_on_campus = \(fields.madeOnCampus),
                bidding_enabled = \(fields.biddingEnabled), anonymous = \(fields.anonymous),
                zip_code = \(fields.location.zipCode), latitude = \(fields.location.point?.latitude),
                longitude = \(fields.location.point?.longitude), image_ids = \(fields.imageIDs)::text[],
                status = \(listing.status.rawValue), created_at = \(listing.createdAt.millisecondsSince1970),
                updated_at = \(listing.updatedAt.millisecondsSince1970), title_words = \(search.titleWords)::text[],
                description_words = \(search.descriptionWords)::text[], tag_words = \(search.tagWords)::text[],
                search_words = array_to_tsvector(\(search.lexemes)::text[]),
                search_latitude = \(search.point?.latitude), search_longitude = \(search.point?.longitude),
                search_cell_latitude = \(search.cell?.latitude), search_cell_longitude = \(search.cell?.longitude)
            WHERE id = \(listing.id)
            """
    }
}

enum ListingChangeRows {
    static let columns = "sequence, listing_id, title, kind, new_price_cents, old_price_cents, changed_at"

    /// Numbers a change event with the next sequence (moving `listing_change_head` in this transaction)
    /// and inserts it.
    static func insert(_ draft: ListingChangeDraft) -> PostgresQuery {
        """
        WITH head AS (
            UPDATE listing_change_head SET last_sequence = last_sequence + 1 WHERE id = 1 RETURNING last_sequence
        )
        INSERT INTO listing_change (sequence, listing_id, title, kind, new_price_cents, old_price_cents, changed_at)
        SELECT last_sequence, \(draft.listingID), \(draft.title), \(draft.kind.rawValue), \(draft.newPriceCents),
            \(draft.oldPriceCents), \(draft.changedAt.millisecondsSince1970)
        FROM head
        RETURNING sequence
        """
    }

    static func events(_ rows: PostgresRowSequence) async throws -> [ListingChangeEvent] {
        var events: [ListingChangeEvent] = []
        for try await (sequence, listingID, title, kind, newPrice, oldPrice, changedAt) in rows.decode(
            (Int64, String, String, String, Int64, Int64, Int64).self
        ) {
            events.append(
                ListingChangeEvent(
                    sequence: sequence,
                    listingID: listingID,
                    title: title,
                    kind: ListingChangeKind(rawValue: kind) ?? .updated,
                    newPriceCents: newPrice,
                    oldPriceCents: oldPrice,
                    changedAt: Date(millisecondsSince1970: changedAt)
                )
            )
        }
        return events
    }
}

enum ListingCommentRows {
    static let columns = "id, listing_id, author_id, reply_to_id, text, created_at"

    static func comments(_ rows: PostgresRowSequence) async throws -> [ListingComment] {
        var comments: [ListingComment] = []
        for try await (id, listingID, authorID, replyToID, text, createdAt) in rows.decode(
            (String, String, String, String?, String, Int64).self
        ) {
            comments.append(
                ListingComment(
                    id: id,
                    listingID: listingID,
                    authorID: authorID,
                    replyToID: replyToID,
                    text: text,
                    createdAt: Date(millisecondsSince1970: createdAt)
                )
            )
        }
        return comments
    }
}
