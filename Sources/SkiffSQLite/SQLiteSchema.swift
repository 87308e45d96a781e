public import GRDB

/// The schema of the Skiff database: one migrator holding every service's migrations.
///
/// Migrations are named `<service>-v1`, `<service>-v2`, … and run in registration order.
///
/// - Important: A migration never changes once it has shipped: databases in the field have already run it,
///   and GRDB will not run it again. To change the schema, append a new migration (`accounts-v2`) and leave
///   the old ones byte for byte as they are. Migrations use SQL only, never app types, so later code changes
///   cannot change what an old migration does.
public enum SQLiteSchema {
    /// A migrator with every service's migrations.
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        registerAccountsMigrations(in: &migrator)
        registerListingsMigrations(in: &migrator)
        registerBidsMigrations(in: &migrator)
        registerChatMigrations(in: &migrator)
        registerLostFoundMigrations(in: &migrator)
        registerBucketListMigrations(in: &migrator)
        registerAccountsSalesMigration(in: &migrator)
        registerBidsClosedListingsMigration(in: &migrator)
        registerBidEventsByTimeMigration(in: &migrator)
        registerLostFoundMatchesByTimeMigration(in: &migrator)
        registerAccountsPendingSignUpsMigration(in: &migrator)
        registerListingsSearchInstancesMigration(in: &migrator)
        registerBucketListTrendBoundMigration(in: &migrator)
        registerListingsWalkIndexesMigration(in: &migrator)
        registerAccountsReportPairsMigration(in: &migrator)
        registerLostFoundOwnItemsMigration(in: &migrator)
        registerAccountsAnonymousRatingsMigration(in: &migrator)
        registerBidsHandoffPlacesMigration(in: &migrator)
        registerListingCommentsMigration(in: &migrator)
        registerAccountsEmailChangeAndDeletionMigration(in: &migrator)
        registerAccountsExternalIdentitiesMigration(in: &migrator)
        registerListingsSearchPointsMigration(in: &migrator)
        registerBucketListWalkIndexesMigration(in: &migrator)
        registerLostFoundGenerationMigration(in: &migrator)
        registerChatFeedPayloadsMigration(in: &migrator)
        registerBucketListEntryPositionsMigration(in: &migrator)
        registerLostFoundMatchKeysMigration(in: &migrator)
        registerLostFoundCellsMigration(in: &migrator)
        registerListingsCellsMigration(in: &migrator)
        registerListingsImpactMigration(in: &migrator)
        registerListingsKeysMigration(in: &migrator)
        return migrator
    }

    /// The identifiers of all migrations, in order.
    public static var migrationIdentifiers: [String] { migrator.migrations }

    // MARK: Accounts

    static func registerAccountsMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Dates are INTEGER milliseconds since 1970; e-mail addresses are stored
        // normalized (lowercase), so UNIQUE on the column is case-insensitive in effect.
        migrator.registerMigration("accounts-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account (
                        id TEXT NOT NULL PRIMARY KEY,
                        email TEXT NOT NULL UNIQUE,
                        displayName TEXT NOT NULL,
                        displayNameKey TEXT NOT NULL,
                        bio TEXT NOT NULL DEFAULT '',
                        avatarImageID TEXT,
                        paymentHandle TEXT,
                        zipCode TEXT,
                        passwordHash TEXT NOT NULL,
                        verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
                        createdAt INTEGER NOT NULL,
                        itemsSold INTEGER NOT NULL DEFAULT 0 CHECK (itemsSold >= 0)
                    ) STRICT;
                    CREATE INDEX account_displayNameKey_id ON account(displayNameKey, id);

                    CREATE TABLE session (
                        tokenHash TEXT NOT NULL PRIMARY KEY,
                        accountID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        expiresAt INTEGER NOT NULL,
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX session_accountID ON session(accountID);
                    CREATE INDEX session_expiresAt ON session(expiresAt);

                    CREATE TABLE oneTimeToken (
                        tokenHash TEXT NOT NULL PRIMARY KEY,
                        kind TEXT NOT NULL,
                        accountID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        expiresAt INTEGER NOT NULL,
                        createdAt INTEGER NOT NULL,
                        usedAt INTEGER
                    ) STRICT;
                    CREATE INDEX oneTimeToken_accountID_kind ON oneTimeToken(accountID, kind);
                    CREATE INDEX oneTimeToken_expiresAt ON oneTimeToken(expiresAt);

                    CREATE TABLE rating (
                        saleID TEXT NOT NULL PRIMARY KEY,
                        sellerID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        buyerID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5),
                        comment TEXT NOT NULL DEFAULT '',
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX rating_sellerID_createdAt_saleID ON rating(sellerID, createdAt, saleID);
                    CREATE INDEX rating_buyerID ON rating(buyerID);

                    CREATE TABLE report (
                        id TEXT NOT NULL PRIMARY KEY,
                        reporterID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        reportedID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        reason TEXT NOT NULL,
                        details TEXT NOT NULL DEFAULT '',
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX report_reportedID_createdAt_id ON report(reportedID, createdAt, id);
                    CREATE INDEX report_reporterID ON report(reporterID);
                    """
            )
        }
    }

    // MARK: Later migrations, in the order they shipped

    static func registerAccountsSalesMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. The completed sales counted in `account.itemsSold`, so that recording a
        // sale again (a retried RecordCompletedSale) does not count it twice. Sales recorded before this
        // migration are in `itemsSold` but not here.
        migrator.registerMigration("accounts-v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE completedSale (
                        saleID TEXT NOT NULL PRIMARY KEY,
                        sellerID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        recordedAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX completedSale_sellerID ON completedSale(sellerID);
                    """
            )
        }
    }

    static func registerAccountsPendingSignUpsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. A verification token carries the password hash and display name of the
        // sign-up that issued it (NULL for tokens that keep the account's), so that verifying sets the
        // password the verified owner chose, never an earlier sign-up's.
        migrator.registerMigration("accounts-v3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE oneTimeToken ADD COLUMN passwordHash TEXT;
                    ALTER TABLE oneTimeToken ADD COLUMN displayName TEXT;
                    """
            )
        }
    }

    static func registerAccountsReportPairsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. ReportUser refuses a second open report by one reporter about one user: the
        // check is one probe of (reporterID, reportedID), which also serves look-ups by reporter alone.
        migrator.registerMigration("accounts-v4") { db in
            try db.execute(
                sql: """
                    DROP INDEX report_reporterID;
                    CREATE INDEX report_reporterID_reportedID ON report(reporterID, reportedID);
                    """
            )
        }
    }

    static func registerAccountsAnonymousRatingsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit.
        // 1. Verification tokens from before the rule "only the link that verified answers a second click, and
        //    a reset retires pending sign-ups' links" are dropped: used ones (the retired could not be told
        //    from the one that verified) and unused ones of verified accounts (a pending sign-up's link, which
        //    carries that sign-up's password, on an account verified by a reset).
        // 2. Ratings get a public id (the sale's id for existing ones, which all have a name) that orders and
        //    pages them, so an anonymous rating shows neither its rater nor its sale; and the anonymous flag.
        migrator.registerMigration("accounts-v5") { db in
            try db.execute(
                sql: """
                    DELETE FROM oneTimeToken WHERE kind = 'emailVerification'
                        AND (usedAt IS NOT NULL OR accountID IN (SELECT id FROM account WHERE verified = 1));
                    ALTER TABLE rating ADD COLUMN ratingID TEXT NOT NULL DEFAULT '';
                    ALTER TABLE rating ADD COLUMN anonymous INTEGER NOT NULL DEFAULT 0 CHECK (anonymous IN (0, 1));
                    UPDATE rating SET ratingID = saleID;
                    CREATE UNIQUE INDEX rating_ratingID ON rating(ratingID);
                    DROP INDEX rating_sellerID_createdAt_saleID;
                    CREATE INDEX rating_sellerID_createdAt_ratingID ON rating(sellerID, createdAt, ratingID);
                    """
            )
        }
    }

    static func registerBidsClosedListingsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Listings closed outside the bid flow (withdrawn, or marked sold by the
        // seller): PlaceBid refuses them, so a bid racing the close cannot stay live.
        migrator.registerMigration("bids-v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE closedListing (
                        listingID TEXT NOT NULL PRIMARY KEY,
                        closedAt INTEGER NOT NULL
                    ) STRICT, WITHOUT ROWID;
                    """
            )
        }
    }

    static func registerBidEventsByTimeMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Bid events by time, for the relay that publishes recent events to
        // the Chat feed again after a restart.
        migrator.registerMigration("bids-v3") { db in
            try db.execute(sql: "CREATE INDEX bidEvent_createdAt ON bidEvent(createdAt)")
        }
    }

    static func registerBidsHandoffPlacesMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. The hand-off place picked for a sale, copied from the operator's list
        // so that editing the list later does not change sales: all five set, or all NULL.
        migrator.registerMigration("bids-v4") { db in
            try db.execute(
                sql: """
                    ALTER TABLE sale ADD COLUMN handoffPlaceID TEXT;
                    ALTER TABLE sale ADD COLUMN handoffPlaceName TEXT;
                    ALTER TABLE sale ADD COLUMN handoffPlaceLatitude REAL;
                    ALTER TABLE sale ADD COLUMN handoffPlaceLongitude REAL;
                    ALTER TABLE sale ADD COLUMN handoffPlaceHours TEXT;
                    """
            )
        }
    }

    static func registerAccountsEmailChangeAndDeletionMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. E-mail change tokens carry the new address; a deleted account keeps its row
        // (id, dates, counts) with the time it was deleted, its personal fields erased.
        migrator.registerMigration("accounts-v6") { db in
            try db.execute(
                sql: """
                    ALTER TABLE oneTimeToken ADD COLUMN newEmail TEXT;
                    ALTER TABLE account ADD COLUMN deletedAt INTEGER;
                    """
            )
        }
    }

    static func registerAccountsExternalIdentitiesMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. The account each external identity provider's user (issuer, subject) is
        // linked to, for log-ins with an OpenID Connect ID token.
        migrator.registerMigration("accounts-v7") { db in
            try db.execute(
                sql: """
                    CREATE TABLE externalIdentity (
                        issuer TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        accountID TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        createdAt INTEGER NOT NULL,
                        PRIMARY KEY (issuer, subject)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX externalIdentity_accountID ON externalIdentity(accountID);
                    """
            )
        }
    }
}
