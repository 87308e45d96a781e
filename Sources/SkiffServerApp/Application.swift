public import Logging
import SkiffCore
public import SkiffServer
import SkiffStandardServices

/// The production object graph, built the same way by `main` and by tests.
public struct Application: Sendable {
    /// The RPC server.
    public let server: SkiffServer
    /// The health service, so the owner can mark services NOT_SERVING on shutdown.
    public let health: HealthService

    /// Builds the server from options.
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
        var services: [any RegistrableService] = []
        if options.enableTestService { services.append(TestService()) }
        let names = services.compactMap { service -> String? in
            var router = RPCRouter()
            service.registerMethods(with: &router)
            return router.services.first?.name
        }
        let health = HealthService(services: names)
        services.append(health)
        self.health = health
        self.server = SkiffServer(
            configuration: configuration,
            services: services,
            logger: logger,
            observer: observer
        )
    }
}
