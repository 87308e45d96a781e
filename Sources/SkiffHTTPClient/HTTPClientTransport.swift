public import NIOCore
import NIOHPACK
import NIOHTTP2
public import NIOPosix
public import SkiffCore
import SkiffWire
public import SwiftProtobuf
import Synchronization

/// A ``SkiffCore/ClientTransport`` that speaks gRPC, gRPC-Web or Connect over one HTTP/2
/// connection (cleartext, prior knowledge), each call on its own stream.
///
/// Typed clients call through it as through any transport:
///
/// ```swift
/// try await withHTTPClientTransport(host: "127.0.0.1", port: 7700, protocol: .grpc) { transport in
///     let client = Skiff_Testing_V1_TestService.Client(transport: transport)
///     _ = try await client.emptyCall(.init())
/// }
/// ```
///
/// A call that ends with a status other than OK throws ``SkiffCore/RPCError``; a connection that
/// fails throws `UNAVAILABLE`. Cancelling the calling task resets the call's stream
/// (RST_STREAM), and a ``SkiffCore/CallOptions/timeout`` is sent (`grpc-timeout`, or
/// `connect-timeout-ms`) and enforced locally as `DEADLINE_EXCEEDED`. Metadata travels both ways
/// as HTTP headers, `-bin` values in base64.
public final class HTTPClientTransport: ClientTransport {
    /// Limits and HTTP/2 settings of a connection.
    public struct Configuration: Sendable {
        /// The largest response message accepted (larger ones end the call with RESOURCE_EXHAUSTED).
        public var maxMessageSize = 4 * 1024 * 1024
        /// How long connecting may take.
        public var connectTimeout: Duration = .seconds(10)
        /// The HTTP/2 flow-control window of each stream and of the connection, in bytes.
        public var windowSize = 1024 * 1024

        /// The defaults: 4 MiB messages, 10 s to connect, 1 MiB windows.
        public init() {}
    }

    /// The call protocol every call speaks.
    public let callProtocol: HTTPClientProtocol
    /// The connection's limits.
    public let configuration: Configuration
    private let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    private let authority: String

    private init(
        callProtocol: HTTPClientProtocol,
        configuration: Configuration,
        channel: any Channel,
        multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>,
        authority: String
    ) {
        self.callProtocol = callProtocol
        self.configuration = configuration
        self.channel = channel
        self.multiplexer = multiplexer
        self.authority = authority
    }

    /// Connects to `host:port` and speaks HTTP/2 (prior knowledge) on the connection.
    ///
    /// - Throws: ``SkiffCore/RPCError`` `UNAVAILABLE` if the connection cannot be made.
    public static func connect(
        host: String,
        port: Int,
        protocol callProtocol: HTTPClientProtocol,
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> HTTPClientTransport {
        var http2 = NIOHTTP2Handler.Configuration()
        http2.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
            HTTP2Setting(parameter: .initialWindowSize, value: configuration.windowSize),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        http2.connection.targetWindowSize = configuration.windowSize
        http2.stream.targetWindowSize = configuration.windowSize
        let settings = http2
        let connected: (any Channel, NIOHTTP2Handler.AsyncStreamMultiplexer<Void>)
        do {
            connected = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                            mode: .client,
                            configuration: settings
                        ) { stream in
                            // The server opens no streams (no push).
                            stream.close()
                        }
                        return (channel, multiplexer)
                    }
                }
        } catch {
            throw RPCError(code: .unavailable, message: "Could not connect to \(host):\(port): \(error)")
        }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return HTTPClientTransport(
            callProtocol: callProtocol,
            configuration: configuration,
            channel: connected.0,
            multiplexer: connected.1,
            authority: authority
        )
    }

    /// Closes the connection; calls still running end with `UNAVAILABLE` (or `CANCELLED`).
    public func close() async {
        try? await channel.close()
    }

    // MARK: Calls

    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        let headers = try HTTPClientRequest.headers(
            protocol: callProtocol,
            path: method.path,
            authority: authority,
            kind: method.kind,
            options: options
        )
        let message = try Self.encode(request)
        let body = isPlainBody(method) ? message : HTTPClientRequest.envelope(message)
        return try await withCallDeadline(options.timeout) { [self] in
            try await exchange(method) { stream, outbound in
                try await Self.write(
                    outbound,
                    [
                        .headers(HTTP2Frame.FramePayload.Headers(headers: headers)),
                        .data(HTTP2Frame.FramePayload.Data(data: .byteBuffer(body), endStream: true)),
                    ]
                )
                var metadata = Metadata()
                var received: ByteBuffer?
                while true {
                    switch try await stream.next() {
                    case .metadata(let value):
                        metadata = value
                    case .message(let bytes):
                        guard received == nil else {
                            throw RPCError(code: .internal, message: "The server sent more than one response message.")
                        }
                        received = bytes
                    case .end(let status):
                        guard status.code == .ok else { throw status.error }
                        guard let received else {
                            throw RPCError(code: .internal, message: "The server sent no response message.")
                        }
                        return ClientResponse(
                            message: try Self.decode(Response.self, received),
                            metadata: metadata,
                            trailingMetadata: status.metadata
                        )
                    }
                }
            }
        }
    }

    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        let headers = try HTTPClientRequest.headers(
            protocol: callProtocol,
            path: method.path,
            authority: authority,
            kind: method.kind,
            options: options
        )
        let plainBody = isPlainBody(method)
        return try await withCallDeadline(options.timeout) { [self] in
            try await exchange(method) { stream, outbound in
                try await Self.write(outbound, [.headers(HTTP2Frame.FramePayload.Headers(headers: headers))])
                return try await withThrowingTaskGroup(of: Result?.self) { group in
                    group.addTask {
                        try await Self.sendRequests(requests, outbound: outbound, plainBody: plainBody)
                        return nil
                    }
                    group.addTask {
                        var metadata = Metadata()
                        switch try await stream.next() {
                        case .metadata(let value): metadata = value
                        case .end(let status): guard status.code == .ok else { throw status.error }
                        case .message:
                            throw RPCError(code: .internal, message: "The server sent a message before its metadata.")
                        }
                        let response = StreamingClientResponse(
                            metadata: metadata,
                            messages: RPCAsyncSequence { try await stream.nextMessage(Response.self) },
                            trailingMetadata: { try await stream.trailers(Response.self) }
                        )
                        return try await body(response)
                    }
                    defer { group.cancelAll() }
                    while let next = try await group.next() {
                        if let result = next { return result }
                    }
                    throw RPCError(code: .internal, message: "The call ended without a result.")
                }
            }
        }
    }

    // MARK: Internals

    private typealias Outbound = NIOAsyncChannelOutboundWriter<HTTP2Frame.FramePayload>

    /// A Connect unary method: the body is the message itself.
    private func isPlainBody(_ method: MethodDescriptor) -> Bool {
        callProtocol == .connect && method.kind == .unary
    }

    /// Opens a stream for one call, runs `body` with its response side and its writer, and closes
    /// the stream, which resets it if the call has not ended (the caller was cancelled, or the
    /// deadline passed).
    private func exchange<Result: Sendable>(
        _ method: MethodDescriptor,
        _ body: (ResponseStream, Outbound) async throws -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>
        do {
            channel = try await multiplexer.openStream { stream in
                stream.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(
                        wrappingChannelSynchronously: stream
                    )
                }
            }
        } catch {
            throw Self.transportError(error)
        }
        let decoder = HTTPResponseDecoder(
            protocol: callProtocol,
            kind: method.kind,
            maxMessageSize: configuration.maxMessageSize
        )
        return try await channel.executeThenClose { inbound, outbound in
            try await body(ResponseStream(inbound.makeAsyncIterator(), decoder: decoder), outbound)
        }
    }

    private func withCallDeadline<T: Sendable>(
        _ timeout: Duration?,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let timeout else { return try await body() }
        return try await withOptionalDeadline(timeout, body)
    }

    private static func write(_ outbound: Outbound, _ frames: [HTTP2Frame.FramePayload]) async throws {
        do {
            try await outbound.write(contentsOf: frames)
        } catch {
            throw transportError(error)
        }
    }

    /// Runs the caller's request writer, then ends the request. Writes that fail because the call
    /// has ended stop the writer quietly: the response carries the reason.
    private static func sendRequests<Request: Message>(
        _ requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        outbound: Outbound,
        plainBody: Bool
    ) async throws {
        let single = Mutex<ByteBuffer?>(nil)
        let writer = RPCWriter<Request> { message in
            let bytes = try encode(message)
            if plainBody {
                try single.withLock { held in
                    guard held == nil else {
                        throw RPCError(code: .internal, message: "A unary call takes exactly one request.")
                    }
                    held = bytes
                }
                return
            }
            do {
                try await outbound.write(
                    .data(HTTP2Frame.FramePayload.Data(data: .byteBuffer(HTTPClientRequest.envelope(bytes))))
                )
            } catch {
                throw RequestStreamClosed()
            }
        }
        do {
            try await requests(writer)
            let last = plainBody ? single.withLock { $0 } ?? ByteBuffer() : ByteBuffer()
            try await outbound.write(.data(HTTP2Frame.FramePayload.Data(data: .byteBuffer(last), endStream: true)))
        } catch is RequestStreamClosed {
            return
        } catch  where Task.isCancelled {
            return
        }
    }

    static func encode(_ message: some Message) throws(RPCError) -> ByteBuffer {
        do {
            return try message.serializedBuffer()
        } catch {
            throw RPCError(code: .internal, message: "The request does not encode: \(error)")
        }
    }

    static func decode<Response: Message>(_ type: Response.Type, _ bytes: ByteBuffer) throws(RPCError) -> Response {
        do {
            return try Response(buffer: bytes)
        } catch {
            throw RPCError(
                code: .internal,
                message: "The response does not decode as \(Response.protoMessageName): \(error)"
            )
        }
    }

    /// An error of the connection or stream as a status.
    static func transportError(_ error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: error
        case is CancellationError: RPCError(code: .cancelled, message: "The call was cancelled.")
        default: RPCError(code: .unavailable, message: "The connection failed: \(error)")
        }
    }
}

/// A request written after the call ended.
struct RequestStreamClosed: Error, RPCErrorConvertible {
    var rpcErrorCode: StatusCode { .cancelled }
    var rpcErrorMessage: String { "The call has ended; no more requests can be sent." }
}

/// The response side of one call: frames in, events out, through an ``HTTPResponseDecoder``.
///
/// Used by one task at a time (the call's reader, then the body it runs), hence unchecked.
final class ResponseStream: @unchecked Sendable {
    private var iterator: NIOAsyncChannelInboundStream<HTTP2Frame.FramePayload>.AsyncIterator
    private var decoder: HTTPResponseDecoder
    private var status: CallStatus?

    init(
        _ iterator: NIOAsyncChannelInboundStream<HTTP2Frame.FramePayload>.AsyncIterator,
        decoder: HTTPResponseDecoder
    ) {
        self.iterator = iterator
        self.decoder = decoder
    }

    /// The next event; after the end, the end again.
    func next() async throws(RPCError) -> HTTPResponseDecoder.Event {
        while true {
            if let status { return .end(status) }
            if let event = decoder.next() {
                if case .end(let status) = event { self.status = status }
                return event
            }
            let frame: HTTP2Frame.FramePayload?
            do {
                frame = try await iterator.next()
            } catch {
                throw HTTPClientTransport.transportError(error)
            }
            if let frame {
                decoder.receive(frame)
            } else {
                if Task.isCancelled { throw RPCError(code: .cancelled, message: "The call was cancelled.") }
                decoder.streamClosed()
            }
        }
    }

    /// The next response message; `nil` after an OK end; throws the status of any other end.
    func nextMessage<Response: Message>(_ type: Response.Type) async throws(RPCError) -> Response? {
        while true {
            switch try await next() {
            case .metadata: continue
            case .message(let bytes): return try HTTPClientTransport.decode(Response.self, bytes)
            case .end(let status):
                guard status.code == .ok else { throw status.error }
                return nil
            }
        }
    }

    /// The trailing metadata, once every message has been read (unread ones are dropped).
    func trailers<Response: Message>(_ type: Response.Type) async throws(RPCError) -> Metadata {
        while try await nextMessage(Response.self) != nil {}
        return status?.metadata ?? [:]
    }
}

/// Connects to `host:port` over HTTP/2 speaking `callProtocol`, runs `body` with the transport,
/// and closes the connection, whether `body` returns or throws.
public func withHTTPClientTransport<R>(
    host: String,
    port: Int,
    protocol callProtocol: HTTPClientProtocol,
    configuration: HTTPClientTransport.Configuration = HTTPClientTransport.Configuration(),
    _ body: (HTTPClientTransport) async throws -> R
) async throws -> R {
    let transport = try await HTTPClientTransport.connect(
        host: host,
        port: port,
        protocol: callProtocol,
        configuration: configuration
    )
    do {
        let result = try await body(transport)
        await transport.close()
        return result
    } catch {
        await transport.close()
        throw error
    }
}
