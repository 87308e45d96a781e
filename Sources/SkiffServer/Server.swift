public import Logging
public import NIOCore
public import NIOPosix
import NIOSSL
public import ServiceLifecycle
public import SkiffCore
import SkiffWire
import Synchronization

/// A Skiff server: listens on TCP (or TLS), speaks its wire protocols (skiff/1 by default, see
/// ``ConnectionProtocol``), and routes calls to registered services.
///
/// Run it as a swift-service-lifecycle `Service`: `run()` serves until graceful shutdown is
/// triggered (SIGTERM/SIGINT through a `ServiceGroup`), then drains every connection (each gets
/// `ChannelShouldQuiesceEvent`; on skiff/1: GOAWAY, PING, final GOAWAY, calls in flight finish within
/// the grace period) and returns once they have all closed.
///
/// With one protocol the listener hands every connection to it at once. With several, it picks each
/// connection's protocol from the TLS ALPN name, or else from the connection's first bytes.
///
/// ```swift
/// let server = Server(configuration: config, services: [MyService()], logger: logger)
/// let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public final class Server: Service, Sendable {
    public let configuration: ServerConfiguration
    public let router: RPCRouter
    public let interceptors: [any ServerInterceptor]
    public let logger: Logger
    public let observer: ServerObserver
    /// The wire protocols the server speaks, in the order they are tried on a connection's first bytes.
    public let protocols: [any ConnectionProtocol]
    private let group: any EventLoopGroup
    private let connectionContext: ConnectionContext

    private struct State {
        var listener: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var shuttingDown = false
        var addressResolved = false
        var lastRefusalLog: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    private let addressPromise: EventLoopPromise<SocketAddress>
    /// Completed once the server is shutting down and its last connection has closed.
    private let drained: EventLoopPromise<Void>
    private let accepted = Atomic<Int>(0)

    public init(
        configuration: ServerConfiguration,
        services: [any RegistrableService],
        interceptors: [any ServerInterceptor] = [],
        logger: Logger = Logger(label: "skiff.server"),
        observer: ServerObserver = ServerObserver(),
        protocols: [any ConnectionProtocol] = [SkiffWireProtocol()],
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        precondition(!protocols.isEmpty, "a server speaks at least one protocol")
        precondition(Set(protocols.map(\.name)).count == protocols.count, "protocol names must differ")
        self.configuration = configuration
        self.router = RPCRouter(services: services)
        self.interceptors = interceptors
        self.logger = logger
        self.observer = observer
        self.protocols = protocols
        self.group = eventLoopGroup
        self.connectionContext = ConnectionContext(
            configuration: configuration,
            router: router,
            interceptors: interceptors,
            logger: logger,
            observer: observer
        )
        self.addressPromise = eventLoopGroup.any().makePromise(of: SocketAddress.self)
        self.drained = eventLoopGroup.any().makePromise(of: Void.self)
    }

    /// The address the server listens on, once bound (waits for the bind).
    public var listeningAddress: SocketAddress {
        get async throws { try await addressPromise.futureResult.get() }
    }

    /// Serves until graceful shutdown or cancellation.
    public func run() async throws {
        try configuration.settings.validate()
        let sslContext = try configuration.tls?.makeContext(protocols: protocols.map(\.name))
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
            // Scripts read the bound port from this line: keep its wording and keys.
            logger.info("listening", metadata: ["address": "\(address)", "tls": "\(configuration.tls != nil)"])
            if protocols.count > 1 {
                logger.info(
                    "serving protocols",
                    metadata: ["protocols": "\(protocols.map(\.name).joined(separator: ","))"]
                )
            }
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
        drained.succeed()
    }

    private func initialize(_ channel: any Channel, sslContext: NIOSSLContext?) throws {
        let count = accepted.wrappingAdd(1, ordering: .relaxed).newValue
        let id = ObjectIdentifier(channel)
        channel.closeFuture.whenComplete { [self] _ in
            accepted.wrappingSubtract(1, ordering: .relaxed)
            let drainedNow = state.withLock { state in
                state.connections.removeValue(forKey: id)
                return state.shuttingDown && state.connections.isEmpty
            }
            if drainedNow { drained.succeed() }
        }
        let sync = channel.pipeline.syncOperations
        let shuttingDown = state.withLock { state in
            if !state.shuttingDown { state.connections[id] = channel }
            return state.shuttingDown
        }
        if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
        let context = connectionContext
        if count > configuration.maxConnections || shuttingDown {
            let reason =
                shuttingDown
                ? "the server is shutting down"
                : "the server has reached its connection limit (\(configuration.maxConnections)); try again later"
            logRefusal(reason)
            try install(on: channel) { chosen, channel in try chosen.refuse(channel, reason: reason, context: context) }
            return
        }
        try install(on: channel) { chosen, channel in try chosen.configure(channel, context: context) }
    }

    /// Hands a connection to its protocol: at once when the server speaks one, through a
    /// ``ProtocolDetector`` when it speaks several.
    private func install(
        on channel: any Channel,
        _ body: @escaping (any ConnectionProtocol, any Channel) throws -> Void
    ) throws {
        if protocols.count == 1 { return try body(protocols[0], channel) }
        try channel.pipeline.syncOperations.addHandler(
            ProtocolDetector(protocols: protocols, context: connectionContext, choose: body)
        )
    }

    private func logRefusal(_ reason: String) {
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
    }

    /// Stops accepting and asks every connection to drain (`ChannelShouldQuiesceEvent`); `run()`
    /// returns once they have all closed.
    ///
    /// The listener is closed before any connection hears its GOAWAY: a client that reconnects on
    /// the GOAWAY is refused at once, rather than taken into the kernel's accept queue and then
    /// reset when the listener closes.
    public func beginGracefulShutdown() {
        let (listener, connections) = beginShutdown()
        logger.info("draining", metadata: ["connections": "\(connections.count)"])
        let quiesce: @Sendable () -> Void = {
            for channel in connections {
                channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            }
        }
        if let listener {
            listener.close().whenComplete { _ in quiesce() }
        } else {
            quiesce()
        }
    }

    private func beginShutdown() -> (listener: (any Channel)?, connections: [any Channel]) {
        let (listener, connections, empty) = state.withLock { state in
            state.shuttingDown = true
            return (state.listener, Array(state.connections.values), state.connections.isEmpty)
        }
        if empty { drained.succeed() }
        return (listener, connections)
    }

    private func closeEverything() {
        let (listener, connections) = beginShutdown()
        listener?.close(promise: nil)
        for channel in connections { channel.close(promise: nil) }
    }

    /// Waits until every connection has closed, up to the drain grace period and 2 s more; then
    /// closes what is left.
    private func waitForConnectionsToClose() async throws {
        let limit = configuration.drainGracePeriod + .seconds(2)
        let drained = self.drained.futureResult
        _ = beginShutdown()
        await withTaskGroup(of: Void.self) { group in
            // Waiting on the future cannot be cancelled: past the limit, closing what is left ends it.
            group.addTask { try? await drained.get() }
            group.addTask { [self] in
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                closeEverything()
            }
            await group.next()
            group.cancelAll()
        }
    }
}
