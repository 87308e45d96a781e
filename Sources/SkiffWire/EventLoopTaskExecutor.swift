package import NIOCore

/// Runs Swift tasks on one NIO event loop: a server handler started from the loop writes its
/// response, and a client task that prefers it makes its call, without a thread hop.
package final class EventLoopTaskExecutor: TaskExecutor {
    package let eventLoop: any EventLoop

    package init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
