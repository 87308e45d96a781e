import NIOCore
import NIOHTTP2
import SkiffCore
import SkiffServer

/// The connection-level part of the gRPC protocol, after swift-nio-http2's handler: counts the open
/// streams, closes a connection that has had none for the idle timeout (GOAWAY first), and drains
/// on `ChannelShouldQuiesceEvent` (GOAWAY with the last stream it took, calls in flight finish
/// within the grace period, then close); a refused connection gets GOAWAY at once.
final class GRPCConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let gracePeriod: Duration
    private let idleTimeout: Duration
    private let refusal: String?
    private var idleTimer: Scheduled<Void>?
    private var openStreams = 0
    private var lastStreamID = HTTP2StreamID(0)
    private var draining = false
    private var graceTimer: Scheduled<Void>?

    private let budget: ResponseBudget?
    private let drainSignal: DrainSignal?

    init(gracePeriod: Duration, idleTimeout: Duration, budget: ResponseBudget, drainSignal: DrainSignal) {
        self.gracePeriod = gracePeriod
        self.idleTimeout = idleTimeout
        self.budget = budget
        self.drainSignal = drainSignal
        self.refusal = nil
    }

    init(refusing reason: String) {
        self.gracePeriod = .zero
        self.idleTimeout = .zero
        self.budget = nil
        self.drainSignal = nil
        self.refusal = reason
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let refusal else { return armIdleTimer(context) }
        var debug = context.channel.allocator.buffer(capacity: refusal.utf8.count)
        debug.writeString(String(refusal.prefix(200)))
        let goAway = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: .rootStream, errorCode: .refusedStream, opaqueData: debug)
        )
        context.writeAndFlush(wrapOutboundOut(goAway)).whenComplete { _ in context.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            openStreams += 1
            if created.streamID > lastStreamID { lastStreamID = created.streamID }
            idleTimer?.cancel()
            idleTimer = nil
        case is StreamClosedEvent:
            openStreams -= 1
            if draining, openStreams == 0 { close(context) }
            if openStreams == 0 { armIdleTimer(context) }
        case is ChannelShouldQuiesceEvent:
            drain(context)
            return
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// swift-nio-http2 has sent GOAWAY for a connection error (a bad frame, a bad HPACK block, a
    /// flood): the connection closes, costing only this client.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        graceTimer?.cancel()
        idleTimer?.cancel()
        budget?.close()  // handlers waiting for room give up
        context.fireChannelInactive()
    }

    private func drain(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        // Streams above `lastStreamID` are refused from now on; the ones below finish.
        let goAway = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil)
        )
        context.writeAndFlush(wrapOutboundOut(goAway), promise: nil)
        drainSignal?.fire()
        if openStreams == 0 { return close(context) }
        graceTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(gracePeriod)) {
            self.close(context)
        }
    }

    private func armIdleTimer(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        idleTimer?.cancel()
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(idleTimeout)) {
            self.idleTimer = nil
            guard self.openStreams == 0 else { return }
            self.drain(context)
        }
    }

    private func close(_ context: ChannelHandlerContext) {
        graceTimer?.cancel()
        graceTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        context.close(promise: nil)
    }
}
