extension PostgresSchema {
    /// The LostFound service's tables: items and the matches recorded between them.
    ///
    /// As on SQLite: reporter ids are not foreign keys (accounts belong to another service); `building_key`
    /// is `LostFoundRules.buildingKey` of the building (what filters compare); a match is one row per
    /// (found, lost) pair. Ids and other ordered or compared text use the "C" collation, so pages come in
    /// byte order (Swift's and SQLite's) whatever the database's locale.
    ///
    /// Keywords: `search_tokens` holds the distinct tokens (`TextSearch.tokens`) of title and description,
    /// as Swift computes them; `search_keys` the GIN-indexed keys derived from them
    /// (`LostFoundSearchKeys`): each token itself, and each of its first 32 prefixes followed by `*`. So
    /// "every term a token, the last a prefix of one" is one `search_keys @> …` on the GIN index, decided
    /// exactly as the other stores decide it (tokens too long for an index key are checked again against
    /// `search_tokens`).
    ///
    /// Distances: `lost_found_item_point` (GiST on the point) answers a search's box and a report's
    /// candidate box; `lost_found_private_distance_km` is `ApproximateLocation.distance` in SQL, operation
    /// for operation (so the same `Double`s): exact for the item's reporter, to the item's grid cell and
    /// rounded for anyone else. Searches filter, order and page by it inside PostgreSQL.
    ///
    /// Every list is answered by an index in its order: search newest first by
    /// `lost_found_item_created` (or a building's `lost_found_item_building`), a reporter's items by
    /// `lost_found_item_reporter`, a report's candidates (latest to occur first) by
    /// `lost_found_item_candidates`, an item's matches by `lost_found_match_found_rank` or
    /// `lost_found_match_lost_rank`, the relay's recent matches by `lost_found_match_matched_at`.
    static let lostFoundMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "lostfound-v1",
            statements: [
                """
                CREATE TABLE lost_found_item (
                    id text COLLATE "C" PRIMARY KEY,
                    reporter_id text COLLATE "C" NOT NULL,
                    kind text NOT NULL CHECK (kind IN ('lost', 'found')),
                    status text NOT NULL CHECK (status IN ('lost', 'found', 'returned')),
                    title text NOT NULL,
                    description text NOT NULL,
                    category text NOT NULL,
                    building text NOT NULL,
                    building_key text COLLATE "C" NOT NULL,
                    latitude double precision CHECK (latitude BETWEEN -90 AND 90),
                    longitude double precision CHECK (longitude BETWEEN -180 AND 180),
                    occurred_at bigint NOT NULL,
                    contact_instructions text NOT NULL,
                    image_id text,
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL,
                    returned_at bigint,
                    search_tokens text[] COLLATE "C" NOT NULL,
                    search_keys text[] COLLATE "C" NOT NULL,
                    CHECK ((latitude IS NULL) = (longitude IS NULL))
                )
                """,
                "CREATE INDEX lost_found_item_created ON lost_found_item (created_at DESC, id DESC)",
                """
                CREATE INDEX lost_found_item_building ON lost_found_item (building_key, created_at DESC, id DESC)
                """,
                """
                CREATE INDEX lost_found_item_reporter ON lost_found_item (reporter_id, created_at DESC, id DESC)
                """,
                """
                CREATE INDEX lost_found_item_candidates
                    ON lost_found_item (status, category, occurred_at DESC, id DESC)
                """,
                "CREATE INDEX lost_found_item_keys ON lost_found_item USING gin (search_keys) WITH (fastupdate = off)",
                "CREATE INDEX lost_found_item_point ON lost_found_item USING gist (point(longitude, latitude))",
                """
                CREATE TABLE lost_found_match (
                    found_item_id text COLLATE "C" NOT NULL REFERENCES lost_found_item (id) ON DELETE CASCADE,
                    lost_item_id text COLLATE "C" NOT NULL REFERENCES lost_found_item (id) ON DELETE CASCADE,
                    score double precision NOT NULL CHECK (score >= 0 AND score <= 1),
                    distance_km double precision,
                    matched_at bigint NOT NULL,
                    PRIMARY KEY (found_item_id, lost_item_id)
                )
                """,
                """
                CREATE INDEX lost_found_match_found_rank
                    ON lost_found_match (found_item_id, score DESC, matched_at DESC, lost_item_id DESC)
                """,
                """
                CREATE INDEX lost_found_match_lost_rank
                    ON lost_found_match (lost_item_id, score DESC, matched_at DESC, found_item_id DESC)
                """,
                """
                CREATE INDEX lost_found_match_matched_at
                    ON lost_found_match (matched_at, found_item_id, lost_item_id)
                """,
                // `GreatCircle.distanceKm`: the haversine, each operation in Swift's order.
                """
                CREATE FUNCTION lost_found_great_circle_km(
                    latitude1 double precision, longitude1 double precision,
                    latitude2 double precision, longitude2 double precision
                ) RETURNS double precision
                LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
                AS $$
                    SELECT 2::float8 * 6371.0088::float8 * asin(least(1::float8, sqrt(
                        sin((latitude2 - latitude1) * (pi() / 180::float8) / 2::float8)
                            * sin((latitude2 - latitude1) * (pi() / 180::float8) / 2::float8)
                        + cos(latitude1 * (pi() / 180::float8)) * cos(latitude2 * (pi() / 180::float8))
                            * sin((longitude2 - longitude1) * (pi() / 180::float8) / 2::float8)
                            * sin((longitude2 - longitude1) * (pi() / 180::float8) / 2::float8)
                    )))
                $$
                """,
                // `ApproximateLocation.distance` (with `cellCenter` and `rounded`): the measured distance
                // (`shown` false) or the one shown (`shown` true); NULL without a point.
                """
                CREATE FUNCTION lost_found_private_distance_km(
                    latitude double precision, longitude double precision, owner_id text,
                    center_latitude double precision, center_longitude double precision, viewer_id text,
                    shown boolean
                ) RETURNS double precision
                LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
                AS $$
                DECLARE
                    cell_latitude double precision;
                    cell_width double precision;
                    cell_longitude double precision;
                    km double precision;
                    steps double precision;
                BEGIN
                    IF latitude IS NULL OR longitude IS NULL OR center_latitude IS NULL
                        OR center_longitude IS NULL THEN
                        RETURN NULL;
                    END IF;
                    IF viewer_id IS NOT NULL AND viewer_id = owner_id THEN
                        RETURN lost_found_great_circle_km(center_latitude, center_longitude, latitude, longitude);
                    END IF;
                    cell_latitude := least(90::float8, greatest(-90::float8,
                        (floor(latitude / 0.01::float8) + 0.5::float8) * 0.01::float8));
                    cell_width := 0.01::float8 / greatest(cos(cell_latitude * pi() / 180::float8), 0.01::float8);
                    cell_longitude := least(180::float8,
                        -180::float8 + (floor((longitude + 180::float8) / cell_width) + 0.5::float8) * cell_width);
                    km := lost_found_great_circle_km(center_latitude, center_longitude, cell_latitude, cell_longitude);
                    IF NOT shown THEN
                        RETURN km;
                    END IF;
                    -- Swift's rounded(): to nearest, ties away from zero (round() on float8 ties to even).
                    steps := km / 0.5::float8;
                    IF steps - floor(steps) >= 0.5::float8 THEN
                        RETURN (floor(steps) + 1::float8) * 0.5::float8;
                    END IF;
                    RETURN floor(steps) * 0.5::float8;
                END
                $$
                """,
            ]
        ),
        // Each item's grid cell (`ApproximateLocation.Cell.key`: row × 1,000,000 + column), a column
        // PostgreSQL computes from the point (`skiff_grid_cell_key`, also made by "listings-v2": the same
        // operations as Swift, as `lost_found_private_distance_km` does), and an index that walks a cell's
        // items newest first: a search in a circle reads the circle's occupied cells
        // (`PostgresLostFoundStore.bandWalk`). Adding the column rewrites the table once.
        PostgresMigration(
            id: "lostfound-v2",
            statements: [
                gridCellKeyFunction,
                """
                ALTER TABLE lost_found_item
                    ADD COLUMN cell bigint GENERATED ALWAYS AS (skiff_grid_cell_key(latitude, longitude)) STORED
                """,
                """
                CREATE INDEX lost_found_item_cell ON lost_found_item (cell, created_at DESC, id DESC)
                    WHERE cell IS NOT NULL
                """,
            ]
        ),
    ]
}
