public import NIOCore
public import NIOPosix
public import SkiffCore
import SkiffWire
public import SwiftProtobuf

/// A Skiff client connection: many concurrent calls multiplexed over one TCP (or TLS) connection.
///
/// The connection is opened lazily by the first call, or eagerly with ``connect()``. When it
/// drops, calls in flight fail with UNAVAILABLE and the next call opens a new one (with
/// exponential backoff and jitter after failed attempts). Calls the server did not process —
/// refused streams, streams above a GOAWAY's last stream id — are retried transparently. While
/// the server's MAX_CONCURRENT_STREAMS is reached, calls wait locally for a free stream.
///
/// Call ``close()`` when done (or use ``withClientConnection(target:configuration:eventLoopGroup:isolation:_:)``):
/// it waits for the calls in flight, then closes.
///
/// ```swift
/// let connection = ClientConnection(target: .host("127.0.0.1", port: 7700))
/// let response = try await connection.unary(method, request: request, options: .defaults, responseType: Reply.self)
/// await connection.close()
/// ```
public final class ClientConnection: ClientTransport, Sendable {
    /// Where a connection goes.
    public struct Target: Sendable, Hashable, CustomStringConvertible {
        enum Kind: Sendable, Hashable {
            case host(String, Int)
            case unixDomainSocket(String)
        }

        let kind: Kind

        /// A host name or IP address and a TCP port.
        public static func host(_ host: String, port: Int) -> Target { Target(kind: .host(host, port)) }

        /// A Unix domain socket.
        public static func unixDomainSocket(path: String) -> Target { Target(kind: .unixDomainSocket(path)) }

        /// `host:port` (`[v6]:port`), or `unix:path`.
        public var description: String {
            switch kind {
            case .host(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case .unixDomainSocket(let path): "unix:\(path)"
            }
        }

        /// Whether `host` is an IP literal (no SNI for those).
        static func isIPAddress(_ host: String) -> Bool {
            host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
        }
    }

    /// Where this connection goes.
    public let target: Target
    /// How it behaves.
    public let configuration: ClientConfiguration
    /// The event loop all of this connection's sockets, streams and timers run on.
    public let eventLoop: any EventLoop
    /// Runs tasks on ``eventLoop``. A call made from a task that prefers it has no thread hop: the
    /// request goes to the socket and the response comes back to the caller on the loop's thread.
    /// It is the fastest way to make many small calls, and at one call in flight it cuts the
    /// latency that two hops between threads cost; the work such a task does between calls holds
    /// up the connection's I/O, so keep it short.
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(connection.taskExecutor) {
    ///     for request in requests { _ = try await client.unaryCall(request) }
    /// }
    /// ```
    public let taskExecutor: any TaskExecutor
    let manager: ConnectionManager

    /// Creates a connection; nothing happens on the network until the first call or ``connect()``.
    /// - Parameters:
    ///   - target: where to connect.
    ///   - configuration: SETTINGS, timeouts, backoff, keepalive, TLS.
    ///   - eventLoopGroup: the group to take an event loop from (one loop per connection).
    public convenience init(
        target: Target,
        configuration: ClientConfiguration = .defaults,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.init(target: target, configuration: configuration, eventLoop: eventLoopGroup.next(), onTrouble: nil)
    }

    /// Creates a connection on `eventLoop`; `onTrouble` is called on it when a connection attempt
    /// fails, a connection drops or the server sends GOAWAY (see ``ConnectionManager/onTrouble``).
    init(
        target: Target,
        configuration: ClientConfiguration,
        eventLoop: any EventLoop,
        onTrouble: (@Sendable () -> Void)?
    ) {
        self.target = target
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.taskExecutor = EventLoopTaskExecutor(eventLoop)
        self.manager = ConnectionManager(
            loop: eventLoop,
            target: target,
            configuration: configuration,
            onTrouble: onTrouble
        )
    }

    deinit {
        let manager = self.manager
        eventLoop.execute { _ = manager.close() }
    }

    /// Opens the connection now and waits until the server's SETTINGS have arrived.
    ///
    /// - Throws: ``RPCError`` with UNAVAILABLE when the server cannot be reached.
    public func connect() async throws {
        let manager = self.manager
        do {
            try await eventLoop.flatSubmit { manager.connect() }.get()
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(code: .unavailable, message: "Could not connect to \(target): \(error)")
        }
    }

    /// Closes gracefully: new calls fail with UNAVAILABLE; calls in flight (and calls waiting for
    /// a stream) finish; then the sockets close. Returns once they have.
    public func close() async {
        let manager = self.manager
        try? await eventLoop.flatSubmit { manager.close() }.get()
    }

    // MARK: ClientTransport

    /// Makes a unary call: HEADERS and MESSAGE(END_STREAM), then waits for the response.
    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        try await unary(method, request: request, options: options, responseType: responseType, failover: nil)
    }

    /// Makes a unary call that, when `failover` is given and no server processed it, may move to
    /// another address of a ``BalancedClientTransport`` (whose connections share this event loop).
    func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type,
        failover: CallFailover?
    ) async throws -> ClientResponse<Response> {
        let payload: ByteBuffer
        do {
            payload = try request.serializedBuffer()
        } catch {
            throw RPCError(code: .internal, message: "Could not serialize the request: \(error)")
        }
        try Self.validate(options.metadata)
        let stream = ClientStream(unary: manager, path: method.path, options: options, request: payload)
        stream.failover = failover  // not shared yet: the loop has not seen the stream
        let loop = eventLoop
        let result = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<UnaryResult, any Error>) in
                // From a task on the loop (``taskExecutor``), at once.
                if loop.inEventLoop {
                    stream.startUnary(continuation)
                } else {
                    loop.execute { stream.startUnary(continuation) }
                }
            }
        } onCancel: {
            loop.execute { stream.cancel(RPCError(code: .cancelled, message: "The call was cancelled.")) }
        }
        let message: Response
        do {
            message = try Response(buffer: result.message)
        } catch {
            throw RPCError(
                code: .internal,
                message: "Could not decode the response as \(Response.protoMessageName): \(error)"
            )
        }
        return ClientResponse(message: message, metadata: result.headers, trailingMetadata: result.trailers)
    }

    /// Makes a streaming call of any kind. `requests` runs in a child task concurrently with
    /// `body`; `body` runs once the response HEADERS arrive (a trailers-only OK response gives it
    /// no messages; a trailers-only error throws without calling it). If `body` returns before
    /// the response has ended, the stream is cancelled.
    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            failover: nil,
            requests: requests,
            body: body
        )
    }

    /// Makes a streaming call that, when `failover` is given and no server processed it, may move
    /// to another address of a ``BalancedClientTransport`` (whose connections share this event loop).
    func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        failover: CallFailover?,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try Self.validate(options.metadata)
        let stream = ClientStream(streaming: manager, path: method.path, options: options)
        stream.failover = failover  // not shared yet: the loop has not seen the stream
        let loop = eventLoop
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                loop.execute { stream.start() }
                group.addTask {
                    do {
                        try await requests(
                            RPCWriter { message in
                                let buffer: ByteBuffer
                                do {
                                    buffer = try message.serializedBuffer()
                                } catch {
                                    throw RPCError(code: .internal, message: "Could not serialize a request: \(error)")
                                }
                                try await stream.write(buffer)
                            }
                        )
                        loop.execute { stream.endRequests() }
                    } catch {
                        let failure =
                            error is CancellationError
                            ? RPCError(code: .cancelled, message: "The request producer was cancelled.")
                            : RPCError(mapping: error)
                        loop.execute { stream.cancel(failure) }
                    }
                }
                defer {
                    group.cancelAll()
                    // The response may not have ended: cancel the stream (nothing if it has).
                    loop.execute {
                        stream.cancel(RPCError(code: .cancelled, message: "The response was abandoned."))
                    }
                }
                let response: StreamingClientResponse<Response> = try await stream.responseHead()
                return try await body(response)
            }
        } onCancel: {
            loop.execute { stream.cancel(RPCError(code: .cancelled, message: "The call was cancelled.")) }
        }
    }

    private static func validate(_ metadata: Metadata) throws {
        guard !metadata.isEmpty, let failure = metadata.validationFailure() else { return }
        throw RPCError(code: .internal, message: "Invalid request metadata: \(failure).")
    }
}

/// Opens a ``ClientConnection``, runs `body` with it, and closes it (gracefully) whether `body`
/// returns or throws.
public func withClientConnection<R>(
    target: ClientConnection.Target,
    configuration: ClientConfiguration = .defaults,
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (ClientConnection) async throws -> R
) async throws -> R {
    let connection = ClientConnection(target: target, configuration: configuration, eventLoopGroup: eventLoopGroup)
    let result: Result<R, any Error>
    do {
        result = .success(try await body(connection))
    } catch {
        result = .failure(error)
    }
    await connection.close()
    return try result.get()
}
