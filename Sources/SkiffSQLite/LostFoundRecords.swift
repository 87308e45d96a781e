import Foundation
import GRDB
import SkiffDomain
import SkiffLostFound

// Rows of the LostFound tables (see `SQLiteSchema+LostFound`, migration "lostfound-v1"). Internal: they never
// cross the `LostFoundStore` protocol. Dates are INTEGER milliseconds since 1970.

enum LostFoundItemRow {
    /// The columns written for an item (all but `docID`).
    static let columns = [
        "id", "reporterID", "kind", "status", "title", "description", "category", "building", "buildingKey",
        "latitude", "longitude", "occurredAt", "contactInstructions", "imageID", "createdAt", "updatedAt",
        "returnedAt", "searchTitle", "searchDescription", "cell",
    ]

    /// The `cell` column of an item ("lostfound-v6"): its point's ``GridCells/key(latitude:longitude:)``, or
    /// `NULL` without a point.
    static func cellKey(_ point: LostFoundPoint?) -> Int64? {
        GridCells.key(latitude: point?.latitude, longitude: point?.longitude)
    }

    static func values(_ item: LostFoundItem) -> [(any DatabaseValueConvertible)?] {
        let fields = item.fields
        return [
            item.id, item.reporterID, item.kind.rawValue, item.status.rawValue, fields.title, fields.description,
            fields.category.rawValue, fields.building, fields.buildingKey, fields.point?.latitude,
            fields.point?.longitude, fields.occurredAt.millisecondsSince1970, fields.contactInstructions,
            fields.imageID, item.createdAt.millisecondsSince1970, item.updatedAt.millisecondsSince1970,
            item.returnedAt?.millisecondsSince1970, TextSearch.indexText(fields.title),
            TextSearch.indexText(fields.description), cellKey(fields.point),
        ]
    }

    static func insert(_ db: Database, _ item: LostFoundItem) throws {
        try db.execute(
            sql: """
                INSERT INTO lostFoundItem (\(columns.joined(separator: ", "))) \
                VALUES (\(databaseQuestionMarks(count: columns.count)))
                """,
            arguments: StatementArguments(values(item))
        )
        try LostFoundMatchKeyRow.insert(db, item, docID: db.lastInsertedRowID)
    }

    static func update(_ db: Database, _ item: LostFoundItem) throws {
        let assignments = columns.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")
        let arguments = StatementArguments(Array(values(item).dropFirst()) + [item.id])
        guard
            let docID = try Int64.fetchOne(
                db,
                sql: "UPDATE lostFoundItem SET \(assignments) WHERE id = ? RETURNING docID",
                arguments: arguments
            )
        else { return }
        try db.executeCached(sql: "DELETE FROM lostFoundMatchKey WHERE docID = ?", arguments: [docID])
        try LostFoundMatchKeyRow.insert(db, item, docID: docID)
    }

    static func fetchOne(_ db: Database, id: String) throws -> LostFoundItem? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM lostFoundItem WHERE id = ?"), arguments: [id]).map(item)
    }

    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments) throws -> [LostFoundItem] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map(item)
    }

    /// The table's columns in their order ("lostfound-v1", then `cell` from "lostfound-v6"): rows of `SELECT *` or `SELECT i.*, …` hold them at
    /// these positions, which ``item(_:)`` reads (by position: finding a column by name costs more than
    /// decoding it, on the hundreds of candidate rows a report reads). A test checks the order.
    static let tableColumns = [
        "docID", "id", "reporterID", "kind", "status", "title", "description", "category", "building", "buildingKey",
        "latitude", "longitude", "occurredAt", "contactInstructions", "imageID", "createdAt", "updatedAt",
        "returnedAt", "searchTitle", "searchDescription", "cell",
    ]

    /// The item in a row whose first columns are ``tableColumns``.
    static func item(_ row: Row) -> LostFoundItem {
        let latitude: Double? = row[10]
        let longitude: Double? = row[11]
        let point = latitude.flatMap { lat in longitude.map { LostFoundPoint(latitude: lat, longitude: $0) } }
        let returnedAt: Int64? = row[17]
        let fields = LostFoundItemFields(
            title: row[5],
            description: row[6],
            category: LostFoundCategory(rawValue: row[7]) ?? .other,
            building: row[8],
            point: point,
            occurredAt: Date(millisecondsSince1970: row[12]),
            contactInstructions: row[13],
            imageID: row[14]
        )
        let kind = LostFoundKind(rawValue: row[3]) ?? .lost
        return LostFoundItem(
            id: row[1],
            reporterID: row[2],
            kind: kind,
            fields: fields,
            status: LostFoundStatus(rawValue: row[4]) ?? kind.openStatus,
            createdAt: Date(millisecondsSince1970: row[15]),
            updatedAt: Date(millisecondsSince1970: row[16]),
            returnedAt: returnedAt.map { Date(millisecondsSince1970: $0) }
        )
    }
}

/// The rows of `lostFoundMatchKey` ("lostfound-v5"): one per keyword of an open item, which reports walk for
/// their candidates. Written with the item, rewritten when it changes, gone once it is returned.
enum LostFoundMatchKeyRow {
    static func insert(_ db: Database, _ item: LostFoundItem, docID: Int64) throws {
        guard item.status == item.kind.openStatus else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO lostFoundMatchKey (kind, category, keyword, occurredAt, id, docID)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        )
        let occurred = item.occurredAt.millisecondsSince1970
        for keyword in LostFoundMatcher.keywords(item.fields) {
            try statement.execute(arguments: [
                item.kind.rawValue, item.category.rawValue, keyword, occurred, item.id, docID,
            ])
        }
    }
}

enum LostFoundMatchRow {
    static func insert(_ db: Database, _ match: LostFoundMatch) throws {
        try db.executeCached(
            sql: """
                INSERT INTO lostFoundMatch (foundItemID, lostItemID, score, distanceKm, matchedAt)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (foundItemID, lostItemID) DO UPDATE SET
                    score = excluded.score, distanceKm = excluded.distanceKm, matchedAt = excluded.matchedAt
                """,
            arguments: [
                match.foundItemID, match.lostItemID, match.score, match.distanceKm,
                match.matchedAt.millisecondsSince1970,
            ]
        )
    }
}
