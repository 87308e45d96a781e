import Foundation
import GRDB
import SkiffAccounts
import SkiffDomain
import Testing

@testable import SkiffSQLite

@Suite("SQLite database")
struct SQLiteDatabaseTests {
    @Test("Reopening the file keeps the data and does not migrate again")
    func reopen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")

        let first = try await SQLiteDatabase.open(atPath: path)
        let account = try await first.accountsStore().createAccount(Fixture.account("Durable"))
        let session = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 60))
        try await first.accountsStore().createSession(session)
        try first.close()

        let second = try await SQLiteDatabase.open(atPath: path)
        defer { try? second.close() }
        let store = second.accountsStore()
        #expect(try await store.account(id: account.id) == account)
        #expect(try await store.account(email: account.email) == account)
        #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == session)
        let applied = try await second.pool.read { db in try SQLiteSchema.migrator.appliedIdentifiers(db) }
        #expect(applied == Set(SQLiteSchema.migrationIdentifiers))
        #expect(
            SQLiteSchema.migrationIdentifiers == [
                "accounts-v1", "listings-v1", "bids-v1", "chat-v1", "lostfound-v1", "bucketlist-v1", "accounts-v2",
                "bids-v2", "bids-v3", "lostfound-v2", "accounts-v3", "listings-v2", "bucketlist-v2", "listings-v3",
                "accounts-v4", "lostfound-v3", "accounts-v5", "bids-v4",
                "listings-v4", "accounts-v6", "accounts-v7", "listings-v5", "bucketlist-v3", "lostfound-v4", "chat-v2",
                "bucketlist-v4", "lostfound-v5", "lostfound-v6", "listings-v6", "listings-v7", "listings-v8",
            ]
        )
    }

    @Test("The writer runs WAL with synchronous = FULL and foreign keys on; integrity check passes")
    func pragmas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        _ = try await database.accountsStore().createAccounts(["One", "Two", "Three"])

        let (synchronous, journalMode, foreignKeys, integrity) = try await database.pool.writeWithoutTransaction { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                try Int.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try String.fetchAll(db, sql: "PRAGMA integrity_check")
            )
        }
        #expect(synchronous == 2)
        #expect(journalMode == "wal")
        #expect(foreignKeys == 1)
        #expect(integrity == ["ok"])
        #expect(try await database.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA foreign_keys") } == 1)
        // Readers and the writer read with `read` calls (no memory map by default) and keep their own page
        // cache, as configured.
        let (readerMap, readerCache) = try await database.pool.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA mmap_size"), try Int.fetchOne(db, sql: "PRAGMA cache_size"))
        }
        #expect(readerMap == 0)
        #expect(SQLiteDatabase.Configuration.defaults.memoryMapSize == 0)
        #expect(readerCache == -SQLiteDatabase.Configuration.defaults.pageCacheKiB)
        let writerMap = try await database.pool.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA mmap_size")
        }
        #expect(writerMap == SQLiteDatabase.Configuration.defaults.memoryMapSize)
    }

    @Test("The memory map and page cache follow the configuration")
    func mapAndCacheConfigured() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(
            atPath: directory.path("skiff.sqlite"),
            configuration: SQLiteDatabase.Configuration(memoryMapSize: 1 << 26, pageCacheKiB: 1024)
        )
        defer { try? database.close() }
        let (map, cache) = try await database.pool.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA mmap_size"), try Int.fetchOne(db, sql: "PRAGMA cache_size"))
        }
        #expect(map == 1 << 26)
        #expect(cache == -1024)
    }

    /// The frames the write-ahead log holds now (its last valid frame; the file itself keeps its largest size).
    private func logFrames(_ database: SQLiteDatabase) async throws -> Int {
        // A passive checkpoint reports the log's frames before it copies them; it waits for nothing.
        try await database.pool.writeWithoutTransaction { db in
            try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")?[1] ?? -1
        }
    }

    /// Writes `count` notes of about a page each through the group-commit writer, one after another (one
    /// transaction each), into a table of their own.
    private func writePages(_ database: SQLiteDatabase, count: Int) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        }
        for index in 0..<count {
            try await database.storePool.domainWrite { db in
                try db.execute(
                    sql: "INSERT INTO note (body) VALUES (?)",
                    arguments: [String(repeating: "\(index % 10)", count: 3_000)]
                )
            }
        }
    }

    @Test("The writer checkpoints the log at the configured size and keeps its journals in memory; readers do not")
    func checkpointsAndJournals() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let small = directory.path("small.sqlite")
        let database = try await SQLiteDatabase.open(
            atPath: small,
            configuration: SQLiteDatabase.Configuration(checkpointPages: 40)
        )
        defer { try? database.close() }
        let (checkpoint, writerTemp) = try await database.pool.writeWithoutTransaction { db in
            (try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint"), try Int.fetchOne(db, sql: "PRAGMA temp_store"))
        }
        #expect(checkpoint == 40)
        #expect(writerTemp == 2, "the writer's statement and savepoint journals are in memory")
        #expect(try await database.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 0)
        #expect(SQLiteDatabase.Configuration.defaults.checkpointPages == 10_000)

        // 300 writes of a page or two each: without checkpoints the log would hold 600 frames and more. It
        // holds at most the configured 40 plus the frames of the commit that crossed them.
        try await writePages(database, count: 300)
        let bounded = try await logFrames(database)
        #expect(bounded > 0)
        #expect(bounded <= 40 + 8, "\(bounded) frames in the log")
        #expect(try await database.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note") } == 300)

        // The same writes with a large bound are kept in the log: the bound above is the configuration's.
        let large = directory.path("large.sqlite")
        let unbounded = try await SQLiteDatabase.open(
            atPath: large,
            configuration: SQLiteDatabase.Configuration(checkpointPages: 100_000)
        )
        defer { try? unbounded.close() }
        try await writePages(unbounded, count: 300)
        #expect(try await logFrames(unbounded) >= 300)
    }

    @Test("Tables are singular camelCase; the schema matches the migrations")
    func schema() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let tables = try await database.pool.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        }
        // Every service's tables are there; names are singular camelCase, except GRDB's own table and
        // the FTS5 index's shadow tables.
        for table in ["account", "oneTimeToken", "rating", "report", "session", "listing", "bid", "sale"] {
            #expect(tables.contains(table), "missing table \(table) in \(tables)")
        }
        #expect(tables.contains("lostFoundItem") && tables.contains("lostFoundMatch"), "\(tables)")
        let ours = tables.filter {
            $0 != "grdb_migrations" && !$0.hasPrefix("listingSearch") && !$0.hasPrefix("lostFoundItemSearch")
        }
        #expect(ours.allSatisfy { !$0.contains("_") && $0.first?.isLowercase == true }, "\(ours)")
        let changed = try await database.pool.read { db in try SQLiteSchema.migrator.hasSchemaChanges(db) }
        #expect(!changed)
    }

    @Test("A file migrated by a newer version is refused")
    func refusesNewerSchema() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        let database = try await SQLiteDatabase.open(atPath: path)
        try await database.pool.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('accounts-v99')")
        }
        try database.close()
        await #expect(throws: SQLiteDatabaseError.self) { _ = try await SQLiteDatabase.open(atPath: path) }
    }

    @Test("Constraint violations that reach SQLite become domain errors")
    func constraintMapping() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let people = try await database.accountsStore().createAccounts(["Seller", "Buyer"])
        let rating = RatingRecord(Fixture.rating(sale: "s1", seller: people[0].id, buyer: people[1].id, stars: 5))

        func domainError(_ body: @escaping @Sendable (Database) throws -> Void) async -> DomainError? {
            do {
                try await database.storePool.domainWrite(body)
                return nil
            } catch {
                return error as? DomainError
            }
        }
        #expect(await domainError { db in try rating.insert(db) } == nil)
        #expect(await domainError { db in try rating.insert(db) }?.code == .alreadyExists)
        let orphan = RatingRecord(Fixture.rating(sale: "s2", seller: "usr_missing", buyer: people[1].id, stars: 5))
        #expect(await domainError { db in try orphan.insert(db) }?.code == .notFound)
        let tooMany = RatingRecord(Fixture.rating(sale: "s3", seller: people[0].id, buyer: people[1].id, stars: 6))
        #expect(await domainError { db in try tooMany.insert(db) }?.code == .invalidArgument)
        let duplicateEmail = AccountRecord(Fixture.account("Copy", email: people[0].email))
        let mapped = await domainError { db in try duplicateEmail.insert(db) }
        #expect(mapped?.code == .alreadyExists)
        #expect(mapped?.message.contains("account") == false, "no SQL in client messages")
    }

    @Test("Durability settings are verified at open, not assumed")
    func openVerifiesSettings() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The blocking initializer is what `open` runs on a dispatch queue.
        let database = try SQLiteDatabase(path: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        #expect(try database.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
    }
}
