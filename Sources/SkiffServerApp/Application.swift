import Foundation
public import Logging
import SkiffAPI
public import SkiffAccounts
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffListings
import SkiffReflection
import SkiffSQLite
public import SkiffServer
import SkiffStandardServices

/// The production object graph, built the same way by `main` and by tests.
public struct Application: Sendable {
    /// The RPC server.
    public let server: SkiffServer
    /// The health service, so the owner can mark services NOT_SERVING on shutdown.
    public let health: HealthService
    /// Where e-mails go (the default log/outbox mailer; tests read it).
    public let mailer: OutboxMailer
    /// The open SQLite databases, one per file.
    public let databases: [SQLiteDatabase]
    /// Periodic clean-up of the stores (expired sessions, old change events).
    public let housekeeping: Housekeeping

    /// Builds the server from options: opens storage, wires services and interceptors.
    ///
    /// - Parameters:
    ///   - options: the parsed command-line options.
    ///   - logger: where logs go.
    ///   - observer: where metrics go.
    public init(options: ServerOptions, logger: Logger, observer: ServerObserver = ServerObserver()) throws {
        var configuration = try options.configuration()
        if let cert = options.tlsCert, let key = options.tlsKey {
            configuration.tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        }
        let storage = try StorageSelection.parse(options.storage)

        // One database (one DatabasePool) per SQLite file, shared by the services stored in it.
        var databases: [String: SQLiteDatabase] = [:]
        func database(_ path: String) throws -> SQLiteDatabase {
            if let open = databases[path] { return open }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let opened = try SQLiteDatabase(path: path)
            databases[path] = opened
            logger.info("storage opened", metadata: ["path": "\(path)"])
            return opened
        }

        let accountsStore: any AccountsStore
        switch storage.backend(for: "accounts") {
        case .memory: accountsStore = InMemoryAccountsStore()
        case .sqlite(let path): accountsStore = try database(path).accountsStore()
        }

        let listingsStore: any ListingsStore
        switch storage.backend(for: "listings") {
        case .memory: listingsStore = InMemoryListingsStore()
        case .sqlite(let path): listingsStore = try database(path).listingsStore()
        }

        let bidsStore: any BidsStore
        switch storage.backend(for: "bids") {
        case .memory: bidsStore = InMemoryBidsStore()
        case .sqlite(let path): bidsStore = try database(path).bidsStore()
        }

        // Services in this process call each other through their typed clients over an
        // in-process transport that runs the same interceptors as the server. Listings and Bids
        // call each other, so the transport is bound once both exist.
        let serviceToken = options.serviceToken ?? SecretToken.generate().value
        let authentication = AuthenticationInterceptor(
            authenticator: AccountsAuthenticator(store: accountsStore),
            serviceToken: serviceToken
        )
        let inProcess = LateBoundTransport()

        let mailer = OutboxMailer(logger: logger)
        var accountsConfiguration = AccountsConfiguration()
        accountsConfiguration.allowedEmailDomains = options.emailDomains
        let accounts = AccountsService(
            store: accountsStore,
            hasher: PasswordHasher(rounds: options.passwordHashRounds),
            mailer: mailer,
            sales: BidsClientSaleDirectory(transport: inProcess, serviceToken: serviceToken),
            configuration: accountsConfiguration
        )

        var listingsConfiguration = ListingsConfiguration.defaults
        listingsConfiguration.scaleRateLimits(by: options.rateLimitScale)
        let listings = ListingsService(
            store: listingsStore,
            bids: BidsClientListingBids(transport: inProcess, serviceToken: serviceToken),
            configuration: listingsConfiguration
        )

        let accountsClient = AccountsClientDirectory(transport: inProcess, serviceToken: serviceToken)
        var bidsConfiguration = BidsConfiguration.defaults
        bidsConfiguration.scaleRateLimits(by: options.rateLimitScale)

        let bids = BidsService(
            store: bidsStore,
            listings: ListingsClientDirectory(transport: inProcess, serviceToken: serviceToken),
            conversations: NoChatYet(),
            paymentHandles: accountsClient,
            onSaleCompleted: { sale in try await accountsClient.recordCompletedSale(sale) },
            logger: logger,
            configuration: bidsConfiguration
        )
        inProcess.bind(InProcessTransport(services: [accounts, listings, bids], interceptors: [authentication]))

        var services: [any RegistrableService] = [accounts, listings, bids]
        if options.enableTestService { services.append(TestService()) }
        let names = services.compactMap { service -> String? in
            var router = RPCRouter()
            service.registerMethods(with: &router)
            return router.services.first?.name
        }
        let health = HealthService(services: names)
        services.append(health)
        services.append(
            ReflectionService(
                services: services,
                fileDescriptors: Skiff_Accounts_V1_Accounts.fileDescriptors + Skiff_Listings_V1_Listings.fileDescriptors
                    + Skiff_Bids_V1_Bids.fileDescriptors + Skiff_Health_V1_Health.fileDescriptors
                    + Skiff_Testing_V1_TestService.fileDescriptors
            )
        )
        self.health = health
        self.mailer = mailer
        let imageCleanup = UnusedImageCleanup(
            store: listingsStore,
            accounts: accountsClient,
            lifetime: listingsConfiguration.unattachedImageLifetime
        )
        self.housekeeping = Housekeeping(
            jobs: [
                .init(name: "expired sessions and tokens") { try await accountsStore.deleteExpired(now: Date()) },
                .init(name: "uploaded images no listing uses, after 24 hours") {
                    try await imageCleanup.run(now: Date())
                },
                .init(name: "listing changes past the replay window") {
                    let retention = ListingsConfiguration.defaults.changeRetention.components.seconds
                    return try await listingsStore.pruneChanges(
                        before: Date().addingTimeInterval(-TimeInterval(retention))
                    )
                },
            ],
            logger: logger
        )
        self.databases = Array(databases.values)
        self.server = SkiffServer(
            configuration: configuration,
            services: services,
            interceptors: [authentication],
            logger: logger,
            observer: observer
        )
    }
}
