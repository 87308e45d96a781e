import Foundation
import PostgresNIO
import SkiffDomain
import SkiffLostFound

// How the LostFound values map to rows (see `PostgresSchema.lostFoundMigrations`). Internal: no PostgreSQL
// type crosses the `LostFoundStore` protocol. Instants are bigint milliseconds since 1970.

/// The keyword columns of an item: the tokens the other stores match (``SkiffDomain/TextSearch``) and the
/// GIN index keys made from them, so that keyword search and a report's "shares a keyword" run on the index
/// and decide exactly as `LostFoundSearchEngine` and `LostFoundIndex` do.
///
/// Keys are plain text: a token is its own key (the exact key); a token's first ``prefixLength`` prefixes
/// (Unicode scalars), each followed by `*`, are its prefix keys. Tokens hold only letters and numbers, so
/// the two forms never collide. A token longer than ``exactLength`` UTF-8 bytes (too long for a comfortable
/// index key) gets the exact key `first 32 scalars + "~"` instead; a term that long, or a last term longer
/// than ``prefixLength``, finds a superset through the index that SQL checks again against `search_tokens`.
enum PostgresLostFoundSearchKeys {
    /// The most scalars of a token that get prefix keys.
    static let prefixLength = 32
    /// The longest token, in UTF-8 bytes, that is its own key.
    static let exactLength = 256

    /// The distinct tokens of an item's title and description, sorted.
    static func tokens(_ fields: LostFoundItemFields) -> [String] {
        Set(TextSearch.tokens(fields.title) + TextSearch.tokens(fields.description)).sorted()
    }

    /// The index keys of an item with these tokens, sorted.
    static func keys(tokens: [String]) -> [String] {
        var keys: Set<String> = []
        for token in tokens {
            keys.insert(exactKey(token))
            var prefix = String.UnicodeScalarView()
            for scalar in token.unicodeScalars.prefix(prefixLength) {
                prefix.append(scalar)
                keys.insert(String(prefix) + "*")
            }
        }
        return keys.sorted()
    }

    /// The key an item has when one of its tokens is `term`.
    static func exactKey(_ term: String) -> String {
        isLong(term) ? String(String.UnicodeScalarView(term.unicodeScalars.prefix(prefixLength))) + "~" : term
    }

    /// The key an item has when one of its tokens starts with `term`.
    static func prefixKey(_ term: String) -> String {
        String(String.UnicodeScalarView(term.unicodeScalars.prefix(prefixLength))) + "*"
    }

    /// Whether `term` is too long for its exact key to decide alone.
    static func isLong(_ term: String) -> Bool { term.utf8.count > exactLength }

    /// Whether a last term is too long for its prefix key to decide alone.
    static func isLongPrefix(_ term: String) -> Bool { term.unicodeScalars.count > prefixLength }
}

enum PostgresLostFoundItemRows {
    /// The columns ``item(_:at:)`` decodes, in its order, each qualified by `table` (`i.id`, …).
    static func columns(_ table: String) -> String {
        [
            "id", "reporter_id", "kind", "status", "title", "description", "category", "building", "latitude",
            "longitude", "occurred_at", "contact_instructions", "image_id", "created_at", "updated_at",
            "returned_at",
        ].map { "\(table).\($0)" }.joined(separator: ", ")
    }

    /// How many columns ``columns(_:)`` lists: extra columns of a query come after them.
    static let columnCount = 16

    /// The item in a row's first ``columnCount`` columns.
    static func item(_ row: PostgresRandomAccessRow) throws -> LostFoundItem {
        let latitude = try row[8].decode(Double?.self)
        let longitude = try row[9].decode(Double?.self)
        let point = latitude.flatMap { latitude in longitude.map { LostFoundPoint(latitude: latitude, longitude: $0) } }
        let fields = LostFoundItemFields(
            title: try row[4].decode(String.self),
            description: try row[5].decode(String.self),
            category: LostFoundCategory(rawValue: try row[6].decode(String.self)) ?? .other,
            building: try row[7].decode(String.self),
            point: point,
            occurredAt: Date(millisecondsSince1970: try row[10].decode(Int64.self)),
            contactInstructions: try row[11].decode(String.self),
            imageID: try row[12].decode(String?.self)
        )
        let kind = LostFoundKind(rawValue: try row[2].decode(String.self)) ?? .lost
        return LostFoundItem(
            id: try row[0].decode(String.self),
            reporterID: try row[1].decode(String.self),
            kind: kind,
            fields: fields,
            status: LostFoundStatus(rawValue: try row[3].decode(String.self)) ?? kind.openStatus,
            createdAt: Date(millisecondsSince1970: try row[13].decode(Int64.self)),
            updatedAt: Date(millisecondsSince1970: try row[14].decode(Int64.self)),
            returnedAt: try row[15].decode(Int64?.self).map(Date.init(millisecondsSince1970:))
        )
    }

    /// The items of rows holding only ``columns(_:)``.
    static func items(_ rows: PostgresRowSequence) async throws -> [LostFoundItem] {
        var items: [LostFoundItem] = []
        for try await row in rows { items.append(try item(row.makeRandomAccess())) }
        return items
    }

    /// Inserts `item` unless its id is taken (returning a row only when inserted). A row with its id that
    /// this transaction cannot see (a concurrent insert) aborts it for a serialization failure, so it runs
    /// again and then sees that row.
    static func insert(_ item: LostFoundItem) -> PostgresQuery {
        let fields = item.fields
        let tokens = PostgresLostFoundSearchKeys.tokens(fields)
        return """
            INSERT INTO lost_found_item (id, reporter_id, kind, status, title, description, category, building,
                building_key, latitude, longitude, occurred_at, contact_instructions, image_id, created_at,
                updated_at, returned_at, search_tokens, search_keys)
            VALUES (\(item.id), \(item.reporterID), \(item.kind.rawValue), \(item.status.rawValue), \(fields.title),
                \(fields.description), \(fields.category.rawValue), \(fields.building), \(fields.buildingKey),
                \(fields.point?.latitude), \(fields.point?.longitude), \(fields.occurredAt.millisecondsSince1970),
                \(fields.contactInstructions), \(fields.imageID), \(item.createdAt.millisecondsSince1970),
                \(item.updatedAt.millisecondsSince1970), \(item.returnedAt?.millisecondsSince1970), \(tokens),
                \(PostgresLostFoundSearchKeys.keys(tokens: tokens)))
            ON CONFLICT DO NOTHING
            RETURNING 1
            """
    }

    /// Saves every column of `item` but its id, reporter and kind (which never change).
    static func update(_ item: LostFoundItem) -> PostgresQuery {
        let fields = item.fields
        let tokens = PostgresLostFoundSearchKeys.tokens(fields)
        return """
            UPDATE lost_found_item SET status = \(item.status.rawValue), title = \(fields.title),
                description = \(fields.description), category = \(fields.category.rawValue),
                building = \(fields.building), building_key = \(fields.buildingKey),
                latitude = \(fields.point?.latitude), longitude = \(fields.point?.longitude),
                occurred_at = \(fields.occurredAt.millisecondsSince1970),
                contact_instructions = \(fields.contactInstructions), image_id = \(fields.imageID),
                created_at = \(item.createdAt.millisecondsSince1970), updated_at = \(item.updatedAt.millisecondsSince1970),
                returned_at = \(item.returnedAt?.millisecondsSince1970), search_tokens = \(tokens),
                search_keys = \(PostgresLostFoundSearchKeys.keys(tokens: tokens))
            WHERE id = \(item.id)
            """
    }
}

enum PostgresLostFoundMatchRows {
    /// Records the matches of a report in one statement (a pair recorded again takes the new values, as
    /// on SQLite).
    static func insert(_ matches: [LostFoundMatch]) -> PostgresQuery {
        """
        INSERT INTO lost_found_match (found_item_id, lost_item_id, score, distance_km, matched_at)
        SELECT found_item_id, lost_item_id, score, CASE WHEN has_distance THEN distance_km END, matched_at
        FROM unnest(\(matches.map(\.foundItemID))::text[], \(matches.map(\.lostItemID))::text[],
            \(matches.map(\.score))::float8[], \(matches.map { $0.distanceKm ?? 0 })::float8[],
            \(matches.map { $0.distanceKm != nil })::boolean[], \(matches.map(\.matchedAt.millisecondsSince1970))::bigint[])
            AS m(found_item_id, lost_item_id, score, distance_km, has_distance, matched_at)
        ON CONFLICT (found_item_id, lost_item_id) DO UPDATE
        SET score = excluded.score, distance_km = excluded.distance_km, matched_at = excluded.matched_at
        """
    }

    /// The matches in rows of `found_item_id, lost_item_id, score, distance_km, matched_at`.
    static func matches(_ rows: PostgresRowSequence) async throws -> [LostFoundMatch] {
        var matches: [LostFoundMatch] = []
        for try await (found, lost, score, distance, matchedAt) in rows.decode(
            (String, String, Double, Double?, Int64).self
        ) {
            matches.append(
                LostFoundMatch(
                    foundItemID: found,
                    lostItemID: lost,
                    score: score,
                    distanceKm: distance,
                    matchedAt: Date(millisecondsSince1970: matchedAt)
                )
            )
        }
        return matches
    }
}
