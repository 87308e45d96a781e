import GRDB
import SkiffLostFound

extension SQLiteSchema {
    // MARK: LostFound

    static func registerLostFoundMigrations(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit; append "lostfound-v2" instead. Dates are INTEGER milliseconds
        // since 1970. `docID` is the stable rowid the FTS5 index refers to; `id` is the public id.
        // `buildingKey` is `LostFoundRules.buildingKey` of the building (what filters compare). The search*
        // columns hold `TextSearch.indexText` of title and description (tokens already folded and split by
        // the shared tokenizer); `lostFoundItemSearch` is an external-content FTS5 index over them, kept in
        // sync by triggers. `lostFoundMatch` holds the recorded matches, one row per (found, lost) pair.
        migrator.registerMigration("lostfound-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE lostFoundItem (
                        docID INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        reporterID TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('lost', 'found')),
                        status TEXT NOT NULL CHECK (status IN ('lost', 'found', 'returned')),
                        title TEXT NOT NULL,
                        description TEXT NOT NULL,
                        category TEXT NOT NULL,
                        building TEXT NOT NULL,
                        buildingKey TEXT NOT NULL,
                        latitude REAL,
                        longitude REAL,
                        occurredAt INTEGER NOT NULL,
                        contactInstructions TEXT NOT NULL,
                        imageID TEXT,
                        createdAt INTEGER NOT NULL,
                        updatedAt INTEGER NOT NULL,
                        returnedAt INTEGER,
                        searchTitle TEXT NOT NULL,
                        searchDescription TEXT NOT NULL
                    ) STRICT;
                    CREATE INDEX lostFoundItem_status_createdAt_id ON lostFoundItem(status, createdAt, id);
                    CREATE INDEX lostFoundItem_status_category_occurredAt
                        ON lostFoundItem(status, category, occurredAt);
                    CREATE INDEX lostFoundItem_buildingKey ON lostFoundItem(buildingKey);
                    CREATE INDEX lostFoundItem_reporterID_createdAt ON lostFoundItem(reporterID, createdAt);
                    CREATE INDEX lostFoundItem_latitude_longitude ON lostFoundItem(latitude, longitude);

                    CREATE TABLE lostFoundMatch (
                        foundItemID TEXT NOT NULL REFERENCES lostFoundItem(id) ON DELETE CASCADE,
                        lostItemID TEXT NOT NULL REFERENCES lostFoundItem(id) ON DELETE CASCADE,
                        score REAL NOT NULL CHECK (score >= 0 AND score <= 1),
                        distanceKm REAL,
                        matchedAt INTEGER NOT NULL,
                        PRIMARY KEY (foundItemID, lostItemID)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX lostFoundMatch_lostItemID ON lostFoundMatch(lostItemID);

                    CREATE VIRTUAL TABLE lostFoundItemSearch USING fts5(
                        searchTitle, searchDescription,
                        content = 'lostFoundItem', content_rowid = 'docID',
                        tokenize = 'unicode61 remove_diacritics 2'
                    );
                    CREATE TRIGGER lostFoundItem_ai AFTER INSERT ON lostFoundItem BEGIN
                        INSERT INTO lostFoundItemSearch(rowid, searchTitle, searchDescription)
                        VALUES (new.docID, new.searchTitle, new.searchDescription);
                    END;
                    CREATE TRIGGER lostFoundItem_ad AFTER DELETE ON lostFoundItem BEGIN
                        INSERT INTO lostFoundItemSearch(lostFoundItemSearch, rowid, searchTitle, searchDescription)
                        VALUES ('delete', old.docID, old.searchTitle, old.searchDescription);
                    END;
                    CREATE TRIGGER lostFoundItem_au AFTER UPDATE OF searchTitle, searchDescription ON lostFoundItem
                    BEGIN
                        INSERT INTO lostFoundItemSearch(lostFoundItemSearch, rowid, searchTitle, searchDescription)
                        VALUES ('delete', old.docID, old.searchTitle, old.searchDescription);
                        INSERT INTO lostFoundItemSearch(rowid, searchTitle, searchDescription)
                        VALUES (new.docID, new.searchTitle, new.searchDescription);
                    END;
                    """
            )
        }
    }

    static func registerLostFoundMatchesByTimeMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. Matches by time, for the relay that publishes recent match
        // notifications to the Chat feed again after a restart.
        migrator.registerMigration("lostfound-v2") { db in
            try db.execute(sql: "CREATE INDEX lostFoundMatch_matchedAt ON lostFoundMatch(matchedAt)")
        }
    }

    /// "lostfound-v4": a generation counted up by every change to `lostFoundItem` (triggers), so a report can
    /// score its candidates on a reader and record the result in the writer only if no item changed since
    /// its snapshot (``SQLiteLostFoundStore/reportItem(_:matcher:)``).
    static func registerLostFoundGenerationMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("lostfound-v4") { db in
            try db.execute(
                sql: """
                    CREATE TABLE lostFoundGeneration (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        value INTEGER NOT NULL
                    ) STRICT;
                    INSERT INTO lostFoundGeneration (id, value) VALUES (1, 0);
                    CREATE TRIGGER lostFoundItem_generation_insert AFTER INSERT ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                    END;
                    CREATE TRIGGER lostFoundItem_generation_update AFTER UPDATE ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                    END;
                    CREATE TRIGGER lostFoundItem_generation_delete AFTER DELETE ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                    END;
                    """
            )
        }
    }

    /// "lostfound-v5": the keywords of every open item, one row per (item, keyword), in the order a report takes
    /// its candidates (kind, category, keyword, then latest `occurredAt` first, ties the greater id), so a report
    /// walks its keywords' rows merged in that order and stops at its candidate limit
    /// (``SQLiteLostFoundStore/matchCandidates(_:for:matcher:shapes:)``). The store writes the rows from
    /// `LostFoundMatcher.keywords` as items are inserted, changed and returned; this migration fills them for the
    /// items already stored, in SQL: the tokens of the `search*` columns (`TextSearch.indexText`, tokens of letters
    /// and numbers joined by spaces) longer than one code point and not a stop word of
    /// `LostFoundMatcher.stopWords` as it is when this migration ships. (Swift counts characters: a token of two
    /// code points forming one character, rare, gets a row Swift would not write; no report looks it up, since
    /// reports look up their own keywords, and it goes at the item's next change.)
    ///
    /// `lostFoundItem_createdAt_id` lets a search whose filters all keep many items walk every item newest
    /// first, whatever statuses it asks for (`SQLiteLostFoundStore.driver`).
    ///
    /// It also remembers the last 1,024 changes to items (`lostFoundChange`, written by the generation
    /// triggers of "lostfound-v4", replaced here): each change's generation, and the kind, category,
    /// `occurredAt` and openness of the item before and after it, so a report scored on a reader can tell in
    /// the writer whether a change since could touch its candidates
    /// (``SQLiteLostFoundStore/candidatesUnchanged(_:since:now:for:matcher:)``).
    static func registerLostFoundMatchKeysMigration(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit.
        migrator.registerMigration("lostfound-v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE lostFoundMatchKey (
                        kind TEXT NOT NULL,
                        category TEXT NOT NULL,
                        keyword TEXT NOT NULL,
                        occurredAt INTEGER NOT NULL,
                        id TEXT NOT NULL,
                        docID INTEGER NOT NULL,
                        PRIMARY KEY (kind, category, keyword, occurredAt, id)
                    ) STRICT, WITHOUT ROWID;
                    CREATE INDEX lostFoundMatchKey_docID ON lostFoundMatchKey(docID);
                    CREATE INDEX lostFoundItem_createdAt_id ON lostFoundItem(createdAt, id);
                    CREATE TRIGGER lostFoundItem_matchKey_delete AFTER DELETE ON lostFoundItem BEGIN
                        DELETE FROM lostFoundMatchKey WHERE docID = old.docID;
                    END;

                    CREATE TABLE lostFoundChange (
                        generation INTEGER PRIMARY KEY,
                        docID INTEGER NOT NULL,
                        oldKind TEXT,
                        oldCategory TEXT,
                        oldOccurredAt INTEGER,
                        oldOpen INTEGER,
                        newKind TEXT,
                        newCategory TEXT,
                        newOccurredAt INTEGER,
                        newOpen INTEGER
                    ) STRICT;
                    DROP TRIGGER lostFoundItem_generation_insert;
                    DROP TRIGGER lostFoundItem_generation_update;
                    DROP TRIGGER lostFoundItem_generation_delete;
                    CREATE TRIGGER lostFoundItem_generation_insert AFTER INSERT ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                        INSERT INTO lostFoundChange (generation, docID, newKind, newCategory, newOccurredAt, newOpen)
                        SELECT value, new.docID, new.kind, new.category, new.occurredAt, new.status <> 'returned'
                        FROM lostFoundGeneration WHERE id = 1;
                        DELETE FROM lostFoundChange
                        WHERE generation <= (SELECT value - 1024 FROM lostFoundGeneration WHERE id = 1);
                    END;
                    CREATE TRIGGER lostFoundItem_generation_update AFTER UPDATE ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                        INSERT INTO lostFoundChange (generation, docID, oldKind, oldCategory, oldOccurredAt, oldOpen,
                            newKind, newCategory, newOccurredAt, newOpen)
                        SELECT value, new.docID, old.kind, old.category, old.occurredAt, old.status <> 'returned',
                            new.kind, new.category, new.occurredAt, new.status <> 'returned'
                        FROM lostFoundGeneration WHERE id = 1;
                        DELETE FROM lostFoundChange
                        WHERE generation <= (SELECT value - 1024 FROM lostFoundGeneration WHERE id = 1);
                    END;
                    CREATE TRIGGER lostFoundItem_generation_delete AFTER DELETE ON lostFoundItem BEGIN
                        UPDATE lostFoundGeneration SET value = value + 1 WHERE id = 1;
                        INSERT INTO lostFoundChange (generation, docID, oldKind, oldCategory, oldOccurredAt, oldOpen)
                        SELECT value, old.docID, old.kind, old.category, old.occurredAt, old.status <> 'returned'
                        FROM lostFoundGeneration WHERE id = 1;
                        DELETE FROM lostFoundChange
                        WHERE generation <= (SELECT value - 1024 FROM lostFoundGeneration WHERE id = 1);
                    END;
                    INSERT OR IGNORE INTO lostFoundMatchKey (kind, category, keyword, occurredAt, id, docID)
                    SELECT i.kind, i.category, w.value, i.occurredAt, i.id, i.docID
                    FROM lostFoundItem i,
                        json_each('["' || replace(i.searchTitle || ' ' || i.searchDescription, ' ', '","') || '"]') w
                    WHERE i.status <> 'returned' AND length(w.value) > 1 AND w.value NOT IN (
                        'a', 'an', 'and', 'are', 'at', 'by', 'for', 'found', 'from', 'has', 'have', 'i', 'in', 'is',
                        'it', 'its', 'lost', 'me', 'my', 'near', 'of', 'on', 'or', 'the', 'this', 'that', 'to', 'was',
                        'with'
                    );
                    """
            )
        }
    }

    /// "lostfound-v6": the grid cell of each item's point (``LostFoundItemRow/cellKey(_:)``, `NULL` without a
    /// point), an index `(cell, createdAt, id)` that walks one cell's items newest first, and
    /// `lostFoundCell`, the cells holding at least one item with their item counts (kept by triggers). A
    /// search in distance order walks the circle's cells band by band of shown distance
    /// (``SQLiteLostFoundStore/bandWalk(_:_:size:shapes:groupSize:alwaysWalk:)``) instead of reading every item in the circle.
    ///
    /// Existing items' cells are computed in Swift (the grid's cosine is not SQL), once, in the migration's
    /// transaction.
    static func registerLostFoundCellsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped once merged: do not edit.
        migrator.registerMigration("lostfound-v6") { db in
            try db.execute(sql: "ALTER TABLE lostFoundItem ADD COLUMN cell INTEGER")
            let points = try Row.fetchAll(
                db,
                sql: "SELECT docID, latitude, longitude FROM lostFoundItem WHERE latitude IS NOT NULL"
            )
            let update = try db.makeStatement(sql: "UPDATE lostFoundItem SET cell = ? WHERE docID = ?")
            for row in points {
                let docID: Int64 = row[0]
                let point = (row[1] as Double?).flatMap { lat in
                    (row[2] as Double?).map { LostFoundPoint(latitude: lat, longitude: $0) }
                }
                try update.execute(arguments: [LostFoundItemRow.cellKey(point), docID])
            }
            try db.execute(
                sql: """
                    CREATE INDEX lostFoundItem_cell_createdAt_id ON lostFoundItem(cell, createdAt, id)
                        WHERE cell IS NOT NULL;
                    CREATE TABLE lostFoundCell (cell INTEGER PRIMARY KEY, items INTEGER NOT NULL) STRICT;
                    INSERT INTO lostFoundCell (cell, items)
                        SELECT cell, COUNT(*) FROM lostFoundItem WHERE cell IS NOT NULL GROUP BY cell;
                    CREATE TRIGGER lostFoundItem_cell_insert AFTER INSERT ON lostFoundItem
                    WHEN new.cell IS NOT NULL BEGIN
                        INSERT INTO lostFoundCell (cell, items) VALUES (new.cell, 1)
                            ON CONFLICT (cell) DO UPDATE SET items = items + 1;
                    END;
                    CREATE TRIGGER lostFoundItem_cell_delete AFTER DELETE ON lostFoundItem
                    WHEN old.cell IS NOT NULL BEGIN
                        UPDATE lostFoundCell SET items = items - 1 WHERE cell = old.cell;
                        DELETE FROM lostFoundCell WHERE cell = old.cell AND items <= 0;
                    END;
                    CREATE TRIGGER lostFoundItem_cell_update AFTER UPDATE OF cell ON lostFoundItem
                    WHEN old.cell IS NOT new.cell BEGIN
                        UPDATE lostFoundCell SET items = items - 1 WHERE cell = old.cell;
                        DELETE FROM lostFoundCell WHERE cell = old.cell AND items <= 0;
                        INSERT INTO lostFoundCell (cell, items) SELECT new.cell, 1 WHERE new.cell IS NOT NULL
                            ON CONFLICT (cell) DO UPDATE SET items = items + 1;
                    END;
                    """
            )
        }
    }

    static func registerLostFoundOwnItemsMigration(in migrator: inout DatabaseMigrator) {
        // Shipped: do not edit. A reporter's items newest first with the id as tie-break, so ListMyItems
        // walks the index in its order (no sort) from its keyset cursor.
        migrator.registerMigration("lostfound-v3") { db in
            try db.execute(
                sql: """
                    DROP INDEX lostFoundItem_reporterID_createdAt;
                    CREATE INDEX lostFoundItem_reporterID_createdAt_id ON lostFoundItem(reporterID, createdAt, id);
                    """
            )
        }
    }
}
