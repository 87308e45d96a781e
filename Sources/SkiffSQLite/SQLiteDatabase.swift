import CSkiffSQLite
import Dispatch
import Foundation
public import GRDB
import SkiffDomain
import SkiffListings

/// One SQLite database file shared by every service's store.
///
/// Opening it creates (or opens) the file with one GRDB `DatabasePool` — WAL mode, concurrent readers that
/// never wait for writes, one writer — sets `PRAGMA synchronous = FULL` on the writer and checks that it took effect (so an acknowledged
/// write survives a power loss, not just a crash), enables foreign keys and a busy timeout, runs every
/// pending migration (``SQLiteSchema``), and brings the search points of zip-only listings in line with
/// the ZIP-code table (once per table version; see `SQLiteListingsStore.fillSearchPoints`). Every store's
/// writes go through one group-commit writer: writes that arrive together share one transaction and one
/// fsync, each in its own savepoint, and each caller resumes only once its write is durable. Open one instance per file and share it; never open a second pool
/// on the same file in the same process.
///
/// ```swift
/// let database = try await SQLiteDatabase.open(atPath: "/var/lib/skiff/skiff.sqlite")
/// let accounts = database.accountsStore()
/// ```
public final class SQLiteDatabase: Sendable {
    /// Options for opening a database.
    public struct Configuration: Hashable, Sendable {
        /// How long a connection waits for a lock held by another process before failing (default 5 s).
        public var busyTimeout: Duration
        /// The most concurrent read connections (default: twice the active processor count, at least 4,
        /// so reads keep every core busy while some wait on the disk).
        public var maximumReaderCount: Int
        /// The most writes one group-commit transaction holds (default 256).
        public var maximumWriteGroupSize: Int
        /// How many bytes of the file each connection reads through a memory map rather than `read`
        /// calls (`PRAGMA mmap_size`; default 0, off). A map saves the copy of each page read, but SQLite
        /// drops a reader's whole map whenever it starts a transaction after another connection's commit,
        /// so with writes arriving all the time every page read faults the map in again: on the marketplace
        /// mix at 100,000 listings (about one write in five calls) unmapping and faulting cost a quarter of
        /// the server's CPU and the mix ran about 15 % slower than with `read` calls (Benchmarks/RESULTS.md,
        /// run H). Worth turning on for a database that is mostly read.
        public var memoryMapSize: Int
        /// Each connection's own page cache, in KiB (`PRAGMA cache_size`; default 8 MiB): with five
        /// connections (four readers and the writer) at most 40 MiB in all.
        public var pageCacheKiB: Int
        /// How many pages the write-ahead log holds before the writer copies them into the database file
        /// (`PRAGMA wal_autocheckpoint`; default 10,000 pages, 40 MiB at SQLite's 4 KiB pages).
        ///
        /// A checkpoint writes every page the log holds into the file and waits for the disk, on the
        /// writer's thread. With SQLite's default of 1,000 pages a busy writer checkpointed every few dozen
        /// listings and wrote the same index pages again each time; at 10,000 pages CreateListing ran about
        /// a fifth faster (Benchmarks/RESULTS.md). The log's size on disk is bounded by this plus one
        /// group-commit transaction's pages, as long as no reader keeps an old snapshot open, and a restart
        /// after a crash reads the whole log once.
        public var checkpointPages: Int

        /// Creates a configuration.
        public init(
            busyTimeout: Duration = .seconds(5),
            maximumReaderCount: Int = Configuration.defaultReaderCount,
            maximumWriteGroupSize: Int = 256,
            memoryMapSize: Int = 0,
            pageCacheKiB: Int = 8 * 1024,
            checkpointPages: Int = 10_000
        ) {
            self.busyTimeout = busyTimeout
            self.maximumReaderCount = maximumReaderCount
            self.maximumWriteGroupSize = maximumWriteGroupSize
            self.memoryMapSize = memoryMapSize
            self.pageCacheKiB = pageCacheKiB
            self.checkpointPages = checkpointPages
        }

        /// Twice the active processor count, at least 4.
        public static var defaultReaderCount: Int { max(4, 2 * ProcessInfo.processInfo.activeProcessorCount) }

        /// The defaults.
        public static var defaults: Configuration { Configuration() }
    }

    /// Whether SQLite keeps no memory statistics in this process, so that its allocations take no
    /// process-wide lock.
    ///
    /// SQLite counts the bytes of every allocation and free under one mutex by default. With several
    /// readers and the writer on their own threads that mutex was the server's most contended lock: after
    /// another connection's commit, a reader reads its pages again and allocates a buffer for each
    /// (Benchmarks/RESULTS.md). The first database opened turns the statistics off, which SQLite allows
    /// only before anything in the process has used it; `false` when something had (the statistics then
    /// stay on, and everything still works).
    public static let memoryStatisticsOff: Bool = skiff_sqlite_disable_memory_statistics() == 1

    /// The file's path.
    public let path: String
    /// The connection pool. Stores read from it and write through the group-commit writer; other code
    /// should go through stores.
    public let pool: DatabasePool
    /// What stores work through: the pool's readers and the one group-commit writer.
    let storePool: StorePool

    /// Opens (creating if needed) the database at `path`, configures it and migrates it.
    ///
    /// This blocks the calling thread for the file I/O and migrations; call it at startup, or use
    /// ``open(atPath:configuration:)`` from async code.
    ///
    /// - Throws: ``SQLiteDatabaseError`` if the durability settings did not take effect or the file was
    ///   migrated by a newer version of Skiff; ``SkiffListings/ZipCentroidsError`` if the bundled ZIP-code
    ///   table cannot be loaded; GRDB errors if the file cannot be opened or migrated.
    public init(path: String, configuration: Configuration = .defaults) throws {
        _ = Self.memoryStatisticsOff
        var config = GRDB.Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(configuration.busyTimeout.timeInterval)
        config.maximumReaderCount = configuration.maximumReaderCount
        config.label = "skiff"
        let memoryMapSize = max(0, configuration.memoryMapSize)
        let pageCacheKiB = max(0, configuration.pageCacheKiB)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA mmap_size = \(memoryMapSize)")
            try db.execute(sql: "PRAGMA cache_size = -\(pageCacheKiB)")
            db.add(function: PrivateDistanceFunction.function)
            db.add(function: DistanceFunction.function)
        }
        let pool = try DatabasePool(path: path, configuration: config)

        // DatabasePool sets synchronous = NORMAL when it enables WAL; FULL must be set afterwards, on the
        // writer connection, and read back.
        let (synchronous, journalMode) = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(max(1, configuration.checkpointPages))")
            return (
                try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try String.fetchOne(db, sql: "PRAGMA journal_mode")
            )
        }
        guard synchronous == 2, journalMode?.lowercased() == "wal" else {
            throw SQLiteDatabaseError(
                "The database at \(path) did not accept WAL mode with synchronous = FULL "
                    + "(synchronous \(synchronous.map(String.init) ?? "?"), journal_mode \(journalMode ?? "?"))."
            )
        }

        let migrator = SQLiteSchema.migrator
        let superseded = try pool.read { db in try migrator.hasBeenSuperseded(db) }
        guard !superseded else {
            throw SQLiteDatabaseError(
                "The database at \(path) was migrated by a newer version of Skiff; refusing to open it."
            )
        }
        try migrator.migrate(pool)
        // Zip-only listings' search points follow the app's ZIP-code table, which migrations cannot read.
        try SQLiteListingsStore.fillSearchPoints(pool, centroids: try ZipCentroids.bundled())
        // From now on the writer keeps its statement and savepoint journals in memory. On disk (SQLite's
        // default past 64 KiB) every savepoint of a group commit first wrote the pages it touched to a
        // temporary file: more than half of the writer's `pwrite` calls. A savepoint's journal holds one
        // write's pages and is dropped when it ends. Migrations, above, keep the file: one of their
        // statements may touch a whole table.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }

        self.path = path
        self.pool = pool
        self.storePool = StorePool(
            readers: pool,
            writer: GroupCommitWriter(pool: pool, maximumGroupSize: configuration.maximumWriteGroupSize)
        )
    }

    /// Opens the database like ``init(path:configuration:)``, doing the blocking work off the caller's
    /// executor (on a dispatch queue), so it is safe to call from async code.
    public static func open(
        atPath path: String,
        configuration: Configuration = .defaults
    ) async throws -> SQLiteDatabase {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try SQLiteDatabase(path: path, configuration: configuration) })
            }
        }
    }

    /// The Accounts store on this database.
    public func accountsStore() -> SQLiteAccountsStore {
        SQLiteAccountsStore(pool: storePool)
    }

    /// The Listings store on this database.
    public func listingsStore() -> SQLiteListingsStore {
        SQLiteListingsStore(pool: storePool)
    }

    /// The Bids store on this database.
    public func bidsStore() -> SQLiteBidsStore {
        SQLiteBidsStore(pool: storePool)
    }

    /// The Chat store on this database.
    public func chatStore() -> SQLiteChatStore {
        SQLiteChatStore(pool: storePool)
    }

    /// The LostFound store on this database.
    public func lostFoundStore() -> SQLiteLostFoundStore {
        SQLiteLostFoundStore(pool: storePool)
    }

    /// The BucketList store on this database.
    public func bucketListStore() -> SQLiteBucketListStore {
        SQLiteBucketListStore(pool: storePool)
    }

    /// The BucketList store on this database, walking nearby and trending circles that hold `collectLimit`
    /// activities or more (tests set it low to exercise the walk on small data).
    package func bucketListStore(collectLimit: Int) -> SQLiteBucketListStore {
        SQLiteBucketListStore(pool: storePool, collectLimit: collectLimit)
    }

    /// Copies the write-ahead log into the database file and empties it, then closes every
    /// connection. Call it after the last use, at shutdown; later use throws.
    public func close() throws {
        _ = try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        try pool.close()
    }
}

/// The database could not be opened safely.
public struct SQLiteDatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong (for operators; may contain paths).
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
