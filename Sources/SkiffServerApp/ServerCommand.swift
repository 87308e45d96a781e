public import ArgumentParser
import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import SkiffServer
import UnixSignals

/// `skiff-server`: serves Skiff's services until SIGTERM or SIGINT, then drains.
public struct ServerCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "skiff-server",
        abstract: "Serve Skiff's services over the Skiff RPC protocol."
    )

    @OptionGroup public var options: ServerOptions

    public init() {}

    /// Parses the process arguments and runs; the executable's whole `main`.
    public static func start() async { await main() }

    public func run() async throws {
        let levels = try options.logLevels()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = levels.level(for: label)
            return handler
        }
        let logger = Logger(label: "skiff.server")
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let app = try await Application(options: options, logger: logger)
        // The application's services in their order (storage first, the server last), the metrics
        // endpoint after the storage.
        var services = app.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        if let metricsPort = options.metricsPort {
            services.insert(
                .init(
                    service: MetricsHTTPServer(
                        host: options.host,
                        port: metricsPort,
                        registry: registry,
                        logger: logger
                    )
                ),
                at: 1
            )
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
