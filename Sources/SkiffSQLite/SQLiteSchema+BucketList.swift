import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain

extension SQLiteSchema {
    // MARK: BucketList

    static func registerBucketListMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit; append "bucketlist-v2" instead. Dates are INTEGER milliseconds
        // since 1970; tags are a JSON array of strings. Vote and comment counts are kept on `activity` in the
        // transaction of each vote or comment, so they always equal the rows of `activityVote` and
        // `activityComment`. Deleting an activity or a list cascades to its votes, comments and entries.
        migrator.registerMigration("bucketlist-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE activity (
                        id TEXT NOT NULL PRIMARY KEY,
                        ownerID TEXT NOT NULL,
                        title TEXT NOT NULL,
                        description TEXT NOT NULL,
                        placeName TEXT NOT NULL,
                        latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
                        longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
                        startsAt INTEGER,
                        imageID TEXT,
                        tags TEXT NOT NULL,
                        upVotes INTEGER NOT NULL DEFAULT 0 CHECK (upVotes >= 0),
                        downVotes INTEGER NOT NULL DEFAULT 0 CHECK (downVotes >= 0),
                        commentCount INTEGER NOT NULL DEFAULT 0 CHECK (commentCount >= 0),
                        createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX activity_latitude_longitude ON activity(latitude, longitude);
                    CREATE INDEX activity_ownerID ON activity(ownerID);

                    CREATE TABLE activityVote (
                        activityID TEXT NOT NULL REFERENCES activity(id) ON DELETE CASCADE,
                        userID TEXT NOT NULL,
                        value INTEGER NOT NULL CHECK (value IN (-1, 1)),
                        castAt INTEGER NOT NULL,
                        PRIMARY KEY (activityID, userID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX activityVote_castAt ON activityVote(castAt);
                    CREATE INDEX activityVote_userID_activityID ON activityVote(userID, activityID);

                    CREATE TABLE activityComment (
                        id TEXT NOT NULL PRIMARY KEY,
                        activityID TEXT NOT NULL REFERENCES activity(id) ON DELETE CASCADE,
                        authorID TEXT NOT NULL,
                        text TEXT NOT NULL,
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX activityComment_activityID_createdAt_id
                        ON activityComment(activityID, createdAt, id);

                    CREATE TABLE bucketList (
                        id TEXT NOT NULL PRIMARY KEY,
                        ownerID TEXT NOT NULL,
                        name TEXT NOT NULL,
                        nameKey TEXT NOT NULL,
                        description TEXT NOT NULL,
                        visibility TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
                        createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL,
                        UNIQUE (ownerID, nameKey)
                    ) STRICT;
                    CREATE INDEX bucketList_ownerID_createdAt_id ON bucketList(ownerID, createdAt, id);

                    CREATE TABLE bucketListEntry (
                        listID TEXT NOT NULL REFERENCES bucketList(id) ON DELETE CASCADE,
                        activityID TEXT NOT NULL REFERENCES activity(id) ON DELETE CASCADE,
                        addedAt INTEGER NOT NULL,
                        completedAt INTEGER,
                        note TEXT NOT NULL DEFAULT '',
                        PRIMARY KEY (listID, activityID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX bucketListEntry_listID_addedAt_activityID
                        ON bucketListEntry(listID, addedAt, activityID);
                    CREATE INDEX bucketListEntry_activityID ON bucketListEntry(activityID);

                    CREATE TABLE userFollow (
                        followerID TEXT NOT NULL,
                        followeeID TEXT NOT NULL,
                        followedAt INTEGER NOT NULL,
                        PRIMARY KEY (followerID, followeeID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX userFollow_followerID_followedAt ON userFollow(followerID, followedAt, followeeID);
                    CREATE INDEX userFollow_followeeID_followedAt ON userFollow(followeeID, followedAt, followerID);
                    """
            )
        }
    }

    /// "bucketlist-v2": each activity's trending bound (``SkiffBucketList/TrendingScore/raisedBound(_:upVoteAt:)``,
    /// raised on every up-vote), indexed, so that trending walks activities by it instead of reading every
    /// vote; computed here for the votes already cast.
    static func registerBucketListTrendBoundMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("bucketlist-v2") { db in
            try db.execute(
                sql: """
                    ALTER TABLE activity ADD COLUMN trendBound REAL;
                    CREATE INDEX activity_trendBound_id ON activity(trendBound, id);
                    """
            )
            try computeTrendBounds(db)
        }
    }

    /// "bucketlist-v3": nearby and trending walks bounded by the page. `net` (up minus down votes, computed)
    /// with the coordinates indexes nearby by popularity level by level; the trending bound's index carries
    /// the coordinates, so a walk near a point checks the circle's box without reading the table.
    static func registerBucketListWalkIndexesMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("bucketlist-v3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE activity ADD COLUMN net INTEGER GENERATED ALWAYS AS (upVotes - downVotes) VIRTUAL;
                    CREATE INDEX activity_net_latitude_longitude ON activity(net, latitude, longitude);
                    DROP INDEX activity_trendBound_id;
                    CREATE INDEX activity_trendBound_place ON activity(trendBound DESC, id, latitude, longitude);
                    """
            )
        }
    }

    /// "bucketlist-v4": a list's entries in the order they were added (the contract of
    /// ListBucketListEntries), not by time then id, which put entries added in the same millisecond
    /// in id order. `position` grows with every entry added to the list; entries already stored get
    /// their positions from the old order, the best record of it there is.
    static func registerBucketListEntryPositionsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("bucketlist-v4") { db in
            try db.execute(
                sql: """
                    ALTER TABLE bucketListEntry ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
                    UPDATE bucketListEntry SET position = (
                        SELECT COUNT(*) FROM bucketListEntry AS earlier
                        WHERE earlier.listID = bucketListEntry.listID
                            AND (earlier.addedAt < bucketListEntry.addedAt
                                OR (earlier.addedAt = bucketListEntry.addedAt
                                    AND earlier.activityID <= bucketListEntry.activityID))
                    );
                    DROP INDEX bucketListEntry_listID_addedAt_activityID;
                    CREATE UNIQUE INDEX bucketListEntry_listID_position ON bucketListEntry(listID, position);
                    """
            )
        }
    }

    /// Sets every activity's trending bound from the up-votes it holds now (oldest first).
    static func computeTrendBounds(_ db: Database) throws {
        var bounds: [String: Double] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: "SELECT activityID, castAt FROM activityVote WHERE value = 1 ORDER BY castAt, userID"
        )
        while let row = try rows.next() {
            let id: String = row["activityID"]
            bounds[id] = TrendingScore.raisedBound(bounds[id], upVoteAt: Date(millisecondsSince1970: row["castAt"]))
        }
        try db.execute(sql: "UPDATE activity SET trendBound = NULL")
        for (id, bound) in bounds {
            try db.execute(sql: "UPDATE activity SET trendBound = ? WHERE id = ?", arguments: [bound, id])
        }
    }
}
