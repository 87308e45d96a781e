public import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import SkiffCore
public import SkiffServer
import SkiffWire

/// HTTP/2 as a ``SkiffServer/ConnectionProtocol``: `h2` by ALPN under TLS, HTTP/2 with prior
/// knowledge (h2c) on a plain port, recognized by the HTTP/2 connection preface. Each stream is a
/// call of the protocol its request's content type names: gRPC (the gRPC PROTOCOL-HTTP2 spec),
/// gRPC-Web or Connect. Every call goes to the server's router through its
/// ``SkiffCore/CallRunner``, as skiff/1's do.
///
/// The server's limits apply as on skiff/1: ``SkiffServer/ServerConfiguration/settings``'
/// `maxConcurrentStreams`, `maxMessageSize` and `maxHeaderListSize` (advertised in the HTTP/2
/// SETTINGS), its drain grace period. swift-nio-http2 keeps HTTP/2's own rules and its defences
/// against reset, PING and SETTINGS floods.
public struct HTTP2Protocol: ConnectionProtocol {
    /// The call protocols answered.
    public let protocols: HTTPCallProtocols
    /// Which browser origins may call.
    public let cors: CORSPolicy

    /// HTTP/2 answering `protocols` (all three by default), browsers allowed by `cors` (none by default).
    public init(protocols: HTTPCallProtocols = .all, cors: CORSPolicy = .none) {
        self.protocols = protocols
        self.cors = cors
    }

    public var name: String { "h2" }

    /// The HTTP/2 client connection preface.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    public func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition {
        let head = Array(prefix.prefix(Self.preface.count))
        guard head == Array(Self.preface.prefix(head.count)) else { return .noMatch }
        return head.count == Self.preface.count ? .match : .needMoreBytes
    }

    public func configure(_ channel: any Channel, context: ConnectionContext) throws {
        let executor = context.handlerExecutor(for: channel.eventLoop)
        // The bound on what the connection holds of responses its client has not read, as on skiff/1.
        let budget = ResponseBudget(limit: context.configuration.maxBufferedResponseBytes, observer: context.observer)
        // Fired when the connection drains: calls that never end by themselves (watches, feeds) end then.
        let drain = DrainSignal()
        let settings = HTTPCallSettings(
            channel: channel,
            context: context,
            executor: executor,
            protocols: protocols,
            cors: cors,
            budget: budget,
            drain: drain
        )
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(SendStallGuard(timeout: context.configuration.sendStallTimeout))
        try sync.addHandler(FlushCoalescer())
        _ = try sync.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: Self.connectionConfiguration(context.configuration),
            streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(GRPCStreamHandler(settings: settings))
            }
        }
        try sync.addHandler(
            GRPCConnectionHandler(
                gracePeriod: context.configuration.drainGracePeriod,
                idleTimeout: context.configuration.idleTimeout,
                budget: budget,
                drainSignal: drain
            )
        )
    }

    public func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws {
        let sync = channel.pipeline.syncOperations
        _ = try sync.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: Self.connectionConfiguration(context.configuration),
            streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
        ) { stream in stream.close() }
        try sync.addHandler(GRPCConnectionHandler(refusing: reason))
    }

    static func connectionConfiguration(_ configuration: ServerConfiguration) -> NIOHTTP2Handler.ConnectionConfiguration
    {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        let settings = configuration.settings
        connection.initialSettings = [
            // skiff/1 leaves the stream limit off by default; HTTP/2 peers expect one.
            HTTP2Setting(parameter: .maxConcurrentStreams, value: Int(settings.maxConcurrentStreams ?? 100)),
            HTTP2Setting(parameter: .maxHeaderListSize, value: Int(settings.maxHeaderListSize)),
            HTTP2Setting(
                parameter: .initialWindowSize,
                value: Int(min(settings.initialStreamWindow, UInt32(Int32.max)))
            ),
        ]
        connection.targetWindowSize = Int(settings.initialConnectionWindow)
        return connection
    }
}

/// Where an HTTP/2 stream goes, by its request's HEADERS: gRPC (by its content type) stays with
/// the stream's first handler, ``GRPCStreamHandler``; gRPC-Web and Connect go behind
/// swift-nio-http2's HTTP/1 codec to an ``HTTPCallHandler``.
enum HTTP2StreamRouter {
    /// Whether the stream whose request HEADERS are `headers` is a gRPC call this server answers.
    static func isGRPC(_ headers: HPACKHeaders, settings: HTTPCallSettings) -> Bool {
        settings.protocols.contains(.grpc) && GRPCHeaders.isGRPC(headers.first(name: "content-type") ?? "")
    }

    /// Hands the stream to gRPC-Web and Connect: installs their handlers after `context`'s handler,
    /// passes them the HEADERS and removes that handler.
    static func handOver(_ headers: NIOAny, from context: ChannelHandlerContext, settings: HTTPCallSettings) {
        let sync = context.pipeline.syncOperations
        do {
            try sync.addHandlers(
                [HTTP2FramePayloadToHTTP1ServerCodec(), HTTPCallHandler(settings: settings, isHTTP2: true)],
                position: .after(context.handler)
            )
        } catch {
            return context.close(promise: nil)
        }
        context.fireChannelRead(headers)
        sync.removeHandler(context: context, promise: nil)
    }
}
