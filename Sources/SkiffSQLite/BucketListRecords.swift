import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain

// Rows of the BucketList tables (see `SQLiteSchema+BucketList`, migration "bucketlist-v1"). Internal: they
// never cross the `BucketListStore` protocol. Dates are INTEGER milliseconds since 1970; tags are a JSON
// array of strings.

enum ActivityRow {
    static func insert(_ db: Database, _ activity: Activity) throws {
        let fields = activity.fields
        try db.executeCached(
            sql: """
                INSERT INTO activity (id, ownerID, title, description, placeName, latitude, longitude, startsAt,
                    imageID, tags, upVotes, downVotes, commentCount, createdAt, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?)
                """,
            arguments: [
                activity.id, activity.ownerID, fields.title, fields.description, fields.place.name,
                fields.place.point.latitude, fields.place.point.longitude, fields.startsAt?.millisecondsSince1970,
                fields.imageID, json(fields.tags), activity.createdAt.millisecondsSince1970,
                activity.updatedAt.millisecondsSince1970,
            ]
        )
    }

    static func updateFields(_ db: Database, _ activity: Activity) throws {
        let fields = activity.fields
        try db.executeCached(
            sql: """
                UPDATE activity SET title = ?, description = ?, placeName = ?, latitude = ?, longitude = ?,
                    startsAt = ?, imageID = ?, tags = ?, updatedAt = ?
                WHERE id = ?
                """,
            arguments: [
                fields.title, fields.description, fields.place.name, fields.place.point.latitude,
                fields.place.point.longitude, fields.startsAt?.millisecondsSince1970, fields.imageID,
                json(fields.tags), activity.updatedAt.millisecondsSince1970, activity.id,
            ]
        )
    }

    static func fetchOne(_ db: Database, id: String) throws -> Activity? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM activity WHERE id = ?"), arguments: [id]).map(activity)
    }

    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Activity] {
        activities(try Row.fetchAll(db, sql: sql, arguments: arguments))
    }

    /// An activity from a row holding the `activity` columns (possibly joined with others).
    static func activity(_ row: Row) -> Activity {
        activity(row, Layout(row))
    }

    /// Where a statement's rows hold the `activity` columns, found once per statement (GRDB's lookup by
    /// name folds case on every access).
    struct Layout {
        let id, ownerID, title, description, placeName, latitude, longitude, startsAt, imageID, tags: Int
        let upVotes, downVotes, commentCount, createdAt, updatedAt: Int

        init(_ row: Row) {
            let at = ColumnPositions(row).at
            (id, ownerID, title, description) = (at("id"), at("ownerID"), at("title"), at("description"))
            (placeName, latitude, longitude) = (at("placeName"), at("latitude"), at("longitude"))
            (startsAt, imageID, tags) = (at("startsAt"), at("imageID"), at("tags"))
            (upVotes, downVotes, commentCount) = (at("upVotes"), at("downVotes"), at("commentCount"))
            (createdAt, updatedAt) = (at("createdAt"), at("updatedAt"))
        }
    }

    /// An activity from a row laid out as `layout` says.
    static func activity(_ row: Row, _ layout: Layout) -> Activity {
        let startsAt: Int64? = row[layout.startsAt]
        return Activity(
            id: row[layout.id],
            ownerID: row[layout.ownerID],
            fields: ActivityFields(
                title: row[layout.title],
                description: row[layout.description],
                place: Place(
                    name: row[layout.placeName],
                    point: Coordinate(latitude: row[layout.latitude], longitude: row[layout.longitude])
                ),
                startsAt: startsAt.map(Date.init(millisecondsSince1970:)),
                imageID: row[layout.imageID],
                tags: strings(row[layout.tags])
            ),
            upVotes: row[layout.upVotes],
            downVotes: row[layout.downVotes],
            commentCount: row[layout.commentCount],
            createdAt: Date(millisecondsSince1970: row[layout.createdAt]),
            updatedAt: Date(millisecondsSince1970: row[layout.updatedAt])
        )
    }

    /// Every activity of a fetch, decoded with one layout.
    static func activities(_ rows: [Row]) -> [Activity] {
        guard let first = rows.first else { return [] }
        let layout = Layout(first)
        return rows.map { activity($0, layout) }
    }

    private static func json(_ strings: [String]) -> String {
        StringListColumn.text(strings)
    }

    private static func strings(_ text: String) -> [String] {
        StringListColumn.strings(text)
    }
}

enum CommentRow {
    static func comment(_ row: Row) -> Comment {
        Comment(
            id: row["id"],
            activityID: row["activityID"],
            authorID: row["authorID"],
            text: row["text"],
            createdAt: Date(millisecondsSince1970: row["createdAt"])
        )
    }
}

enum BucketListRow {
    /// Selects a list with its counts; append `WHERE …` conditions on `l`.
    static let select = """
        SELECT l.*,
            (SELECT COUNT(*) FROM bucketListEntry e WHERE e.listID = l.id AND e.completedAt IS NULL) AS pendingCount,
            (SELECT COUNT(*) FROM bucketListEntry e WHERE e.listID = l.id AND e.completedAt IS NOT NULL)
                AS completedCount
        FROM bucketList l
        """

    static func fetchOne(_ db: Database, id: String) throws -> BucketList? {
        try Row.fetchOne(db, sql: select + " WHERE l.id = ?", arguments: [id]).map(list)
    }

    static func list(_ row: Row) -> BucketList {
        BucketList(
            id: row["id"],
            ownerID: row["ownerID"],
            fields: BucketListFields(
                name: row["name"],
                description: row["description"],
                visibility: Visibility(rawValue: row["visibility"]) ?? .private
            ),
            pendingCount: row["pendingCount"],
            completedCount: row["completedCount"],
            createdAt: Date(millisecondsSince1970: row["createdAt"]),
            updatedAt: Date(millisecondsSince1970: row["updatedAt"])
        )
    }
}

enum EntryRow {
    /// Selects entries joined with their activities; append `WHERE …` conditions on `e`.
    static let select = """
        SELECT e.listID, e.addedAt, e.completedAt, e.note, e.position, a.*
        FROM bucketListEntry e JOIN activity a ON a.id = e.activityID
        """

    static func fetchOne(_ db: Database, listID: String, activityID: String) throws -> BucketListEntry? {
        try Row.fetchOne(db, sql: select + " WHERE e.listID = ? AND e.activityID = ?", arguments: [listID, activityID])
            .map(entry)
    }

    static func entry(_ row: Row) -> BucketListEntry {
        let completedAt: Int64? = row["completedAt"]
        return BucketListEntry(
            listID: row["listID"],
            activity: ActivityRow.activity(row),
            addedAt: Date(millisecondsSince1970: row["addedAt"]),
            completion: completedAt.map { Completion(completedAt: Date(millisecondsSince1970: $0), note: row["note"]) }
        )
    }
}
