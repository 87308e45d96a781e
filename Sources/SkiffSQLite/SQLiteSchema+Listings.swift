import GRDB

extension SQLiteSchema {
    // MARK: Listings

    static func registerListingsMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit; append "listings-v2" instead. Dates are INTEGER milliseconds since
        // 1970. `docID` is the stable rowid the FTS5 index refers to; `id` is the public id. The search*
        // columns hold the text of `SearchText.indexText` (tokens already folded and split by the shared
        // tokenizer); `listingSearch` is an external-content FTS5 index over them, kept in sync by triggers.
        migrator.registerMigration("listings-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE listing (
                        docID INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        sellerID TEXT NOT NULL,
                        title TEXT NOT NULL,
                        titleKey TEXT NOT NULL,
                        description TEXT NOT NULL,
                        priceCents INTEGER NOT NULL CHECK (priceCents >= 0),
                        category TEXT NOT NULL,
                        condition TEXT NOT NULL,
                        size TEXT NOT NULL,
                        tags TEXT NOT NULL,
                        madeOnCampus INTEGER NOT NULL CHECK (madeOnCampus IN (0, 1)),
                        biddingEnabled INTEGER NOT NULL CHECK (biddingEnabled IN (0, 1)),
                        anonymous INTEGER NOT NULL CHECK (anonymous IN (0, 1)),
                        zipCode TEXT NOT NULL,
                        latitude REAL,
                        longitude REAL,
                        imageIDs TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('active', 'sold', 'withdrawn')),
                        createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL,
                        searchTitle TEXT NOT NULL,
                        searchDescription TEXT NOT NULL,
                        searchTags TEXT NOT NULL
                    ) STRICT;
                    CREATE INDEX listing_status_createdAt_id ON listing(status, createdAt, id);
                    CREATE INDEX listing_status_priceCents ON listing(status, priceCents, createdAt, id);
                    CREATE INDEX listing_status_titleKey ON listing(status, titleKey, createdAt, id);
                    CREATE INDEX listing_sellerID_createdAt_id ON listing(sellerID, createdAt, id);
                    CREATE INDEX listing_latitude_longitude ON listing(latitude, longitude);

                    CREATE TABLE listingTag (
                        listingID TEXT NOT NULL REFERENCES listing(id) ON DELETE CASCADE,
                        tag TEXT NOT NULL,
                        PRIMARY KEY (listingID, tag)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX listingTag_tag_listingID ON listingTag(tag, listingID);

                    CREATE TABLE listingRequest (
                        sellerID TEXT NOT NULL,
                        requestID TEXT NOT NULL,
                        listingID TEXT NOT NULL REFERENCES listing(id) ON DELETE CASCADE,
                        fingerprint TEXT NOT NULL,
                        PRIMARY KEY (sellerID, requestID)
                    ) STRICT, WITHOUT ROWID;

                    CREATE TABLE image (
                        id TEXT NOT NULL PRIMARY KEY,
                        ownerID TEXT NOT NULL,
                        contentType TEXT NOT NULL,
                        sizeBytes INTEGER NOT NULL CHECK (sizeBytes > 0),
                        bytes BLOB NOT NULL,
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX image_ownerID ON image(ownerID);

                    CREATE TABLE savedListing (
                        userID TEXT NOT NULL,
                        listingID TEXT NOT NULL REFERENCES listing(id) ON DELETE CASCADE,
                        savedAt INTEGER NOT NULL,
                        PRIMARY KEY (userID, listingID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX savedListing_userID_savedAt_listingID ON savedListing(userID, savedAt, listingID);
                    CREATE INDEX savedListing_listingID ON savedListing(listingID);

                    CREATE TABLE listingChange (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        listingID TEXT NOT NULL,
                        title TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        newPriceCents INTEGER NOT NULL,
                        oldPriceCents INTEGER NOT NULL,
                        changedAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX listingChange_listingID_sequence ON listingChange(listingID, sequence);
                    CREATE INDEX listingChange_changedAt ON listingChange(changedAt);

                    CREATE VIRTUAL TABLE listingSearch USING fts5(
                        searchTitle, searchDescription, searchTags,
                        content = 'listing', content_rowid = 'docID',
                        tokenize = 'unicode61 remove_diacritics 2'
                    );
                    CREATE TRIGGER listing_ai AFTER INSERT ON listing BEGIN
                        INSERT INTO listingSearch(rowid, searchTitle, searchDescription, searchTags)
                        VALUES (new.docID, new.searchTitle, new.searchDescription, new.searchTags);
                    END;
                    CREATE TRIGGER listing_ad AFTER DELETE ON listing BEGIN
                        INSERT INTO listingSearch(listingSearch, rowid, searchTitle, searchDescription, searchTags)
                        VALUES ('delete', old.docID, old.searchTitle, old.searchDescription, old.searchTags);
                    END;
                    CREATE TRIGGER listing_au AFTER UPDATE OF searchTitle, searchDescription, searchTags ON listing
                    BEGIN
                        INSERT INTO listingSearch(listingSearch, rowid, searchTitle, searchDescription, searchTags)
                        VALUES ('delete', old.docID, old.searchTitle, old.searchDescription, old.searchTags);
                        INSERT INTO listingSearch(rowid, searchTitle, searchDescription, searchTags)
                        VALUES (new.docID, new.searchTitle, new.searchDescription, new.searchTags);
                    END;
                    """
            )
        }
    }

    /// "listings-v2": the FTS5 index's token instances as a table (`fts5vocab`, type `instance`: one row per
    /// token occurrence, with its document and column), so that relevance is computed in SQL from the index
    /// rather than by reading and tokenizing every match. A view on the index: it stores nothing.
    static func registerListingsSearchInstancesMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listings-v2") { db in
            try db.execute(
                sql: "CREATE VIRTUAL TABLE listingSearchInstance USING fts5vocab(listingSearch, instance)"
            )
        }
    }

    /// "listings-v3": what lets a search page cost about its own rows whatever the table holds.
    /// - Order indexes that also carry the filter columns (category, condition, price, made on campus),
    ///   so that walking an order checks the filters in the index and reads a table row only for a match;
    ///   and the same three orders led by the category, the filter the apps set most.
    /// - `listingWord`: each listing's distinct search tokens, keyed (listing, token), so that a keyword
    ///   is checked for one listing with one B-tree probe (`EXISTS`), a prefix too (a range of one
    ///   listing's tokens). Kept by triggers from the `search*` columns, which hold the shared tokenizer's
    ///   tokens (letters and numbers only) joined by spaces; `json_each` splits them.
    /// - `listingWordCount`: how many listings hold each token (kept by triggers on `listingWord`), which
    ///   decides between collecting a keyword's matches and walking an order (see `ListingSearchSQL.plan`).
    static func registerListingsWalkIndexesMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listings-v3") { db in
            let words = """
                SELECT new.docID, j.value FROM json_each(
                    '["' || replace(new.searchTitle || ' ' || new.searchDescription || ' ' || new.searchTags,
                                    ' ', '","') || '"]'
                ) AS j WHERE j.value <> ''
                """
            try db.execute(
                sql: """
                    DROP INDEX listing_status_createdAt_id;
                    DROP INDEX listing_status_priceCents;
                    DROP INDEX listing_status_titleKey;
                    CREATE INDEX listing_newest
                        ON listing(status, createdAt, id, category, condition, priceCents, madeOnCampus);
                    CREATE INDEX listing_price
                        ON listing(status, priceCents, createdAt, id, category, condition, madeOnCampus);
                    CREATE INDEX listing_title
                        ON listing(status, titleKey, createdAt DESC, id DESC, category, condition, priceCents, madeOnCampus);
                    CREATE INDEX listing_category_newest
                        ON listing(status, category, createdAt, id, condition, priceCents, madeOnCampus);
                    CREATE INDEX listing_category_price
                        ON listing(status, category, priceCents, createdAt, id, condition, madeOnCampus);
                    CREATE INDEX listing_category_title
                        ON listing(status, category, titleKey, createdAt DESC, id DESC, condition, priceCents, madeOnCampus);
                    CREATE TABLE listingWord (
                        docID INTEGER NOT NULL,
                        word TEXT NOT NULL,
                        PRIMARY KEY (docID, word)
                    ) WITHOUT ROWID, STRICT;
                    CREATE TRIGGER listing_words_ai AFTER INSERT ON listing BEGIN
                        INSERT OR IGNORE INTO listingWord (docID, word) \(words);
                    END;
                    CREATE TRIGGER listing_words_ad AFTER DELETE ON listing BEGIN
                        DELETE FROM listingWord WHERE docID = old.docID;
                    END;
                    CREATE TRIGGER listing_words_au AFTER UPDATE OF searchTitle, searchDescription, searchTags ON listing
                    BEGIN
                        DELETE FROM listingWord WHERE docID = old.docID;
                        INSERT OR IGNORE INTO listingWord (docID, word) \(words);
                    END;
                    INSERT OR IGNORE INTO listingWord (docID, word)
                        SELECT listing.docID, j.value FROM listing, json_each(
                            '["' || replace(listing.searchTitle || ' ' || listing.searchDescription || ' '
                                            || listing.searchTags, ' ', '","') || '"]'
                        ) AS j WHERE j.value <> '';
                    CREATE TABLE listingWordCount (
                        word TEXT PRIMARY KEY,
                        listings INTEGER NOT NULL
                    ) WITHOUT ROWID, STRICT;
                    INSERT INTO listingWordCount (word, listings) SELECT word, COUNT(*) FROM listingWord GROUP BY word;
                    CREATE TRIGGER listing_word_ai AFTER INSERT ON listingWord BEGIN
                        INSERT INTO listingWordCount (word, listings) VALUES (new.word, 1)
                            ON CONFLICT (word) DO UPDATE SET listings = listings + 1;
                    END;
                    CREATE TRIGGER listing_word_ad AFTER DELETE ON listingWord BEGIN
                        UPDATE listingWordCount SET listings = listings - 1 WHERE word = old.word;
                        DELETE FROM listingWordCount WHERE word = old.word AND listings <= 0;
                    END;
                    """
            )
        }
    }

    /// Shipped: do not edit. Public comments on listings and the sellers' replies (`replyToID`): by
    /// listing in posting order (ListComments), by the comment replied to (deleting a comment deletes its
    /// replies), and by time (the feed relay).
    static func registerListingCommentsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listings-v4") { db in
            try db.execute(
                sql: """
                    CREATE TABLE listingComment (
                        id TEXT NOT NULL PRIMARY KEY,
                        listingID TEXT NOT NULL REFERENCES listing(id),
                        authorID TEXT NOT NULL,
                        replyToID TEXT,
                        text TEXT NOT NULL CHECK (text <> ''),
                        createdAt INTEGER NOT NULL
                    ) STRICT;
                    CREATE INDEX listingComment_listingID_createdAt_id ON listingComment(listingID, createdAt, id);
                    CREATE INDEX listingComment_replyToID ON listingComment(replyToID) WHERE replyToID IS NOT NULL;
                    CREATE INDEX listingComment_createdAt_id ON listingComment(createdAt, id);
                    """
            )
        }
    }

    /// Shipped once merged: do not edit. Each listing's search point — where distance search places it: its
    /// own point (`latitude`, `longitude`), or for a listing posted with only a zip code, its zip code's
    /// centroid — in `searchLatitude`, `searchLongitude`, with the coordinate index searches use.
    ///
    /// The migration fills the points it can in SQL (listings with their own point). The centroids come
    /// from the app's ZIP-code table (`ZipCentroids`), which a migration may not use (migrations are SQL
    /// only, so that later code cannot change what they do) and which can change without a schema change
    /// (a new Census vintage). So the store fills them, at open (`SQLiteListingsStore.fillSearchPoints`):
    /// `listingSearchPointVersion` records the version of the table the zip-only listings' points were
    /// computed with (none yet, after this migration); when it differs from the app's table, the store
    /// recomputes them in bounded batches, then records the version. Listings written afterwards carry
    /// their search point.
    static func registerListingsSearchPointsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("listings-v5") { db in
            try db.execute(
                sql: """
                    ALTER TABLE listing ADD COLUMN searchLatitude REAL;
                    ALTER TABLE listing ADD COLUMN searchLongitude REAL;
                    UPDATE listing SET searchLatitude = latitude, searchLongitude = longitude
                        WHERE latitude IS NOT NULL;
                    CREATE INDEX listing_searchLatitude_searchLongitude ON listing(searchLatitude, searchLongitude);
                    CREATE TABLE listingSearchPointVersion (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        zipCentroidsVersion TEXT NOT NULL
                    ) STRICT;
                    """
            )
        }
    }

    /// "listings-v6": the grid cell of each listing's search point (``GridCells/key(latitude:longitude:)`` of
    /// `searchLatitude`, `searchLongitude`; `NULL` without one), an index `(cell, status, createdAt, id)` that
    /// walks one cell's listings of one status newest first, and `listingCell`, the cells holding at least
    /// one listing with their listing counts (kept by triggers). A search in distance order walks the
    /// circle's cells band by band of shown distance (``SQLiteListingsStore/bandWalk(_:_:occupied:size:shapes:groupSize:)``)
    /// instead of reading every listing in the circle.
    ///
    /// Existing listings' cells are computed in Swift (the grid's cosine is not SQL), once, in the
    /// migration's transaction; later changes of a search point (a write, or
    /// `SQLiteListingsStore.fillSearchPoints` for a new ZIP-code table) write the cell with it.
    static func registerListingsCellsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit.
        migrator.registerMigration("listings-v6") { db in
            try db.execute(sql: "ALTER TABLE listing ADD COLUMN cell INTEGER")
            let points = try Row.fetchAll(
                db,
                sql: "SELECT docID, searchLatitude, searchLongitude FROM listing WHERE searchLatitude IS NOT NULL"
            )
            let update = try db.makeStatement(sql: "UPDATE listing SET cell = ? WHERE docID = ?")
            for row in points {
                let docID: Int64 = row[0]
                try update.execute(arguments: [GridCells.key(latitude: row[1], longitude: row[2]), docID])
            }
            try db.execute(
                sql: """
                    CREATE INDEX listing_cell_status_createdAt_id ON listing(cell, status, createdAt, id)
                        WHERE cell IS NOT NULL;
                    CREATE TABLE listingCell (cell INTEGER PRIMARY KEY, listings INTEGER NOT NULL) STRICT;
                    INSERT INTO listingCell (cell, listings)
                        SELECT cell, COUNT(*) FROM listing WHERE cell IS NOT NULL GROUP BY cell;
                    CREATE TRIGGER listing_cell_insert AFTER INSERT ON listing
                    WHEN new.cell IS NOT NULL BEGIN
                        INSERT INTO listingCell (cell, listings) VALUES (new.cell, 1)
                            ON CONFLICT (cell) DO UPDATE SET listings = listings + 1;
                    END;
                    CREATE TRIGGER listing_cell_delete AFTER DELETE ON listing
                    WHEN old.cell IS NOT NULL BEGIN
                        UPDATE listingCell SET listings = listings - 1 WHERE cell = old.cell;
                        DELETE FROM listingCell WHERE cell = old.cell AND listings <= 0;
                    END;
                    CREATE TRIGGER listing_cell_update AFTER UPDATE OF cell ON listing
                    WHEN old.cell IS NOT new.cell BEGIN
                        UPDATE listingCell SET listings = listings - 1 WHERE cell = old.cell;
                        DELETE FROM listingCell WHERE cell = old.cell AND listings <= 0;
                        INSERT INTO listingCell (cell, listings) SELECT new.cell, 1 WHERE new.cell IS NOT NULL
                            ON CONFLICT (cell) DO UPDATE SET listings = listings + 1;
                    END;
                    """
            )
        }
    }
}

extension SQLiteSchema {
    /// "listings-v7": `listingWordImpact`, an impact-ordered word index. One row per (listing, distinct search
    /// token) with the token's relevance points in that listing — ``SearchText``'s score of a one-word query
    /// for that token: 3 for each title occurrence, 2 for each tag, 1 for each description occurrence — keyed
    /// `(word, status, points, createdAt, id)`. Walked backwards, a word's rows of one status come in relevance
    /// order (points, then newest first), so a relevance search for one word reads about its page
    /// (`ListingSearchSQL.Plan.impact`) instead of scoring every listing that holds the word.
    ///
    /// Kept by triggers from the `search*` columns (the shared tokenizer's tokens, letters and numbers only,
    /// joined by spaces, split by `json_each`) and the status; a listing's rows are removed by their whole
    /// keys, recomputed from the old values, so no second index is needed.
    static func registerListingsImpactMigration(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit.
        migrator.registerMigration("listings-v7") { db in
            /// One (word, weight) row per token occurrence of `column` in `row` (a table or `new`, `old`).
            func tokens(_ row: String, _ column: String, _ weight: Int, docID: Bool = false) -> String {
                let from = docID ? ", \(row).docID AS docID FROM \(row)," : " FROM"
                return """
                    SELECT j.value AS word, \(weight) AS weight\(from) \
                    json_each('["' || replace(\(row).\(column), ' ', '","') || '"]') AS j
                    """
            }
            /// The (word, points) pairs of the listing `row` (`new` or `old`).
            func points(_ row: String) -> String {
                """
                SELECT word, SUM(weight) AS points FROM (\(tokens(row, "searchTitle", 3)) UNION ALL \
                \(tokens(row, "searchTags", 2)) UNION ALL \(tokens(row, "searchDescription", 1))) \
                WHERE word <> '' GROUP BY word
                """
            }
            let insert = """
                INSERT INTO listingWordImpact (word, status, points, createdAt, id, docID)
                    SELECT word, new.status, points, new.createdAt, new.id, new.docID FROM (\(points("new")));
                """
            let delete = """
                DELETE FROM listingWordImpact WHERE (word, status, points, createdAt, id) IN
                    (SELECT word, old.status, points, old.createdAt, old.id FROM (\(points("old"))));
                """
            try db.execute(
                sql: """
                    CREATE TABLE listingWordImpact (
                        word TEXT NOT NULL,
                        status TEXT NOT NULL,
                        points INTEGER NOT NULL,
                        createdAt INTEGER NOT NULL,
                        id TEXT NOT NULL,
                        docID INTEGER NOT NULL,
                        PRIMARY KEY (word, status, points, createdAt, id)
                    ) WITHOUT ROWID, STRICT;
                    CREATE TRIGGER listing_impact_ai AFTER INSERT ON listing BEGIN
                        \(insert)
                    END;
                    CREATE TRIGGER listing_impact_ad AFTER DELETE ON listing BEGIN
                        \(delete)
                    END;
                    CREATE TRIGGER listing_impact_au
                    AFTER UPDATE OF searchTitle, searchDescription, searchTags, status, createdAt, id ON listing
                    BEGIN
                        \(delete)
                        \(insert)
                    END;
                    """
            )
            // Existing listings, 10,000 row ids at a time, so that the tokens grouped in temporary storage stay
            // bounded whatever the table holds; grouped by word first, so rows go in near key order.
            let batch = "WHERE listing.docID >= :first AND listing.docID < :first + 10000"
            let fill = try db.makeStatement(
                sql: """
                    INSERT INTO listingWordImpact (word, status, points, createdAt, id, docID)
                        SELECT t.word, listing.status, SUM(t.weight), listing.createdAt, listing.id, listing.docID
                        FROM (\(tokens("listing", "searchTitle", 3, docID: true)) \(batch) UNION ALL \
                              \(tokens("listing", "searchTags", 2, docID: true)) \(batch) UNION ALL \
                              \(tokens("listing", "searchDescription", 1, docID: true)) \(batch)) AS t
                        JOIN listing ON listing.docID = t.docID
                        WHERE t.word <> ''
                        GROUP BY t.word, t.docID
                    """
            )
            let last = try Int64.fetchOne(db, sql: "SELECT MAX(docID) FROM listing") ?? 0
            for first in stride(from: Int64(0), through: last, by: 10_000) {
                try fill.execute(arguments: ["first": first])
            }
        }
    }
}

extension SQLiteSchema {
    /// "listings-v8": `listing_docID_keys`, each listing's filter and order columns keyed by its row id, so that a
    /// search which collects its keyword matches from FTS5 (`ListingSearchSQL.Plan.collect`) filters, orders and
    /// cuts them to the page from this narrow index and reads a table row only for the page. Before, it read
    /// every match's whole row (a page of the table each, at random): about 3 ms of a two-word search's 4 ms at
    /// 100,000 listings.
    static func registerListingsKeysMigration(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit.
        migrator.registerMigration("listings-v8") { db in
            try db.execute(
                sql: """
                    CREATE INDEX listing_docID_keys
                        ON listing(docID, status, createdAt, id, category, condition, priceCents, madeOnCampus, titleKey);
                    """
            )
        }
    }
}
