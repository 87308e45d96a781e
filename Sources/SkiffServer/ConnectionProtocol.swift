public import Logging
public import NIOCore
public import SkiffCore
import SkiffWire

/// A wire protocol a ``Server`` speaks on the connections it accepts: skiff/1 is one
/// (``SkiffWireProtocol``); others are added the same way.
///
/// The listener picks a connection's protocol from the TLS ALPN name the client and server agreed
/// on, or, without one, from the connection's first bytes (``recognize(_:)``). It then calls
/// ``configure(_:context:)`` on the channel's event loop, with the bytes read so far still to come
/// through the pipeline. The protocol's handlers present every call to ``ConnectionContext/router``
/// (see ``SkiffCore/CallAdmission`` and ``SkiffCore/ResponseState`` for the rules every transport
/// keeps) and drain when they see `ChannelShouldQuiesceEvent`: no new calls, calls in flight finish
/// within ``ServerConfiguration/drainGracePeriod``, then close.
public protocol ConnectionProtocol: Sendable {
    /// The protocol's name: its TLS ALPN identifier (`skiff/1`, `h2`), also used in logs.
    var name: String { get }

    /// Whether a connection whose first bytes are `prefix` speaks this protocol. Called with at
    /// least one byte, and again with more while the answer is ``ProtocolRecognition/needMoreBytes``.
    func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition

    /// Installs the protocol's handlers on an accepted connection. Called on the channel's event
    /// loop; when the protocol was recognized from the first bytes, they arrive once this returns.
    func configure(_ channel: any Channel, context: ConnectionContext) throws

    /// Installs handlers that turn the connection away, the way the protocol reports a connection
    /// error (the server is at its connection limit, or shutting down), and close it.
    func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws
}

/// What a protocol's recognition of a connection's first bytes says.
public enum ProtocolRecognition: Sendable, Hashable {
    /// The bytes are this protocol's.
    case match
    /// They are not.
    case noMatch
    /// Too few bytes to tell yet.
    case needMoreBytes
}

/// What a ``ConnectionProtocol`` needs from the server to serve a connection.
public struct ConnectionContext: Sendable {
    /// The server's configuration: limits, timeouts, TLS.
    public let configuration: ServerConfiguration
    /// Where calls go.
    public let router: RPCRouter
    /// Run around every handler.
    public let interceptors: [any ServerInterceptor]
    /// Where the server logs.
    public let logger: Logger
    /// Where connection and call metrics go.
    public let observer: ServerObserver
    /// Runs every call: admission, deadline, handler, metrics (one per server).
    public let runner: CallRunner

    /// The context of a server's connections.
    public init(
        configuration: ServerConfiguration,
        router: RPCRouter,
        interceptors: [any ServerInterceptor],
        logger: Logger,
        observer: ServerObserver
    ) {
        self.configuration = configuration
        self.router = router
        self.interceptors = interceptors
        self.logger = logger
        self.observer = observer
        self.runner = CallRunner(router: router, interceptors: interceptors, logger: logger, observer: observer)
    }

    /// Where a connection on `eventLoop` runs its handlers: on the loop itself (no thread hop to
    /// write a response) unless the server is configured to use the global executor. Make one per
    /// connection and pass it to every ``SkiffCore/CallRunner/start(_:executor:)``.
    public func handlerExecutor(for eventLoop: any EventLoop) -> (any TaskExecutor)? {
        configuration.handlerExecutor == .eventLoop ? EventLoopTaskExecutor(eventLoop) : nil
    }
}

/// Call deadlines on an event loop's timers (virtual time on an `EmbeddedEventLoop`): the clock a
/// connection passes to ``SkiffCore/CallRunner/opened(_:timeout:timers:)``.
public struct EventLoopDeadlineTimers: DeadlineTimers {
    /// The connection's event loop.
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    public func schedule(after delay: Duration, _ expire: @escaping @Sendable () -> Void) -> Scheduled<Void> {
        eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds), expire)
    }
}
