public import Logging
public import NIOCore
import NIOPosix
import NIOSSL
public import ServiceLifecycle
public import SkiffCore
import SkiffWire
import Synchronization

/// A Skiff server: listens on TCP (or TLS), speaks the Skiff protocol, and routes calls to
/// registered services.
///
/// Run it as a swift-service-lifecycle `Service`: `run()` serves until graceful shutdown is
/// triggered (SIGTERM/SIGINT through a `ServiceGroup`), then drains every connection — GOAWAY,
/// PING, final GOAWAY, calls in flight finish within the grace period — and returns.
///
/// ```swift
/// let server = SkiffServer(configuration: config, services: [MyService()], logger: logger)
/// let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public final class SkiffServer: Service, Sendable {
    public let configuration: ServerConfiguration
    public let router: RPCRouter
    public let interceptors: [any ServerInterceptor]
    public let logger: Logger
    public let observer: ServerObserver
    private let group: any EventLoopGroup

    private struct State {
        var listener: (any Channel)?
        var connections: [ObjectIdentifier: (any Channel, NIOLoopBound<ServerConnectionHandler>)] = [:]
        var shuttingDown = false
        var addressResolved = false
        var lastRefusalLog: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    private let addressPromise: EventLoopPromise<SocketAddress>
    private let accepted = Atomic<Int>(0)

    public init(
        configuration: ServerConfiguration,
        services: [any RegistrableService],
        interceptors: [any ServerInterceptor] = [],
        logger: Logger = Logger(label: "skiff.server"),
        observer: ServerObserver = ServerObserver(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.configuration = configuration
        self.router = RPCRouter(services: services)
        self.interceptors = interceptors
        self.logger = logger
        self.observer = observer
        self.group = eventLoopGroup
        self.addressPromise = eventLoopGroup.any().makePromise(of: SocketAddress.self)
    }

    /// The address the server listens on, once bound (waits for the bind).
    public var listeningAddress: SocketAddress {
        get async throws { try await addressPromise.futureResult.get() }
    }

    /// Serves until graceful shutdown or cancellation.
    public func run() async throws {
        try configuration.settings.validate()
        let sslContext = try configuration.tls?.makeContext()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(
                    low: configuration.socketWriteBufferHighWater / 2,
                    high: configuration.socketWriteBufferHighWater
                )
            )
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try self.initialize(channel, sslContext: sslContext) }
            }
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            resolveAddress(.failure(error))
            throw error
        }
        state.withLock { $0.listener = listener }
        if let address = listener.localAddress {
            resolveAddress(.success(address))
            logger.info("listening", metadata: ["address": "\(address)", "tls": "\(configuration.tls != nil)"])
        }
        // Memory freed by closed connections goes back to the system within seconds.
        let trimmer = Task { [observer] in
            var trimmedAt = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                let closed = observer.closedConnections
                if closed != trimmedAt {
                    trimmedAt = closed
                    MemoryTrimmer.trim()
                }
            }
        }
        defer { trimmer.cancel() }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await listener.closeFuture.get()
            } onGracefulShutdown: {
                self.beginGracefulShutdown()
            }
        } onCancel: {
            self.closeEverything()
        }
        try await waitForConnectionsToClose()
        logger.info("stopped")
    }

    private func resolveAddress(_ result: Result<SocketAddress, any Error>) {
        let first = state.withLock { state in
            defer { state.addressResolved = true }
            return !state.addressResolved
        }
        if first { addressPromise.completeWith(result) }
    }

    deinit {
        // A server that never ran still answers anyone waiting for its address.
        resolveAddress(.failure(ChannelError.ioOnClosedChannel))
    }

    private func initialize(_ channel: any Channel, sslContext: NIOSSLContext?) throws {
        let count = accepted.wrappingAdd(1, ordering: .relaxed).newValue
        channel.closeFuture.whenComplete { [self] _ in
            accepted.wrappingSubtract(1, ordering: .relaxed)
            _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
        }
        let sync = channel.pipeline.syncOperations
        let shuttingDown = state.withLock({ $0.shuttingDown })
        if count > configuration.maxConnections || shuttingDown {
            let reason =
                shuttingDown
                ? "the server is shutting down"
                : "the server has reached its connection limit (\(configuration.maxConnections)); try again later"
            observer.connectionRefused()
            // One line per 10 s at most: a flood of connections must not flood the log.
            let now = ContinuousClock.now
            let logNow = state.withLock { state in
                guard state.lastRefusalLog.map({ now - $0 >= .seconds(10) }) ?? true else { return false }
                state.lastRefusalLog = now
                return true
            }
            if logNow {
                logger.warning(
                    "refusing connections",
                    metadata: ["reason": "\(reason)", "refused so far": "\(observer.refusedConnections)"]
                )
            }
            if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
            try sync.addHandler(
                ConnectionRefuser(
                    settings: configuration.settings,
                    reason: reason,
                    timeout: configuration.prefaceTimeout
                )
            )
            return
        }
        if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
        let handler = ServerConnectionHandler(
            configuration: configuration,
            router: router,
            interceptors: interceptors,
            logger: logger,
            observer: observer,
            eventLoop: channel.eventLoop
        )
        try sync.addHandler(handler)
        let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        state.withLock { $0.connections[ObjectIdentifier(channel)] = (channel, bound) }
    }

    /// Stops accepting, drains every connection and lets `run()` return once they are closed.
    public func beginGracefulShutdown() {
        let (listener, connections) = state.withLock { state in
            state.shuttingDown = true
            return (state.listener, Array(state.connections.values))
        }
        logger.info("draining", metadata: ["connections": "\(connections.count)"])
        listener?.close(promise: nil)
        for (channel, handler) in connections {
            channel.eventLoop.execute { handler.value.beginDrain() }
        }
    }

    private func closeEverything() {
        let (listener, connections) = state.withLock { state in
            state.shuttingDown = true
            return (state.listener, Array(state.connections.values))
        }
        listener?.close(promise: nil)
        for (channel, _) in connections { channel.close(promise: nil) }
    }

    private func waitForConnectionsToClose() async throws {
        let limit = ContinuousClock.now.advanced(by: configuration.drainGracePeriod + .seconds(2))
        while accepted.load(ordering: .relaxed) > 0 && ContinuousClock.now < limit {
            try? await Task.sleep(for: .milliseconds(20))
        }
        closeEverything()
    }
}
