import Foundation
public import Logging
public import ServiceLifecycle
public import SkiffAccounts
public import SkiffBids
public import SkiffBucketList
public import SkiffChat
public import SkiffListings
public import SkiffLostFound
public import SkiffPostgres
public import SkiffSQLite

/// A place services keep their data: it hands out each service's store and releases what it holds
/// (connections, files) when the application stops.
///
/// The services only see their store protocols; which backend stands behind each is chosen at start
/// (``StorageSelection``). A new backend (PostgreSQL, say) conforms to this protocol and adds a case
/// to ``StorageSelection/Backend``; nothing else in the composition changes.
public protocol StorageBackend: Sendable {
    /// How the backend is named in logs and options (`memory`, `sqlite:PATH`).
    var name: String { get }
    /// The Accounts store on this backend.
    func makeAccountsStore() -> any AccountsStore
    /// The Listings store on this backend.
    func makeListingsStore() -> any ListingsStore
    /// The Bids store on this backend.
    func makeBidsStore() -> any BidsStore
    /// The Chat store on this backend.
    func makeChatStore() -> any ChatStore
    /// The LostFound store on this backend.
    func makeLostFoundStore() -> any LostFoundStore
    /// The BucketList store on this backend.
    func makeBucketListStore() -> any BucketListStore
    /// Releases the backend's resources once no store is used any more. Later use of a store fails.
    func close() async throws
}

/// Keeps everything in memory: every store made is new and empty, and gone when the process ends.
public struct InMemoryStorage: StorageBackend {
    public init() {}

    public var name: String { "memory" }
    public func makeAccountsStore() -> any AccountsStore { InMemoryAccountsStore() }
    public func makeListingsStore() -> any ListingsStore { InMemoryListingsStore() }
    public func makeBidsStore() -> any BidsStore { InMemoryBidsStore() }
    public func makeChatStore() -> any ChatStore { InMemoryChatStore() }
    public func makeLostFoundStore() -> any LostFoundStore { InMemoryLostFoundStore() }
    public func makeBucketListStore() -> any BucketListStore { InMemoryBucketListStore() }
    public func close() async throws {}
}

extension SQLiteDatabase: StorageBackend {
    public var name: String { StorageSelection.Backend.sqlite(path: path).description }
    public func makeAccountsStore() -> any AccountsStore { accountsStore() }
    public func makeListingsStore() -> any ListingsStore { listingsStore() }
    public func makeBidsStore() -> any BidsStore { bidsStore() }
    public func makeChatStore() -> any ChatStore { chatStore() }
    public func makeLostFoundStore() -> any LostFoundStore { lostFoundStore() }
    public func makeBucketListStore() -> any BucketListStore { bucketListStore() }
}

extension PostgresStorage: StorageBackend, HousekeepingLease {
    public var name: String { location.description }
    public func makeAccountsStore() -> any AccountsStore { accountsStore() }
    public func makeListingsStore() -> any ListingsStore { listingsStore() }
    public func makeBidsStore() -> any BidsStore { bidsStore() }
    public func makeChatStore() -> any ChatStore { chatStore() }
    public func makeLostFoundStore() -> any LostFoundStore { lostFoundStore() }
    public func makeBucketListStore() -> any BucketListStore { bucketListStore() }
}

/// The storage backends an application opened, one per distinct ``StorageSelection/Backend`` (services
/// placed on the same SQLite file share one database), run as a service: it closes every backend
/// when the application shuts down.
///
/// Put it first in a `ServiceGroup`: services stop in reverse order, so the backends close after the
/// server and the housekeeping that use them have stopped.
public final class OpenedStorage: Service, Sendable {
    /// The backends in the order they were opened.
    public let backends: [any StorageBackend]
    private let byService: [String: any StorageBackend]
    private let logger: Logger

    /// Opens the backends `selection` names for `services` (every service by default), each backend
    /// once, off the caller's executor. A service not named has no backend here: it runs elsewhere.
    ///
    /// - Throws: when a backend cannot be opened (the ones opened before it are closed again).
    public static func open(
        _ selection: StorageSelection,
        services: [String] = StorageSelection.services,
        logger: Logger
    ) async throws -> OpenedStorage {
        var opened: [StorageSelection.Backend: any StorageBackend] = [:]
        var order: [any StorageBackend] = []
        var byService: [String: any StorageBackend] = [:]
        do {
            for service in StorageSelection.services where services.contains(service) {
                let choice = selection.backend(for: service)
                if let backend = opened[choice] {
                    byService[service] = backend
                    continue
                }
                let backend = try await open(choice)
                var metadata: Logger.Metadata = ["backend": "\(backend.name)"]
                if backend is SQLiteDatabase {
                    // Off unless something used SQLite before the first file was opened.
                    metadata["memoryStatistics"] = "\(SQLiteDatabase.memoryStatisticsOff ? "off" : "on")"
                }
                logger.info("storage opened", metadata: metadata)
                opened[choice] = backend
                order.append(backend)
                byService[service] = backend
            }
        } catch {
            for backend in order { try? await backend.close() }
            throw error
        }
        return OpenedStorage(backends: order, byService: byService, logger: logger)
    }

    private static func open(_ choice: StorageSelection.Backend) async throws -> any StorageBackend {
        switch choice {
        case .memory:
            return InMemoryStorage()
        case .sqlite(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try await SQLiteDatabase.open(atPath: path)
        case .postgres(let location):
            let storage = try await PostgresStorage.open(location, logger: Logger(label: "skiff.postgres"))
            do {
                // Zip-only listings' search points follow the app's ZIP-code table, which migrations
                // cannot read (as on SQLite).
                try await storage.fillListingsSearchPoints(centroids: try ZipCentroids.bundled())
            } catch {
                await storage.close()
                throw error
            }
            return storage
        }
    }

    private init(backends: [any StorageBackend], byService: [String: any StorageBackend], logger: Logger) {
        self.backends = backends
        self.byService = byService
        self.logger = logger
    }

    /// The backend a service (one of ``StorageSelection/services``, opened here) keeps its data in.
    public func backend(for service: String) -> any StorageBackend {
        guard let backend = byService[service] else {
            preconditionFailure("\(service) is not one of the services whose storage was opened")
        }
        return backend
    }

    /// The PostgreSQL database all of `services` keep their data in, if they share one: their
    /// housekeeping is then done by one server at a time (``Housekeeping/Job/shared(through:)``).
    public func sharedDatabase(of services: String...) -> PostgresStorage? {
        let databases = services.map { byService[$0] as? PostgresStorage }
        guard let first = databases.first ?? nil, databases.allSatisfy({ $0 === first }) else { return nil }
        return first
    }

    /// Waits for the application's graceful shutdown, then closes every backend.
    public func run() async throws {
        try? await gracefulShutdown()
        try await close()
    }

    /// Closes every backend; errors are logged, and the first is thrown once all were tried.
    public func close() async throws {
        var first: (any Error)?
        for backend in backends {
            do {
                try await backend.close()
                logger.info("storage closed", metadata: ["backend": "\(backend.name)"])
            } catch {
                logger.error(
                    "storage did not close cleanly",
                    metadata: ["backend": "\(backend.name)", "error": "\(error)"]
                )
                first = first ?? error
            }
        }
        if let first { throw first }
    }
}
