import NIOCore
import SkiffCore
import SkiffWire

/// Answers a connection the server cannot take (connection limit, shutting down) the way the
/// protocol says a server reports a connection error: its preface and SETTINGS, then
/// GOAWAY(UNAVAILABLE) with the reason, then close: the output is shut first and what the client
/// sends meanwhile is read and dropped for up to a second, so that its kernel gets the GOAWAY
/// rather than a reset for unread bytes. Closes after the preface timeout at the latest, even when
/// the client never reads or never finishes a TLS handshake.
final class ConnectionRefuser: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let settings: ConnectionSettings
    let reason: String
    let timeout: Duration
    private var sent = false
    private var timer: Scheduled<Void>?

    init(settings: ConnectionSettings, reason: String, timeout: Duration) {
        self.settings = settings
        self.reason = reason
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            channel.close(promise: nil)
        }
        if context.channel.isActive { refuse(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // what the client sends is dropped

    private func refuse(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        var buffer = context.channel.allocator.buffer(capacity: 64 + reason.utf8.count)
        buffer.writePreface()
        buffer.writeSettings(settings.encodedPairs)
        buffer.writeGoAway(lastStreamID: 0, status: .unavailable, debug: reason)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { [self] result in
            guard case .success = result else { return channel.close(promise: nil) }
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            timer?.cancel()
            timer = channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }
}

@available(*, unavailable)
extension ConnectionRefuser: Sendable {}
