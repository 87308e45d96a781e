import NIOCore

/// Closes a connection whose socket stays full (above
/// ``SkiffServer/ServerConfiguration/socketWriteBufferHighWater``, not drained below half of it) for
/// ``SkiffServer/ServerConfiguration/sendStallTimeout`` (its client reads nothing, or too little),
/// freeing everything it holds, as skiff/1 does. First in an HTTP connection's pipeline: it sees
/// the socket's own writability.
final class SendStallGuard: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: Duration
    private var timer: Scheduled<Void>?

    init(timeout: Duration) { self.timeout = timeout }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            timer?.cancel()
            timer = nil
        } else if timer == nil {
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
