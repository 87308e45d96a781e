import Foundation
public import Logging
public import ServiceLifecycle
import SkiffAPI
public import SkiffAccounts
import SkiffBids
import SkiffBucketList
import SkiffChat
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffGRPC
import SkiffListings
import SkiffLostFound
import SkiffReflection
import SkiffSQLite
public import SkiffServer
public import SkiffStandardServices

/// The production object graph, built the same way by `main` and by tests.
public struct Application: Sendable {
    /// The RPC server.
    public let server: Server
    /// The health service, so the owner can mark services NOT_SERVING on shutdown.
    public let health: HealthService
    /// Where e-mails go (the default log/outbox mailer; tests read it).
    public let mailer: OutboxMailer
    /// The open storage backends, one per SQLite file; a service that closes them at shutdown.
    public let storage: OpenedStorage
    /// Periodic clean-up of the stores (expired sessions, old change events).
    public let housekeeping: Housekeeping

    /// The connections to the services other processes run (none when every service is here).
    public let upstreams: UpstreamConnections
    /// How long the server keeps serving, reporting NOT_SERVING, once shutdown begins.
    public let shutdownDelay: Duration

    /// When the Chat service's feed is in a database other servers share: what hands this server's
    /// live subscribers the events the others commit.
    public let feedCommits: FeedCommitRelay?

    /// The application's services in start order: the storage, the connections to other processes,
    /// the housekeeping, the feed-commit relay (when there is one), the server, and what marks every
    /// service NOT_SERVING when the shutdown begins. They stop in reverse order: health checks say
    /// NOT_SERVING first, then the server drains, then what it used closes.
    public var services: [any Service] {
        [storage, upstreams, housekeeping] + (feedCommits.map { [$0] } ?? []) + [
            server, HealthOnShutdown(health: health, delay: shutdownDelay),
        ]
    }

    /// How far back the feed relays publish again what other services recorded (the housekeeping
    /// interval, 10 minutes, with room to spare).
    static let feedRelayWindow: Duration = .seconds(30 * 60)

    /// Builds the server from options: opens storage (off the caller's executor), wires services and
    /// interceptors.
    ///
    /// Run ``services`` in one `ServiceGroup`: they stop in reverse order, so the storage closes after
    /// the server has drained.
    ///
    /// - Parameters:
    ///   - options: the parsed command-line options.
    ///   - logger: where logs go.
    ///   - observer: where metrics go.
    public init(options: ServerOptions, logger: Logger, observer: ServerObserver = ServerObserver()) async throws {
        try await self.init(configuration: try options.applicationConfiguration(), logger: logger, observer: observer)
    }

    /// Builds the server from a configuration; see ``init(options:logger:observer:)``.
    public init(
        configuration settings: ApplicationConfiguration,
        logger: Logger,
        observer: ServerObserver = ServerObserver()
    ) async throws {
        try settings.validate()
        let configuration = settings.server
        let selection = settings.storage
        // The ZIP-code centroid table (distance search of zip-only listings) ships with the build: a
        // missing or damaged one stops the start rather than the first search.
        _ = try ZipCentroids.bundled()

        let deployment = settings.deployment
        let storage = try await OpenedStorage.open(
            selection,
            services: deployment.local.map(\.rawValue),
            logger: logger
        )
        let upstreams = UpstreamConnections(deployment)

        // Services call each other through their typed clients, over a transport that sends each call
        // to the service's process: here, through an in-process transport that runs the same
        // interceptors as the server, or over skiff/1 to an upstream. It is bound once every local
        // service exists, since they call each other in a cycle. Calls a service makes on its own
        // behalf carry the service token (per process unless shared with --service-token); calls
        // made for the user being served forward the user's credentials.
        let serviceToken = settings.serviceToken ?? SecretToken.generate().value
        let accountsStore = deployment.runs(.accounts) ? storage.backend(for: "accounts").makeAccountsStore() : nil
        let authenticator: any SessionAuthenticator =
            if let accountsStore {
                AccountsAuthenticator(store: accountsStore)
            } else {
                AccountsClientAuthenticator(
                    client: Skiff_Accounts_V1_Accounts.Client(
                        transport: upstreams.transports[CampusService.accounts.qualifiedName]!
                    )
                )
            }
        let authentication = AuthenticationInterceptor(authenticator: authenticator, serviceToken: serviceToken)
        let routes = LateBoundTransport()
        let asService = InterceptedTransport(
            routes,
            interceptors: [ServiceCredentialsInterceptor(token: serviceToken)]
        )
        let asCaller = InterceptedTransport(routes, interceptors: [ForwardCredentialsInterceptor()])
        let feed = ChatClientFeedPublisher(client: Skiff_Chat_V1_Chat.Client(transport: asService))
        let directory = ClientDirectory(
            accounts: Skiff_Accounts_V1_Accounts.Client(transport: asService),
            listings: Skiff_Listings_V1_Listings.Client(transport: asService)
        )
        let accountsClient = AccountsClientDirectory(client: Skiff_Accounts_V1_Accounts.Client(transport: asService))
        let mailer = OutboxMailer(logger: Logger(label: "skiff.mail"))
        var domainServices: [any RegistrableService] = []
        var jobs: [Housekeeping.Job] = []

        if let accountsStore {
            var accountsConfiguration = settings.accounts
            accountsConfiguration.scaleRateLimits(by: settings.rateLimitScale)
            domainServices.append(
                AccountsService(
                    store: accountsStore,
                    hasher: PasswordHasher(
                        rounds: settings.passwordHashRounds,
                        pool: BlockingWorkPool(
                            label: "skiff.password-hashing",
                            maximumQueueLength: accountsConfiguration.maximumQueuedPasswordHashes
                        )
                    ),
                    mailer: mailer,
                    sales: BidsClientSaleDirectory(client: Skiff_Bids_V1_Bids.Client(transport: asService)),
                    blockedUsers: ChatClientBlockedUsers(client: Skiff_Chat_V1_Chat.Client(transport: asCaller)),
                    images: ListingsClientImages(client: Skiff_Listings_V1_Listings.Client(transport: asService)),
                    cleanup: ClientAccountCleanup(
                        listings: Skiff_Listings_V1_Listings.Client(transport: asService),
                        bids: Skiff_Bids_V1_Bids.Client(transport: asService),
                        directory: directory
                    ),
                    identityProviders: settings.identityProviders,
                    configuration: accountsConfiguration,
                    logger: logger
                )
            )
            jobs.append(
                Housekeeping.Job(name: "expired sessions and tokens") {
                    try await accountsStore.deleteExpired(now: Date())
                }.shared(through: storage.sharedDatabase(of: "accounts"))
            )
        }

        if deployment.runs(.listings) {
            let listingsStore = storage.backend(for: "listings").makeListingsStore()
            var listingsConfiguration = ListingsConfiguration.defaults
            listingsConfiguration.scaleRateLimits(by: settings.rateLimitScale)
            let listings = ListingsService(
                store: listingsStore,
                bids: BidsClientListingBids(client: Skiff_Bids_V1_Bids.Client(transport: asService)),
                feed: feed,
                configuration: listingsConfiguration,
                logger: logger
            )
            domainServices.append(listings)
            let imageCleanup = UnusedImageCleanup(
                store: listingsStore,
                accounts: accountsClient,
                lifetime: listingsConfiguration.unattachedImageLifetime
            )
            // Each job runs on one server at a time among those sharing the service's database.
            let lease = storage.sharedDatabase(of: "listings")
            jobs += [
                Housekeeping.Job(name: "uploaded images no listing uses, after 24 hours") {
                    try await imageCleanup.run(now: Date())
                }.shared(through: lease),
                Housekeeping.Job.pruning(
                    "listing changes past the replay window",
                    keeping: listingsConfiguration.changeRetention
                ) {
                    try await listingsStore.pruneChanges(before: $0)
                }.shared(through: lease),
                // At-least-once delivery to the feed: covers a crash between a commit and its publication
                // (these jobs run at start) and failed publications; the feed keeps idempotency keys.
                Housekeeping.Job.relaying("saved-listing changes", window: Self.feedRelayWindow) {
                    try await listings.republishChanges(since: $0)
                }.shared(through: lease),
                Housekeeping.Job.relaying("listing comments", window: Self.feedRelayWindow) {
                    try await listings.republishComments(since: $0)
                }.shared(through: lease),
            ]
        }

        if deployment.runs(.bids) {
            var bidsConfiguration = BidsConfiguration.defaults
            bidsConfiguration.scaleRateLimits(by: settings.rateLimitScale)
            bidsConfiguration.handoffPlaces = settings.handoffPlaces
            let bids = BidsService(
                store: storage.backend(for: "bids").makeBidsStore(),
                listings: ListingsClientDirectory(client: Skiff_Listings_V1_Listings.Client(transport: asService)),
                conversations: ChatClientConversations(client: Skiff_Chat_V1_Chat.Client(transport: asService)),
                paymentHandles: accountsClient,
                feed: feed,
                onSaleCompleted: { sale in try await accountsClient.recordCompletedSale(sale) },
                logger: logger,
                configuration: bidsConfiguration
            )
            domainServices.append(bids)
            jobs.append(
                Housekeeping.Job.relaying("bid events", window: Self.feedRelayWindow) {
                    try await bids.republishEvents(since: $0)
                }.shared(through: storage.sharedDatabase(of: "bids"))
            )
        }

        var chatService: ChatService?
        if deployment.runs(.chat) {
            let chatStore = storage.backend(for: "chat").makeChatStore()
            var chatConfiguration = ChatConfiguration.defaults
            chatConfiguration.scaleRateLimits(by: settings.rateLimitScale)
            let chat = ChatService(
                store: chatStore,
                directory: directory,
                configuration: chatConfiguration,
                logger: logger
            )
            chatService = chat
            domainServices.append(chat)
            jobs.append(
                Housekeeping.Job.pruning("feed events past the replay window", keeping: chatConfiguration.feedRetention)
                {
                    try await chatStore.pruneFeed(before: $0)
                }.shared(through: storage.sharedDatabase(of: "chat"))
            )
        }

        if deployment.runs(.lostfound) {
            let lostFound = LostFoundService(
                store: storage.backend(for: "lostfound").makeLostFoundStore(),
                feed: feed,
                logger: logger,
                reportLimit: LostFoundService.defaultReportLimit.scaled(by: settings.rateLimitScale)
            )
            domainServices.append(lostFound)
            jobs.append(
                Housekeeping.Job.relaying("lost-and-found matches", window: Self.feedRelayWindow) {
                    try await lostFound.republishMatches(since: $0)
                }.shared(through: storage.sharedDatabase(of: "lostfound"))
            )
        }

        if deployment.runs(.bucketlist) {
            domainServices.append(
                BucketListService(store: storage.backend(for: "bucketlist").makeBucketListStore(), users: directory)
            )
        }
        routes.bind(
            ServiceRoutingTransport(
                local: InProcessTransport(services: domainServices, interceptors: [authentication]),
                remote: upstreams.transports
            )
        )

        var services = domainServices
        if settings.enableTestService { services.append(TestService()) }
        let names = services.compactMap { service -> String? in
            var router = RPCRouter()
            service.registerMethods(with: &router)
            return router.services.first?.name
        }
        let health = HealthService(services: names)
        services.append(health)
        services.append(GRPCHealthService(health))
        // skiff.reflection.v1 and the standard grpc.reflection.v1 and v1alpha (grpcurl, Postman), all
        // three serving the same descriptors, their own included.
        let fileDescriptors: [[[UInt8]]] = [
            Skiff_Accounts_V1_Accounts.fileDescriptors, Skiff_Listings_V1_Listings.fileDescriptors,
            Skiff_Bids_V1_Bids.fileDescriptors, Skiff_Chat_V1_Chat.fileDescriptors,
            Skiff_Lostfound_V1_LostFound.fileDescriptors, Skiff_Bucketlist_V1_BucketList.fileDescriptors,
            Skiff_Health_V1_Health.fileDescriptors, Grpc_Health_V1_Health.fileDescriptors,
            Skiff_Testing_V1_TestService.fileDescriptors,
        ]
        services += ReflectionService.withGRPCReflection(
            services: services,
            fileDescriptors: fileDescriptors.flatMap { $0 }
        )
        self.health = health
        self.mailer = mailer
        self.housekeeping = Housekeeping(jobs: jobs, logger: logger)
        self.storage = storage
        self.upstreams = upstreams
        self.shutdownDelay = settings.shutdownDelay
        self.feedCommits = chatService.flatMap { chat in
            storage.sharedDatabase(of: "chat").map { FeedCommitRelay(chat: chat, signals: $0) }
        }
        self.server = Server(
            configuration: configuration,
            services: services,
            interceptors: [authentication],
            logger: logger,
            observer: observer,
            protocols: Self.connectionProtocols(settings.protocols, corsOrigins: settings.corsOrigins)
        )
    }

    /// The connection protocols that serve `names`: skiff/1; HTTP/2 for gRPC, gRPC-Web and Connect;
    /// HTTP/1.1 for gRPC-Web and Connect.
    public static func connectionProtocols(
        _ names: [WireProtocolName],
        corsOrigins: [String]
    ) -> [any ConnectionProtocol] {
        let cors = CORSPolicy(allowedOrigins: corsOrigins)
        var calls: HTTPCallProtocols = []
        if names.contains(.grpc) { calls.insert(.grpc) }
        if names.contains(.grpcWeb) { calls.insert(.grpcWeb) }
        if names.contains(.connect) { calls.insert(.connect) }
        var protocols: [any ConnectionProtocol] = []
        if names.contains(.skiff) { protocols.append(SkiffWireProtocol()) }
        if !calls.isEmpty { protocols.append(HTTP2Protocol(protocols: calls, cors: cors)) }
        if !calls.subtracting(.grpc).isEmpty { protocols.append(HTTP1Protocol(protocols: calls, cors: cors)) }
        return protocols
    }
}

/// Marks every service NOT_SERVING as soon as the application's graceful shutdown begins, and
/// keeps serving for `delay` before the server drains (it is the last service of
/// ``Application/services``, so the first to be told): health checks and `Watch` streams tell load
/// balancers and ``SkiffClient/BalancedClientTransport`` to send new calls elsewhere before the
/// listener closes.
struct HealthOnShutdown: Service {
    let health: HealthService
    let delay: Duration

    func run() async throws {
        try? await gracefulShutdown()
        health.markAllNotServing()
        if delay > .zero { try? await Task.sleep(for: delay) }
    }
}
