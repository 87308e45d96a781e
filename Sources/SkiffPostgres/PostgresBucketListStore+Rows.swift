import Foundation
import PostgresNIO
import SkiffBucketList
import SkiffDomain

// How the BucketList values map to rows (see `PostgresSchema.bucketListMigrations`). Internal: no
// PostgreSQL type crosses the `BucketListStore` protocol. Instants are bigint milliseconds since 1970.

enum PostgresBucketListRows {
    // MARK: Activities

    /// The columns of `activity a` that ``activity(_:from:)`` decodes, in its order.
    static let activityColumns = """
        a.id, a.owner_id, a.title, a.description, a.place_name, a.latitude, a.longitude, a.starts_at, \
        a.image_id, a.tags, a.up_votes, a.down_votes, a.comment_count, a.created_at, a.updated_at
        """
    /// How many columns ``activityColumns`` holds.
    static let activityColumnCount = 15

    /// The activity whose ``activityColumns`` start at column `start` of `row`.
    static func activity(_ row: PostgresRandomAccessRow, from start: Int = 0) throws -> Activity {
        let startsAt = try row[start + 7].decode(Int64?.self)
        return Activity(
            id: try row[start].decode(String.self),
            ownerID: try row[start + 1].decode(String.self),
            fields: ActivityFields(
                title: try row[start + 2].decode(String.self),
                description: try row[start + 3].decode(String.self),
                place: Place(
                    name: try row[start + 4].decode(String.self),
                    point: Coordinate(
                        latitude: try row[start + 5].decode(Double.self),
                        longitude: try row[start + 6].decode(Double.self)
                    )
                ),
                startsAt: startsAt.map(Date.init(millisecondsSince1970:)),
                imageID: try row[start + 8].decode(String?.self),
                tags: try row[start + 9].decode([String].self)
            ),
            upVotes: try row[start + 10].decode(Int.self),
            downVotes: try row[start + 11].decode(Int.self),
            commentCount: try row[start + 12].decode(Int.self),
            createdAt: Date(millisecondsSince1970: try row[start + 13].decode(Int64.self)),
            updatedAt: Date(millisecondsSince1970: try row[start + 14].decode(Int64.self))
        )
    }

    /// Every activity of `rows` (rows that start with ``activityColumns``).
    static func activities(_ rows: PostgresRowSequence) async throws -> [Activity] {
        var activities: [Activity] = []
        for try await row in rows { activities.append(try activity(row.makeRandomAccess())) }
        return activities
    }

    static func insert(_ activity: Activity) -> PostgresQuery {
        let fields = activity.fields
        return """
            INSERT INTO activity (id, owner_id, title, description, place_name, latitude, longitude, starts_at,
                image_id, tags, up_votes, down_votes, comment_count, created_at, updated_at)
            VALUES (\(activity.id), \(activity.ownerID), \(fields.title), \(fields.description), \(fields.place.name),
                \(fields.place.point.latitude), \(fields.place.point.longitude),
                \(fields.startsAt?.millisecondsSince1970), \(fields.imageID), \(fields.tags)::text[],
                \(activity.upVotes), \(activity.downVotes), \(activity.commentCount),
                \(activity.createdAt.millisecondsSince1970), \(activity.updatedAt.millisecondsSince1970))
            """
    }

    /// Saves the fields an owner may change (not the counts, kept by votes and comments).
    static func updateFields(_ activity: Activity) -> PostgresQuery {
        let fields = activity.fields
        return """
            UPDATE activity SET title = \(fields.title), description = \(fields.description),
                place_name = \(fields.place.name), latitude = \(fields.place.point.latitude),
                longitude = \(fields.place.point.longitude), starts_at = \(fields.startsAt?.millisecondsSince1970),
                image_id = \(fields.imageID), tags = \(fields.tags)::text[],
                updated_at = \(activity.updatedAt.millisecondsSince1970)
            WHERE id = \(activity.id)
            """
    }

    // MARK: Comments

    /// The columns ``comments(_:)`` decodes, in its order.
    static let commentColumns = "id, activity_id, author_id, text, created_at"

    static func comments(_ rows: PostgresRowSequence) async throws -> [SkiffBucketList.Comment] {
        var comments: [SkiffBucketList.Comment] = []
        for try await (id, activityID, authorID, text, createdAt) in rows.decode(
            (String, String, String, String, Int64).self
        ) {
            comments.append(
                SkiffBucketList.Comment(
                    id: id,
                    activityID: activityID,
                    authorID: authorID,
                    text: text,
                    createdAt: Date(millisecondsSince1970: createdAt)
                )
            )
        }
        return comments
    }

    // MARK: Bucket lists

    /// Selects lists (`l`) with their entry counts, in the order ``lists(_:)`` decodes; append
    /// conditions on `l` after `WHERE`.
    static let selectLists = """
        SELECT l.id, l.owner_id, l.name, l.description, l.visibility, l.created_at, l.updated_at,
            (SELECT count(*) FROM bucket_list_entry e WHERE e.list_id = l.id AND e.completed_at IS NULL),
            (SELECT count(*) FROM bucket_list_entry e WHERE e.list_id = l.id AND e.completed_at IS NOT NULL)
        FROM bucket_list l
        """

    static func lists(_ rows: PostgresRowSequence) async throws -> [BucketList] {
        var lists: [BucketList] = []
        for try await (id, ownerID, name, description, visibility, createdAt, updatedAt, pending, completed)
            in rows.decode((String, String, String, String, String, Int64, Int64, Int, Int).self)
        {
            lists.append(
                BucketList(
                    id: id,
                    ownerID: ownerID,
                    fields: BucketListFields(
                        name: name,
                        description: description,
                        visibility: Visibility(rawValue: visibility) ?? .private
                    ),
                    pendingCount: pending,
                    completedCount: completed,
                    createdAt: Date(millisecondsSince1970: createdAt),
                    updatedAt: Date(millisecondsSince1970: updatedAt)
                )
            )
        }
        return lists
    }

    // MARK: Entries

    /// Selects entries (`e`) with their activities (`a`), in the order ``entries(_:)`` decodes; append
    /// conditions after `WHERE`.
    static let selectEntries = """
        SELECT e.list_id, e.position, e.added_at, e.completed_at, e.note, \(activityColumns)
        FROM bucket_list_entry e JOIN activity a ON a.id = e.activity_id
        """

    /// The entries of `rows` with their positions.
    static func entries(_ rows: PostgresRowSequence) async throws -> [(position: Int64, entry: BucketListEntry)] {
        var entries: [(position: Int64, entry: BucketListEntry)] = []
        for try await row in rows {
            let row = row.makeRandomAccess()
            let completedAt = try row[3].decode(Int64?.self)
            let note = try row[4].decode(String.self)
            entries.append(
                (
                    try row[1].decode(Int64.self),
                    BucketListEntry(
                        listID: try row[0].decode(String.self),
                        activity: try activity(row, from: 5),
                        addedAt: Date(millisecondsSince1970: try row[2].decode(Int64.self)),
                        completion: completedAt.map {
                            Completion(completedAt: Date(millisecondsSince1970: $0), note: note)
                        }
                    )
                )
            )
        }
        return entries
    }
}
