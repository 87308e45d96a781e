extension PostgresSchema {
    /// The Accounts service's tables: accounts (deleted ones keep their row, erased), sessions, one-time
    /// tokens, completed sales, ratings, reports and linked external identities.
    ///
    /// Ordered text columns use the "C" collation, so pages come in byte order whatever the database's
    /// locale (as on SQLite). E-mail addresses are stored normalized, so UNIQUE is case-insensitive in effect.
    static let accountsMigrations: [PostgresMigration] = [
        PostgresMigration(
            id: "accounts-v1",
            statements: [
                """
                CREATE TABLE account (
                    id text COLLATE "C" PRIMARY KEY,
                    email text NOT NULL UNIQUE,
                    display_name text NOT NULL,
                    display_name_key text COLLATE "C" NOT NULL,
                    bio text NOT NULL DEFAULT '',
                    avatar_image_id text,
                    payment_handle text,
                    zip_code text,
                    password_hash text NOT NULL,
                    verified boolean NOT NULL DEFAULT false,
                    created_at bigint NOT NULL,
                    items_sold integer NOT NULL DEFAULT 0 CHECK (items_sold >= 0),
                    deleted_at bigint
                )
                """,
                "CREATE INDEX account_display_name_key_id ON account (display_name_key, id)",
                "CREATE INDEX account_avatar_image_id ON account (avatar_image_id) WHERE avatar_image_id IS NOT NULL",
                """
                CREATE TABLE session (
                    token_hash text PRIMARY KEY,
                    account_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    expires_at bigint NOT NULL,
                    created_at bigint NOT NULL
                )
                """,
                "CREATE INDEX session_account_id ON session (account_id)",
                "CREATE INDEX session_expires_at ON session (expires_at)",
                """
                CREATE TABLE one_time_token (
                    token_hash text PRIMARY KEY,
                    kind text NOT NULL,
                    account_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    expires_at bigint NOT NULL,
                    created_at bigint NOT NULL,
                    used_at bigint,
                    password_hash text,
                    display_name text,
                    new_email text
                )
                """,
                "CREATE INDEX one_time_token_account_id_kind ON one_time_token (account_id, kind)",
                "CREATE INDEX one_time_token_expires_at ON one_time_token (expires_at)",
                """
                CREATE TABLE completed_sale (
                    sale_id text PRIMARY KEY,
                    seller_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    recorded_at bigint NOT NULL
                )
                """,
                "CREATE INDEX completed_sale_seller_id ON completed_sale (seller_id)",
                """
                CREATE TABLE rating (
                    sale_id text PRIMARY KEY,
                    rating_id text COLLATE "C" NOT NULL UNIQUE,
                    seller_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    buyer_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    stars integer NOT NULL CHECK (stars BETWEEN 1 AND 5),
                    comment text NOT NULL DEFAULT '',
                    created_at bigint NOT NULL,
                    anonymous boolean NOT NULL DEFAULT false
                )
                """,
                "CREATE INDEX rating_seller_id_created_at_rating_id ON rating (seller_id, created_at, rating_id)",
                "CREATE INDEX rating_buyer_id ON rating (buyer_id)",
                """
                CREATE TABLE report (
                    id text COLLATE "C" PRIMARY KEY,
                    reporter_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    reported_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    reason text NOT NULL,
                    details text NOT NULL DEFAULT '',
                    created_at bigint NOT NULL
                )
                """,
                "CREATE INDEX report_reported_id_created_at_id ON report (reported_id, created_at, id)",
                "CREATE INDEX report_reporter_id_reported_id ON report (reporter_id, reported_id)",
                """
                CREATE TABLE external_identity (
                    issuer text NOT NULL,
                    subject text NOT NULL,
                    account_id text COLLATE "C" NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                    created_at bigint NOT NULL,
                    PRIMARY KEY (issuer, subject)
                )
                """,
                "CREATE INDEX external_identity_account_id ON external_identity (account_id)",
            ]
        )
    ]
}
