extension PostgresSchema {
    /// The BucketList service's tables: activities with their votes and comments, bucket lists with their
    /// entries, and follows between users.
    ///
    /// As on SQLite: user ids are not foreign keys (those rows belong to Accounts); deleting an activity
    /// or a list cascades to its votes, comments and entries. Vote and comment counts are kept on
    /// `activity` in the transaction of each vote or comment, so they always equal the rows of
    /// `activity_vote` and `activity_comment`; the primary key of `activity_vote` keeps one vote per
    /// user and activity whatever the servers do. `trend_bound` is
    /// `SkiffBucketList.TrendingScore.raisedBound`, raised on each up-vote (`NULL` before the first);
    /// `net` is up-votes minus down-votes. A list's entries are numbered by `position` in the order they
    /// were added. Ordered or compared text columns use the "C" collation, so pages come in byte order
    /// (Swift's and SQLite's) whatever the database's locale.
    ///
    /// `activity_distance_km` is `SkiffBucketList.Geo.distanceKm` (haversine) written with the same
    /// floating-point operations in the same order, so PostgreSQL's `sin`, `cos`, `asin` and `sqrt`
    /// (the C library's) give the very `Double` Swift computes: nearby search filters, orders and pages
    /// by it inside SQL.
    ///
    /// Indexes, each answering one walk a page at a time:
    /// - `activity_place` (GiST on the point): a circle's bounding box, for nearby and trending near a
    ///   point; `activity_net_place`: the box at one net-vote level (nearby by popularity).
    /// - `activity_trend_walk`: every activity with a bound, highest first then id, carrying the
    ///   coordinates so that a walk near a point checks the box in the index.
    /// - `activity_vote_activity_cast_at`: an activity's votes in a trending window.
    /// - comments, lists, entries and follows by their keyset orders.
    static let bucketListMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "bucketlist-v1",
            statements: [
                """
                CREATE FUNCTION activity_distance_km(
                    latitude1 double precision, longitude1 double precision,
                    latitude2 double precision, longitude2 double precision
                ) RETURNS double precision
                LANGUAGE sql IMMUTABLE PARALLEL SAFE
                AS $$
                SELECT 2::double precision * 6371.0088::double precision * asin(least(1::double precision, sqrt(
                    sin((latitude2 - latitude1) * (pi() / 180::double precision) / 2::double precision)
                        * sin((latitude2 - latitude1) * (pi() / 180::double precision) / 2::double precision)
                    + cos(latitude1 * (pi() / 180::double precision)) * cos(latitude2 * (pi() / 180::double precision))
                        * sin((longitude2 - longitude1) * (pi() / 180::double precision) / 2::double precision)
                        * sin((longitude2 - longitude1) * (pi() / 180::double precision) / 2::double precision)
                )))
                $$
                """,
                """
                CREATE TABLE activity (
                    id text COLLATE "C" PRIMARY KEY,
                    owner_id text COLLATE "C" NOT NULL,
                    title text NOT NULL,
                    description text NOT NULL,
                    place_name text NOT NULL,
                    latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
                    longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
                    starts_at bigint,
                    image_id text,
                    tags text[] NOT NULL,
                    up_votes integer NOT NULL DEFAULT 0 CHECK (up_votes >= 0),
                    down_votes integer NOT NULL DEFAULT 0 CHECK (down_votes >= 0),
                    comment_count integer NOT NULL DEFAULT 0 CHECK (comment_count >= 0),
                    net integer GENERATED ALWAYS AS (up_votes - down_votes) STORED,
                    trend_bound double precision,
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL
                )
                """,
                "CREATE INDEX activity_place ON activity USING gist (point(longitude, latitude))",
                "CREATE INDEX activity_net_place ON activity (net, latitude, longitude)",
                """
                CREATE INDEX activity_trend_walk ON activity (trend_bound DESC, id) INCLUDE (latitude, longitude)
                    WHERE trend_bound IS NOT NULL
                """,
                "CREATE INDEX activity_owner_id ON activity (owner_id)",
                """
                CREATE TABLE activity_vote (
                    activity_id text COLLATE "C" NOT NULL REFERENCES activity (id) ON DELETE CASCADE,
                    user_id text COLLATE "C" NOT NULL,
                    value integer NOT NULL CHECK (value IN (-1, 1)),
                    cast_at bigint NOT NULL,
                    PRIMARY KEY (activity_id, user_id)
                )
                """,
                """
                CREATE INDEX activity_vote_activity_cast_at ON activity_vote (activity_id, cast_at)
                    INCLUDE (user_id, value)
                """,
                """
                CREATE TABLE activity_comment (
                    id text COLLATE "C" PRIMARY KEY,
                    activity_id text COLLATE "C" NOT NULL REFERENCES activity (id) ON DELETE CASCADE,
                    author_id text COLLATE "C" NOT NULL,
                    text text NOT NULL,
                    created_at bigint NOT NULL
                )
                """,
                """
                CREATE INDEX activity_comment_activity_created_at_id
                    ON activity_comment (activity_id, created_at, id)
                """,
                """
                CREATE TABLE bucket_list (
                    id text COLLATE "C" PRIMARY KEY,
                    owner_id text COLLATE "C" NOT NULL,
                    name text NOT NULL,
                    name_key text COLLATE "C" NOT NULL,
                    description text NOT NULL,
                    visibility text NOT NULL CHECK (visibility IN ('public', 'private')),
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL,
                    UNIQUE (owner_id, name_key)
                )
                """,
                "CREATE INDEX bucket_list_owner_created_at_id ON bucket_list (owner_id, created_at, id)",
                """
                CREATE TABLE bucket_list_entry (
                    list_id text COLLATE "C" NOT NULL REFERENCES bucket_list (id) ON DELETE CASCADE,
                    activity_id text COLLATE "C" NOT NULL REFERENCES activity (id) ON DELETE CASCADE,
                    position bigint NOT NULL CHECK (position > 0),
                    added_at bigint NOT NULL,
                    completed_at bigint,
                    note text NOT NULL DEFAULT '',
                    PRIMARY KEY (list_id, activity_id),
                    UNIQUE (list_id, position)
                )
                """,
                "CREATE INDEX bucket_list_entry_activity_id ON bucket_list_entry (activity_id)",
                """
                CREATE TABLE user_follow (
                    follower_id text COLLATE "C" NOT NULL,
                    followee_id text COLLATE "C" NOT NULL,
                    followed_at bigint NOT NULL,
                    PRIMARY KEY (follower_id, followee_id),
                    CHECK (follower_id <> followee_id)
                )
                """,
                """
                CREATE INDEX user_follow_follower_followed_at
                    ON user_follow (follower_id, followed_at, followee_id)
                """,
                """
                CREATE INDEX user_follow_followee_followed_at
                    ON user_follow (followee_id, followed_at, follower_id)
                """,
            ]
        )
    ]
}
