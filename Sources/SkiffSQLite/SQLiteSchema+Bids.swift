import GRDB

extension SQLiteSchema {
    // MARK: Bids

    static func registerBidsMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Dates are INTEGER milliseconds since 1970. Ids of users and listings are
        // not foreign keys: those rows belong to other services (and, deployed apart, other databases).
        // `sale.listingID UNIQUE` is the last line of defence against selling a listing twice, and the
        // partial unique index on live bids against two live bids of one bidder on one listing.
        migrator.registerMigration("bids-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE bid (
                        id TEXT NOT NULL PRIMARY KEY,
                        listingID TEXT NOT NULL,
                        sellerID TEXT NOT NULL,
                        bidderID TEXT NOT NULL,
                        amountCents INTEGER NOT NULL CHECK (amountCents > 0),
                        state TEXT NOT NULL CHECK (state IN
                            ('pending', 'countered', 'accepted', 'rejected', 'withdrawn', 'superseded')),
                        counterAmountCents INTEGER NOT NULL DEFAULT 0,
                        rejectionReason TEXT NOT NULL DEFAULT '',
                        acceptedAmountCents INTEGER NOT NULL DEFAULT 0,
                        saleID TEXT,
                        requestID TEXT,
                        createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX bid_listingID_amountCents ON bid(listingID, amountCents DESC, createdAt, id);
                    CREATE INDEX bid_bidderID_createdAt_id ON bid(bidderID, createdAt, id);
                    CREATE UNIQUE INDEX bid_bidderID_requestID ON bid(bidderID, requestID)
                        WHERE requestID IS NOT NULL;
                    CREATE UNIQUE INDEX bid_live_listingID_bidderID ON bid(listingID, bidderID)
                        WHERE state IN ('pending', 'countered');

                    CREATE TABLE sale (
                        id TEXT NOT NULL PRIMARY KEY,
                        listingID TEXT NOT NULL UNIQUE,
                        listingTitle TEXT NOT NULL,
                        category TEXT NOT NULL,
                        bidID TEXT NOT NULL UNIQUE REFERENCES bid(id),
                        buyerID TEXT NOT NULL,
                        sellerID TEXT NOT NULL,
                        amountCents INTEGER NOT NULL CHECK (amountCents > 0),
                        state TEXT NOT NULL CHECK (state IN ('pendingHandoff', 'completed')),
                        conversationID TEXT NOT NULL DEFAULT '',
                        createdAt INTEGER NOT NULL,
                        buyerConfirmedAt INTEGER,
                        sellerConfirmedAt INTEGER,
                        completedAt INTEGER
                    ) STRICT;
                    CREATE INDEX sale_buyerID_createdAt_id ON sale(buyerID, createdAt, id);
                    CREATE INDEX sale_sellerID_createdAt_id ON sale(sellerID, createdAt, id);

                    CREATE TABLE acceptanceClaim (
                        listingID TEXT NOT NULL PRIMARY KEY,
                        bidID TEXT NOT NULL REFERENCES bid(id),
                        kind TEXT NOT NULL CHECK (kind IN ('bid', 'counter')),
                        claimedAt INTEGER NOT NULL
                    ) STRICT;

                    CREATE TABLE bidEvent (
                        userID TEXT NOT NULL,
                        sequence INTEGER NOT NULL CHECK (sequence > 0),
                        kind TEXT NOT NULL,
                        bidID TEXT NOT NULL,
                        listingID TEXT NOT NULL,
                        saleID TEXT,
                        amountCents INTEGER NOT NULL,
                        createdAt INTEGER NOT NULL,
                        PRIMARY KEY (userID, sequence)
                    ) STRICT, WITHOUT ROWID;
                    """
            )
        }
    }
}
