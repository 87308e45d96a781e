import NIOCore

/// How an HTTP call handler writes: what it writes in one event-loop tick leaves in one flush, and
/// writers wait for the channel to take more (its flow-control window, its socket). Used on the
/// handler's event loop only.
final class OutboundPacer {
    private var flushScheduled = false
    private var waiters: [EventLoopPromise<Void>] = []

    /// Runs `flush` at the end of this event-loop tick, once for every write of the tick.
    func scheduleFlush(on eventLoop: any EventLoop, _ flush: @escaping () -> Void) {
        guard !flushScheduled else { return }
        flushScheduled = true
        eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            flush()
        }
    }

    /// Succeeds `promise` now if `channel` can take more, else once it can.
    func whenWritable(_ channel: any Channel, _ promise: EventLoopPromise<Void>) {
        if channel.isWritable { promise.succeed() } else { waiters.append(promise) }
    }

    /// The channel's writability changed: waiters go on if it can take more.
    func writabilityChanged(_ channel: any Channel) {
        guard channel.isWritable else { return }
        let ready = waiters
        waiters.removeAll()
        for waiter in ready { waiter.succeed() }
    }

    /// The channel closed: waiters give up.
    func closed() {
        let gone = waiters
        waiters.removeAll()
        for waiter in gone { waiter.fail(CancellationError()) }
    }
}
