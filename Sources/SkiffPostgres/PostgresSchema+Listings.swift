extension PostgresSchema {
    /// The Listings service's tables: listings (with what search reads), request ids, images, saved
    /// listings, change events and the head that numbers them, comments, and the version of the ZIP-code
    /// table the search points were computed with.
    ///
    /// As on SQLite, search reads columns a ``SkiffListings/Listing`` does not have, written with every
    /// listing by `PostgresListingsStore` from Swift's own rules, so both backends match alike:
    /// - `title_words`, `description_words`, `tag_words`: each field's tokens (the shared tokenizer,
    ///   `SearchText`), in order with repeats, from which the relevance score is counted;
    /// - `search_words`: the distinct tokens as a `tsvector` (`array_to_tsvector`, so PostgreSQL's own
    ///   parser never splits or folds them) with a GIN index: a query's terms are a `tsquery` of exact
    ///   lexemes, the last one a prefix (`:*`). Tokens longer than a lexeme may be (2,047 bytes) keep
    ///   their first 2,047 bytes, which changes no match: a query term is at most 800 bytes;
    /// - `search_latitude`, `search_longitude`: where distance search places the listing (its point, or
    ///   its ZIP code's centroid), with a GiST index on the point for a circle's bounding box;
    ///   `search_cell_latitude`, `search_cell_longitude`: that point's grid cell centre
    ///   (`ApproximateLocation`), which anyone but the seller is measured to; `search_cell` ("listings-v2")
    ///   that cell's key, computed by PostgreSQL from the search point, with an index per (cell, status)
    ///   newest first for walking a circle's cells.
    ///
    /// Order indexes end in the order's tie-breaks (newest first, then id descending), so a page walks
    /// an index from its keyset cursor. Ordered or compared text columns use the "C" collation: pages
    /// come in byte order (Swift's and SQLite's) whatever the database's locale.
    ///
    /// `listing_change_head` keeps the last change sequence, moved in the transaction that inserts the
    /// event: numbers are gapless and follow commit order across servers (a PostgreSQL sequence would
    /// leave gaps and could commit a lower number after a higher one was read).
    static let listingsMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "listings-v1",
            statements: [
                """
                CREATE TABLE listing (
                    id text COLLATE "C" PRIMARY KEY,
                    seller_id text COLLATE "C" NOT NULL,
                    title text NOT NULL,
                    title_key text COLLATE "C" NOT NULL,
                    description text NOT NULL,
                    price_cents bigint NOT NULL CHECK (price_cents >= 0),
                    category text COLLATE "C" NOT NULL,
                    condition text COLLATE "C" NOT NULL,
                    size text NOT NULL,
                    tags text[] COLLATE "C" NOT NULL,
                    made_on_campus boolean NOT NULL,
                    bidding_enabled boolean NOT NULL,
                    anonymous boolean NOT NULL,
                    zip_code text NOT NULL,
                    latitude double precision,
                    longitude double precision,
                    image_ids text[] COLLATE "C" NOT NULL,
                    status text COLLATE "C" NOT NULL CHECK (status IN ('active', 'sold', 'withdrawn')),
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL,
                    title_words text[] COLLATE "C" NOT NULL,
                    description_words text[] COLLATE "C" NOT NULL,
                    tag_words text[] COLLATE "C" NOT NULL,
                    search_words tsvector NOT NULL,
                    search_latitude double precision,
                    search_longitude double precision,
                    search_cell_latitude double precision,
                    search_cell_longitude double precision
                )
                """,
                "CREATE INDEX listing_newest ON listing (status, created_at, id)",
                "CREATE INDEX listing_category_newest ON listing (status, category, created_at, id)",
                "CREATE INDEX listing_price_ascending ON listing (status, price_cents, created_at DESC, id DESC)",
                "CREATE INDEX listing_price_descending ON listing (status, price_cents DESC, created_at DESC, id DESC)",
                "CREATE INDEX listing_title ON listing (status, title_key, created_at DESC, id DESC)",
                "CREATE INDEX listing_seller ON listing (seller_id, created_at, id)",
                "CREATE INDEX listing_search_words ON listing USING gin (search_words) WITH (fastupdate = off)",
                "CREATE INDEX listing_tags ON listing USING gin (tags) WITH (fastupdate = off)",
                "CREATE INDEX listing_image_ids ON listing USING gin (image_ids) WITH (fastupdate = off)",
                """
                CREATE INDEX listing_search_point ON listing
                    USING gist (point(search_longitude, search_latitude))
                """,
                """
                CREATE TABLE listing_request (
                    seller_id text COLLATE "C" NOT NULL,
                    request_id text COLLATE "C" NOT NULL,
                    listing_id text COLLATE "C" NOT NULL REFERENCES listing (id) ON DELETE CASCADE,
                    fingerprint text NOT NULL,
                    PRIMARY KEY (seller_id, request_id)
                )
                """,
                """
                CREATE TABLE listing_image (
                    id text COLLATE "C" PRIMARY KEY,
                    owner_id text COLLATE "C" NOT NULL,
                    content_type text NOT NULL,
                    size_bytes bigint NOT NULL CHECK (size_bytes > 0),
                    bytes bytea NOT NULL,
                    created_at bigint NOT NULL
                )
                """,
                // Images are compressed already: stored out of line uncompressed, so a download's piece
                // (`substring`) reads only the chunks it covers.
                "ALTER TABLE listing_image ALTER COLUMN bytes SET STORAGE EXTERNAL",
                "CREATE INDEX listing_image_created_at ON listing_image (created_at)",
                """
                CREATE TABLE saved_listing (
                    user_id text COLLATE "C" NOT NULL,
                    listing_id text COLLATE "C" NOT NULL REFERENCES listing (id) ON DELETE CASCADE,
                    saved_at bigint NOT NULL,
                    PRIMARY KEY (user_id, listing_id)
                )
                """,
                "CREATE INDEX saved_listing_user_time ON saved_listing (user_id, saved_at, listing_id)",
                "CREATE INDEX saved_listing_listing ON saved_listing (listing_id, user_id)",
                """
                CREATE TABLE listing_change_head (
                    id integer PRIMARY KEY CHECK (id = 1),
                    last_sequence bigint NOT NULL CHECK (last_sequence >= 0)
                )
                """,
                "INSERT INTO listing_change_head (id, last_sequence) VALUES (1, 0)",
                """
                CREATE TABLE listing_change (
                    sequence bigint PRIMARY KEY CHECK (sequence > 0),
                    listing_id text COLLATE "C" NOT NULL,
                    title text NOT NULL,
                    kind text NOT NULL,
                    new_price_cents bigint NOT NULL,
                    old_price_cents bigint NOT NULL,
                    changed_at bigint NOT NULL
                )
                """,
                "CREATE INDEX listing_change_listing ON listing_change (listing_id, sequence)",
                "CREATE INDEX listing_change_changed_at ON listing_change (changed_at)",
                """
                CREATE TABLE listing_comment (
                    id text COLLATE "C" PRIMARY KEY,
                    listing_id text COLLATE "C" NOT NULL REFERENCES listing (id),
                    author_id text COLLATE "C" NOT NULL,
                    reply_to_id text COLLATE "C",
                    text text NOT NULL CHECK (text <> ''),
                    created_at bigint NOT NULL
                )
                """,
                "CREATE INDEX listing_comment_listing ON listing_comment (listing_id, created_at, id)",
                """
                CREATE INDEX listing_comment_reply_to ON listing_comment (reply_to_id, created_at, id)
                    WHERE reply_to_id IS NOT NULL
                """,
                "CREATE INDEX listing_comment_time ON listing_comment (created_at, id)",
                """
                CREATE TABLE listing_search_point_version (
                    id integer PRIMARY KEY CHECK (id = 1),
                    version text NOT NULL
                )
                """,
            ]
        ),
        // The grid cell of each listing's search point (`ApproximateLocation.Cell.key`: row × 1,000,000 +
        // column), a column PostgreSQL computes from the search point (`skiff_grid_cell_key`: Swift's
        // operations in Swift's order, so a server of any version writing the point gets the cell), and an
        // index that walks a cell's listings of one status newest first: a search in a circle reads the
        // circle's occupied cells (`PostgresListingsStore.bandWalk`). Adding the column rewrites the table
        // once.
        PostgresMigration(
            id: "listings-v2",
            statements: [
                gridCellKeyFunction,
                """
                ALTER TABLE listing ADD COLUMN search_cell bigint
                    GENERATED ALWAYS AS (skiff_grid_cell_key(search_latitude, search_longitude)) STORED
                """,
                """
                CREATE INDEX listing_search_cell ON listing (search_cell, status, created_at, id)
                    WHERE search_cell IS NOT NULL
                """,
            ]
        ),
    ]
}
