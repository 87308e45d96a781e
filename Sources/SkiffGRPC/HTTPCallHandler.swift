import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
public import SkiffCore
import SkiffServer
import SkiffWire

/// The call protocols an HTTP listener answers besides HTTP itself.
public struct HTTPCallProtocols: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// gRPC (HTTP/2 only).
    public static let grpc = HTTPCallProtocols(rawValue: 1 << 0)
    /// gRPC-Web, over HTTP/1.1 and HTTP/2.
    public static let grpcWeb = HTTPCallProtocols(rawValue: 1 << 1)
    /// Connect, over HTTP/1.1 and HTTP/2.
    public static let connect = HTTPCallProtocols(rawValue: 1 << 2)
    /// All three.
    public static let all: HTTPCallProtocols = [.grpc, .grpcWeb, .connect]
}

/// What every HTTP call of one connection shares.
struct HTTPCallSettings {
    let runner: CallRunner
    let executor: (any TaskExecutor)?
    let maxMessageSize: Int
    let maxHeaderListSize: Int
    let requestTimeout: Duration
    let protocols: HTTPCallProtocols
    let cors: CORSPolicy
    let budget: ResponseBudget
    let drain: DrainSignal
    let logger: Logger
    /// The client's address, as calls report it.
    let peer: String

    init(
        channel: any Channel,
        context: ConnectionContext,
        executor: (any TaskExecutor)?,
        protocols: HTTPCallProtocols,
        cors: CORSPolicy,
        budget: ResponseBudget,
        drain: DrainSignal
    ) {
        self.runner = context.runner
        self.executor = executor
        self.maxMessageSize = Int(context.configuration.settings.maxMessageSize)
        self.maxHeaderListSize = Int(context.configuration.settings.maxHeaderListSize)
        self.requestTimeout = context.configuration.requestTimeout
        self.protocols = protocols
        self.cors = cors
        self.budget = budget
        self.drain = drain
        self.logger = context.logger
        self.peer = channel.remoteAddress.map { "\($0)" } ?? "?"
    }
}

/// Answers gRPC-Web and Connect calls, and CORS preflights, from HTTP requests as NIOHTTP1 parses
/// them: on an HTTP/1.1 connection (one request after another; keep-alive, idle timeout and drain
/// are this handler's), or on one HTTP/2 stream behind swift-nio-http2's HTTP/1 codec.
///
/// Each request becomes an ``HTTPExchange``; calls go to the router through the server's
/// ``SkiffCore/CallRunner`` like every other protocol's.
final class HTTPCallHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let settings: HTTPCallSettings
    /// On an HTTP/2 stream (one request; the connection's own handler keeps idle and drain).
    let isHTTP2: Bool
    private let idleTimeout: Duration

    private(set) var context: ChannelHandlerContext?
    /// The request being answered.
    private(set) var exchange: HTTPExchange?
    /// A request refused with a plain answer, whose body is still arriving (and is dropped).
    private var discarding = false
    private var idleTimer: Scheduled<Void>?
    /// An answer waiting for the end of its request's body (HTTP/1.1), and its bound.
    private var deferred: (answer: HTTPAnswer, keepAlive: Bool)?
    private var discardTimer: Scheduled<Void>?
    private var requests: UInt32 = 0
    var peer: String { settings.peer }
    private let pacer = OutboundPacer()

    init(settings: HTTPCallSettings, isHTTP2: Bool, idleTimeout: Duration = .zero) {
        self.settings = settings
        self.isHTTP2 = isHTTP2
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if !isHTTP2 { armIdleTimer() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            idleTimer?.cancel()
            idleTimer = nil
            requests &+= 1
            begin(head)
        case .body(let bytes):
            if let exchange, !exchange.requestEnded { exchange.requestBody(bytes) }
        case .end:
            if discarding {
                discarding = false
                discardTimer?.cancel()
                discardTimer = nil
                if let deferred {
                    self.deferred = nil
                    respond(deferred.answer, close: !isHTTP2 && (!deferred.keepAlive || draining))
                }
            }
            if let exchange, !exchange.requestEnded { exchange.requestEnd() }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        discardTimer?.cancel()
        exchange?.cancel()
        pacer.closed()
        if !isHTTP2 { settings.budget.close() }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        pacer.writabilityChanged(context.channel)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request NIOHTTP1 could not parse has been answered 400 by its error handler.
        exchange?.cancel()
        context.close(promise: nil)
    }

    /// Resolves `finished` once the channel can take more.
    func whenWritable(_ finished: EventLoopPromise<Void>) {
        guard let context else { return finished.fail(CancellationError()) }
        pacer.whenWritable(context.channel, finished)
    }

    // MARK: Requests

    private func begin(_ head: HTTPRequestHead) {
        let request = HTTPCallRequest(head: head, settings: settings)
        let keepAlive = head.isKeepAlive && !draining
        let route = request.route()
        if case .answer(let answer) = route, !answer.readsBody {
            // Not worth reading (a body over the message limit): answered at once, then closed.
            discarding = !isHTTP2
            return respond(answer, close: !isHTTP2)
        }
        if !isHTTP2, head.version == .http1_1, let context,
            head.headers.first(name: "expect")?.lowercased() == "100-continue"
        {
            // The client waits for this before it sends the body (curl does for bodies over 1 MiB).
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))),
                promise: nil
            )
        }
        switch route {
        case .preflight(let answer), .answer(let answer):
            answerRequest(answer, keepAlive: keepAlive, requestEnded: false)
        case .call(let kind, let path, let metadata, let getMessage):
            let exchange = HTTPExchange(
                kind: kind,
                handler: self,
                origin: request.allowedOrigin,
                streamID: streamID(),
                keepAlive: keepAlive
            )
            self.exchange = exchange
            exchange.start(path: path, metadata: metadata, getMessage: getMessage)
        }
    }

    private func streamID() -> UInt32 {
        guard isHTTP2, let context,
            let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        else { return requests }
        return UInt32(Int(id))
    }

    /// Answers a request without a call (a preflight, a refusal before the call began). On
    /// HTTP/1.1 the answer waits for the end of the request, whose body is dropped, so that the
    /// connection can carry the next request; a body that does not end within the request timeout
    /// closes the connection after the answer.
    private func answerRequest(_ answer: HTTPAnswer, keepAlive: Bool, requestEnded: Bool) {
        if isHTTP2 || requestEnded { return respond(answer, close: !isHTTP2 && !keepAlive) }
        discarding = true
        deferred = (answer, keepAlive)
        guard let context else { return }
        discardTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(settings.requestTimeout)) {
            [self] in
            discardTimer = nil
            guard let deferred else { return }
            self.deferred = nil
            respond(deferred.answer, close: true)
        }
    }

    /// Refuses `exchange`'s call before it began, with `answer`.
    func refuse(_ exchange: HTTPExchange, answer: HTTPAnswer) {
        guard self.exchange === exchange else { return }
        self.exchange = nil
        answerRequest(answer, keepAlive: exchange.keepAlive, requestEnded: exchange.requestEnded)
    }

    private func respond(_ answer: HTTPAnswer, close: Bool) {
        guard let context else { return }
        var head = HTTPResponseHead(version: .http1_1, status: answer.status, headers: answer.headers)
        head.headers.replaceOrAdd(name: "content-length", value: String(answer.body.readableBytes))
        if close { head.headers.replaceOrAdd(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if answer.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        let ended = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: ended)
        if close {
            ended.futureResult.whenComplete { _ in context.close(promise: nil) }
        } else if !isHTTP2, exchange == nil, !discarding {
            armIdleTimer()
        }
    }

    // MARK: From the exchange

    /// Writes a part of `exchange`'s response, if it is still the one being answered: its end at
    /// once, the rest flushed once per event-loop tick.
    func write(_ part: HTTPServerResponsePart, for exchange: HTTPExchange, promise: EventLoopPromise<Void>?) {
        guard let context, self.exchange === exchange else {
            promise?.fail(CancellationError())
            return
        }
        if case .end = part {
            context.writeAndFlush(wrapOutboundOut(part), promise: promise)
        } else {
            context.write(wrapOutboundOut(part), promise: promise)
            scheduleFlush()
        }
    }

    /// Whether the channel can take more now.
    var isWritable: Bool { context?.channel.isWritable ?? false }

    private func scheduleFlush() {
        guard let context else { return }
        pacer.scheduleFlush(on: context.eventLoop) { [self] in self.context?.flush() }
    }

    /// Whether the connection closes after `exchange`'s response (HTTP/1.1: the client asked, the
    /// server drains, or the request's body has not all arrived).
    func closesAfter(_ exchange: HTTPExchange) -> Bool {
        !isHTTP2 && (!exchange.keepAlive || draining || !exchange.requestEnded)
    }

    /// `exchange`'s response has been written in full.
    func responseEnded(_ exchange: HTTPExchange, written: EventLoopFuture<Void>) {
        guard self.exchange === exchange else { return }
        self.exchange = nil
        guard !isHTTP2, let context else { return }
        if closesAfter(exchange) {
            written.whenComplete { _ in context.close(promise: nil) }
        } else {
            armIdleTimer()
        }
    }

    // MARK: HTTP/1.1 connection

    /// Whether the connection is draining (its end comes from NIOHTTP1's pipeline handler, which
    /// closes it once the response in flight has been written; see ``HTTP1Drain``).
    private var draining: Bool { settings.drain.isDraining }

    private func armIdleTimer() {
        guard let context, !draining else { return }
        idleTimer?.cancel()
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(idleTimeout)) { [self] in
            idleTimer = nil
            guard exchange == nil else { return }
            self.context?.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension HTTPCallHandler: Sendable {}
