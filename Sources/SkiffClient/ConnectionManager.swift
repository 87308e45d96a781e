import NIOCore
import NIOPosix
import NIOSSL
import SkiffCore
import SkiffWire

/// Owns the TCP connections of one ``ClientConnection``: which one new calls go to, when to
/// open the next (with backoff after failures), and the graceful close.
///
/// Concurrency invariant (why `@unchecked Sendable` is sound): every stored `var` is read and
/// written only on ``loop``; all connections of a ``ClientConnection`` use that one loop, so the
/// manager, its handlers and their streams share one isolation domain and call each other
/// directly. The managers of a ``BalancedClientTransport``'s addresses all use one loop too, so a
/// call moving from one to another stays in that domain. Public entry points hop to the loop first.
final class ConnectionManager: @unchecked Sendable {
    let loop: any EventLoop
    let target: ClientConnection.Target
    let configuration: ClientConfiguration

    /// The connection new calls go to; `nil` when the next call should open one.
    private var current: ClientConnectionHandler?
    /// Every connection not closed yet (the current one and draining ones).
    private var live: [ClientConnectionHandler] = []
    /// Connection attempts that failed in a row (reset by a connection reaching ready).
    private var consecutiveFailures = 0
    private var closing = false
    private var closeWaiters: [EventLoopPromise<Void>] = []
    private var sslContext: NIOSSLContext?
    /// Told (on ``loop``) when the address looks unreachable or on its way out: a connection
    /// attempt failed, a connection ended other than by ``close()``, or the server sent GOAWAY. A
    /// ``BalancedClientTransport`` marks the address unhealthy on it.
    let onTrouble: (@Sendable () -> Void)?

    init(
        loop: any EventLoop,
        target: ClientConnection.Target,
        configuration: ClientConfiguration,
        onTrouble: (@Sendable () -> Void)? = nil
    ) {
        self.loop = loop
        self.target = target
        self.configuration = configuration
        self.onTrouble = onTrouble
    }

    /// Hands a call to the current connection, opening one if needed.
    func route(_ stream: ClientStream) {
        loop.preconditionInEventLoop()
        guard !stream.finished else { return }
        guard !closing else {
            stream.fail(RPCError(code: .unavailable, message: "The client connection is closed."))
            return
        }
        (current ?? makeConnection()).enqueue(stream)
    }

    /// A future that succeeds once a connection is ready (server SETTINGS received).
    func connect() -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        guard !closing else {
            return loop.makeFailedFuture(RPCError(code: .unavailable, message: "The client connection is closed."))
        }
        return (current ?? makeConnection()).readyPromise.futureResult
    }

    /// Stops new calls and completes once every connection has closed; calls in flight finish.
    func close() -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        closing = true
        current = nil
        let promise = loop.makePromise(of: Void.self)
        closeWaiters.append(promise)
        for handler in live { handler.beginGracefulClose() }
        completeCloseIfDone()
        return promise.futureResult
    }

    /// Calls queued on its connections, waiting for one to be ready or for a stream slot.
    var queuedCalls: Int {
        loop.preconditionInEventLoop()
        return live.reduce(0) { $0 + $1.waiting.count }
    }

    // MARK: Notifications from handlers

    func handlerReady(_ handler: ClientConnectionHandler) {
        consecutiveFailures = 0
    }

    /// The connection takes no new streams (GOAWAY, ids used up, closing, failed).
    func handlerUnusable(_ handler: ClientConnectionHandler) {
        if current === handler { current = nil }
    }

    func handlerClosed(_ handler: ClientConnectionHandler) {
        if current === handler { current = nil }
        live.removeAll { $0 === handler }
        if !handler.state.everReady { consecutiveFailures += 1 }
        // Outside a close of ours a connection ends only after GOAWAY, or when the attempt failed or
        // the connection dropped.
        if !closing { onTrouble?() }
        completeCloseIfDone()
    }

    /// The server sent GOAWAY on one of the connections.
    func handlerReceivedGoAway(_ handler: ClientConnectionHandler) {
        if !closing { onTrouble?() }
    }

    private func completeCloseIfDone() {
        guard closing, live.isEmpty else { return }
        let waiters = closeWaiters
        closeWaiters.removeAll()
        for waiter in waiters { waiter.succeed() }
    }

    // MARK: Connecting

    private func makeConnection() -> ClientConnectionHandler {
        let handler = ClientConnectionHandler(manager: self)
        current = handler
        live.append(handler)
        let delay = configuration.backoff.delay(afterFailures: consecutiveFailures)
        if delay <= .zero {
            start(handler)
        } else {
            loop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { self.start(handler) }
        }
        return handler
    }

    private func start(_ handler: ClientConnectionHandler) {
        guard handler.state.phase == .connecting else { return }
        do {
            try configuration.settings.validate()
        } catch {
            handler.shutdown(RPCError(code: .internal, message: "Invalid ClientConfiguration.settings: \(error)"))
            return
        }
        let tlsHandler: NIOSSLClientHandler?
        do {
            tlsHandler = try makeTLSHandler()
        } catch {
            handler.shutdown(RPCError(code: .unavailable, message: "Could not set up TLS: \(error)"))
            return
        }
        let bound = NIOLoopBound(handler, eventLoop: loop)
        let tls = tlsHandler.map { NIOLoopBound($0, eventLoop: loop) }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                do {
                    if let tls { try channel.pipeline.syncOperations.addHandler(tls.value) }
                    try channel.pipeline.syncOperations.addHandler(bound.value)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        let future: EventLoopFuture<any Channel>
        switch target.kind {
        case .host(let host, let port): future = bootstrap.connect(host: host, port: port)
        case .unixDomainSocket(let path): future = bootstrap.connect(unixDomainSocketPath: path)
        }
        let description = target.description
        future.assumeIsolated().whenFailure { error in
            handler.shutdown(RPCError(code: .unavailable, message: "Could not connect to \(description): \(error)"))
        }
    }

    private func makeTLSHandler() throws -> NIOSSLClientHandler? {
        guard let tls = configuration.tls else { return nil }
        let context: NIOSSLContext
        if let sslContext {
            context = sslContext
        } else {
            context = try NIOSSLContext(configuration: tls.makeTLSConfiguration())
            sslContext = context
        }
        var hostname = tls.serverHostname
        if hostname == nil, case .host(let host, _) = target.kind, !ClientConnection.Target.isIPAddress(host) {
            hostname = host
        }
        return try NIOSSLClientHandler(context: context, serverHostname: hostname)
    }
}
