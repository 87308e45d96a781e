import NIOCore

/// Turns the flushes of one event-loop tick into one: a connection whose streams finish in the
/// same tick (many calls in flight, each answered by its own task) writes them with one syscall
/// instead of one per stream. Between the socket and the HTTP/2 handler; what was written before a
/// flush leaves at the end of the tick, in order, or before a close (a GOAWAY written just before it
/// is not lost).
final class FlushCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var flushScheduled = false

    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            guard self.flushScheduled else { return }
            self.flushScheduled = false
            context.flush()
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if flushScheduled {
            flushScheduled = false
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }
}
