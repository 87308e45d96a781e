public import NIOCore
import NIOHTTP1
import SkiffCore
public import SkiffServer

/// HTTP/1.1 as a ``SkiffServer/ConnectionProtocol``: `http/1.1` by ALPN under TLS, recognized on a
/// plain port by its request line (`POST /`, `GET /`, `OPTIONS /`, …). It answers gRPC-Web and
/// Connect calls and CORS preflights, one request after another on a keep-alive connection; gRPC
/// itself needs HTTP/2 (``HTTP2Protocol``).
///
/// HTTP/1.1 parsing is NIOHTTP1's: a request it cannot parse (a smuggling attempt with both
/// `Content-Length` and `Transfer-Encoding`, a malformed chunk) is answered 400 and the connection
/// closed. Requests sent ahead (pipelined) wait, unread, until the one before is answered. The
/// server's limits apply: message size, header list size, request timeout, idle timeout, drain.
public struct HTTP1Protocol: ConnectionProtocol {
    /// The call protocols answered (gRPC is ignored: it needs HTTP/2).
    public let protocols: HTTPCallProtocols
    /// Which browser origins may call.
    public let cors: CORSPolicy

    /// HTTP/1.1 answering `protocols`' gRPC-Web and Connect, browsers allowed by `cors`.
    public init(protocols: HTTPCallProtocols = .all, cors: CORSPolicy = .none) {
        self.protocols = protocols
        self.cors = cors
    }

    public var name: String { "http/1.1" }

    /// The request methods recognized on a plain port, with the space after them.
    static let methods = ["GET ", "POST ", "OPTIONS ", "HEAD ", "PUT ", "DELETE ", "PATCH "].map { Array($0.utf8) }

    public func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition {
        let head = Array(prefix.prefix(8))
        var undecided = false
        for method in Self.methods {
            let n = min(head.count, method.count)
            guard Array(head.prefix(n)) == Array(method.prefix(n)) else { continue }
            if n == method.count { return .match }
            undecided = true
        }
        return undecided ? .needMoreBytes : .noMatch
    }

    public func configure(_ channel: any Channel, context: ConnectionContext) throws {
        let budget = ResponseBudget(limit: context.configuration.maxBufferedResponseBytes, observer: context.observer)
        let settings = HTTPCallSettings(
            channel: channel,
            context: context,
            executor: context.handlerExecutor(for: channel.eventLoop),
            protocols: protocols,
            cors: cors,
            budget: budget,
            drain: DrainSignal()
        )
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(SendStallGuard(timeout: context.configuration.sendStallTimeout))
        try sync.addHandler(HTTP1Drain(signal: settings.drain, gracePeriod: context.configuration.drainGracePeriod))
        try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
        try sync.addHandler(
            HTTPCallHandler(settings: settings, isHTTP2: false, idleTimeout: context.configuration.idleTimeout)
        )
    }

    public func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws {
        let sync = channel.pipeline.syncOperations
        try sync.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
        try sync.addHandler(HTTPRefuser(reason: reason))
    }
}

/// Drains an HTTP/1.1 connection on `ChannelShouldQuiesceEvent`: fires the connection's
/// ``SkiffCore/DrainSignal`` (calls that never end by themselves, watches and feeds, end then),
/// passes the event on to NIOHTTP1's pipeline handler (which closes the connection at once when no
/// request is in flight, else once its response has been written) and closes it anyway after the
/// grace period.
final class HTTP1Drain: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let signal: DrainSignal
    private let gracePeriod: Duration
    private var graceTimer: Scheduled<Void>?

    init(signal: DrainSignal, gracePeriod: Duration) {
        self.signal = signal
        self.gracePeriod = gracePeriod
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, graceTimer == nil {
            signal.fire()
            let channel = context.channel
            graceTimer = context.eventLoop.scheduleTask(in: TimeAmount(gracePeriod)) { channel.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        graceTimer?.cancel()
        context.fireChannelInactive()
    }
}

/// Answers the first request of a connection the server turns away with 503, then closes it.
final class HTTPRefuser: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let reason: String
    private var answered = false

    init(reason: String) { self.reason = String(reason.prefix(200)) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered, case .head = unwrapInboundIn(data) else { return }
        answered = true
        let body = ByteBuffer(string: reason + "\n")
        let head = HTTPResponseHead(
            version: .http1_1,
            status: .serviceUnavailable,
            headers: [
                "content-type": "text/plain; charset=utf-8", "content-length": String(body.readableBytes),
                "connection": "close", "retry-after": "1",
            ]
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
