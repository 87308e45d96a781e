extension PostgresSchema {
    /// The Bids service's tables: bids, sales (with the picked hand-off place's copy), acceptance claims,
    /// each user's numbered events, and listings closed outside the bid flow.
    ///
    /// Ids of users and listings are not foreign keys: those rows belong to other services. The schema
    /// backs the store's checks up: one sale per listing and per bid (`UNIQUE`), one live bid per bidder
    /// and listing, and one bid per bidder and request id (partial unique indexes). Ordered text columns
    /// use the "C" collation, so pages come in byte order whatever the database's locale (as on SQLite).
    ///
    /// Every list is a keyset walk of one index: a listing's bids by `(listing_id, -amount_cents,
    /// created_at, id)`, a bidder's bids by `(bidder_id, state, created_at, id)` (one walk per state,
    /// merged), sales by `(buyer_id | seller_id, created_at, id)`, events by `(user_id, sequence)` and
    /// `(created_at, user_id, sequence)`.
    static let bidsMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "bids-v1",
            statements: [
                """
                CREATE TABLE bid (
                    id text COLLATE "C" PRIMARY KEY,
                    listing_id text COLLATE "C" NOT NULL,
                    seller_id text COLLATE "C" NOT NULL,
                    bidder_id text COLLATE "C" NOT NULL,
                    amount_cents bigint NOT NULL CHECK (amount_cents > 0),
                    state text NOT NULL CHECK (state IN
                        ('pending', 'countered', 'accepted', 'rejected', 'withdrawn', 'superseded')),
                    counter_amount_cents bigint NOT NULL DEFAULT 0,
                    rejection_reason text NOT NULL DEFAULT '',
                    accepted_amount_cents bigint NOT NULL DEFAULT 0,
                    sale_id text COLLATE "C",
                    request_id text,
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL
                )
                """,
                "CREATE INDEX bid_listing_id_order ON bid (listing_id, (-amount_cents), created_at, id)",
                "CREATE INDEX bid_bidder_id_state_created_at_id ON bid (bidder_id, state, created_at, id)",
                """
                CREATE UNIQUE INDEX bid_bidder_id_request_id ON bid (bidder_id, request_id)
                    WHERE request_id IS NOT NULL
                """,
                """
                CREATE UNIQUE INDEX bid_live_listing_id_bidder_id ON bid (listing_id, bidder_id) INCLUDE (amount_cents)
                    WHERE state IN ('pending', 'countered')
                """,
                """
                CREATE TABLE sale (
                    id text COLLATE "C" PRIMARY KEY,
                    listing_id text COLLATE "C" NOT NULL UNIQUE,
                    listing_title text NOT NULL,
                    category text NOT NULL,
                    bid_id text COLLATE "C" NOT NULL UNIQUE REFERENCES bid (id),
                    buyer_id text COLLATE "C" NOT NULL,
                    seller_id text COLLATE "C" NOT NULL,
                    amount_cents bigint NOT NULL CHECK (amount_cents > 0),
                    state text NOT NULL CHECK (state IN ('pendingHandoff', 'completed')),
                    conversation_id text NOT NULL DEFAULT '',
                    created_at bigint NOT NULL,
                    buyer_confirmed_at bigint,
                    seller_confirmed_at bigint,
                    completed_at bigint,
                    handoff_place_id text,
                    handoff_place_name text,
                    handoff_place_latitude double precision,
                    handoff_place_longitude double precision,
                    handoff_place_hours text,
                    CHECK (num_nulls(handoff_place_id, handoff_place_name, handoff_place_latitude,
                        handoff_place_longitude, handoff_place_hours) IN (0, 5))
                )
                """,
                "CREATE INDEX sale_buyer_id_created_at_id ON sale (buyer_id, created_at, id)",
                "CREATE INDEX sale_seller_id_created_at_id ON sale (seller_id, created_at, id)",
                """
                CREATE TABLE acceptance_claim (
                    listing_id text COLLATE "C" PRIMARY KEY,
                    bid_id text COLLATE "C" NOT NULL REFERENCES bid (id),
                    kind text NOT NULL CHECK (kind IN ('bid', 'counter')),
                    claimed_at bigint NOT NULL
                )
                """,
                """
                CREATE TABLE bid_event (
                    user_id text COLLATE "C" NOT NULL,
                    sequence bigint NOT NULL CHECK (sequence > 0),
                    kind text NOT NULL,
                    bid_id text COLLATE "C" NOT NULL,
                    listing_id text COLLATE "C" NOT NULL,
                    sale_id text COLLATE "C",
                    amount_cents bigint NOT NULL,
                    created_at bigint NOT NULL,
                    PRIMARY KEY (user_id, sequence)
                )
                """,
                "CREATE INDEX bid_event_created_at_user_id_sequence ON bid_event (created_at, user_id, sequence)",
                """
                CREATE TABLE closed_listing (
                    listing_id text COLLATE "C" PRIMARY KEY,
                    closed_at bigint NOT NULL
                )
                """,
            ]
        )
    ]
}
