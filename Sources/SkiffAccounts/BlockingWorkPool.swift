import DequeModule
import Dispatch
public import Foundation
import Synchronization

/// Runs CPU-heavy or blocking work (password hashing) on dedicated threads, a bounded number at a time.
///
/// Work never runs on the caller's executor: not on Swift's cooperative pool (whose few threads serve every
/// task), not on an event loop, and not on libdispatch's shared worker threads either (on Linux those are
/// also about one per CPU, and GRDB's queues run on them). The pool owns at most ``maximumConcurrency``
/// threads, started on demand; each runs one job at a time. Jobs beyond that wait in FIFO order, at most
/// ``maximumQueueLength`` of them: past that a job is refused at once with ``QueueFullError`` (so a flood
/// cannot make everyone else wait without bound). A caller cancelled while its job waits gets
/// `CancellationError` and the job never runs; a job that has started runs to completion. The threads end
/// when the pool is released.
public final class BlockingWorkPool: Sendable {
    /// The most jobs that run at the same time (and the most threads the pool starts).
    public let maximumConcurrency: Int
    /// The most jobs that wait for a thread; `nil` for no limit.
    public let maximumQueueLength: Int?
    private let workers: Workers

    /// A job was refused because ``maximumQueueLength`` jobs were waiting already.
    public struct QueueFullError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The queue length that was reached.
        public var maximumQueueLength: Int

        public var description: String { "The work queue is full (\(maximumQueueLength) jobs waiting)." }
    }

    /// Creates a pool. No thread starts until the first job.
    ///
    /// - Parameters:
    ///   - label: The name given to the pool's threads (best effort), shown in debuggers.
    ///   - maximumConcurrency: The most jobs running at once; by default the number of active processors.
    ///   - maximumQueueLength: The most jobs waiting for a thread (0 or more); `nil`, the default, for no limit.
    public init(
        label: String,
        maximumConcurrency: Int = ProcessInfo.processInfo.activeProcessorCount,
        maximumQueueLength: Int? = nil
    ) {
        precondition(maximumConcurrency >= 1, "A BlockingWorkPool needs at least one thread")
        precondition((maximumQueueLength ?? 0) >= 0, "A BlockingWorkPool's queue length cannot be negative")
        self.maximumConcurrency = maximumConcurrency
        self.maximumQueueLength = maximumQueueLength
        self.workers = Workers(label: label, maximumThreads: maximumConcurrency, maximumQueueLength: maximumQueueLength)
    }

    deinit {
        workers.shutDown()
    }

    /// Runs `work` on one of the pool's threads once one is free, and returns its result.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before the job starts, ``QueueFullError`` if
    ///   ``maximumQueueLength`` jobs are waiting already, or what `work` throws.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let id = workers.reserveID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                workers.enqueue(
                    Workers.Job(
                        id: id,
                        run: { continuation.resume(with: Result { try work() }) },
                        fail: { continuation.resume(throwing: $0) }
                    )
                )
            }
        } onCancel: {
            workers.cancel(id)
        }
    }
}

/// The queue and threads behind a ``BlockingWorkPool``. Threads hold this, not the pool, so releasing the
/// pool can shut them down.
private final class Workers: Sendable {
    struct Job: Sendable {
        var id: UInt64
        /// Runs the work and resumes the caller.
        var run: @Sendable () -> Void
        /// Resumes the caller with an error instead (`CancellationError`, ``BlockingWorkPool/QueueFullError``).
        var fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var queue: Deque<Job> = []
        var threads = 0
        var idleThreads = 0
        var shuttingDown = false
        var nextID: UInt64 = 0
        /// Jobs between ``reserveID()`` and ``enqueue(_:)``.
        var reserved: Set<UInt64> = []
        /// Jobs cancelled before they were enqueued.
        var cancelledEarly: Set<UInt64> = []
    }

    private let label: String
    private let maximumThreads: Int
    private let maximumQueueLength: Int?
    private let state = Mutex(State())
    /// Counts queued jobs (and shutdown wake-ups); idle threads wait on it.
    private let available = DispatchSemaphore(value: 0)

    init(label: String, maximumThreads: Int, maximumQueueLength: Int?) {
        self.label = label
        self.maximumThreads = maximumThreads
        self.maximumQueueLength = maximumQueueLength
    }

    func reserveID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.reserved.insert(state.nextID)
            return state.nextID
        }
    }

    func enqueue(_ job: Job) {
        enum Action {
            case cancel
            case reject(Int)
            case queued(startThread: Bool)
        }
        let action: Action = state.withLock { state in
            state.reserved.remove(job.id)
            if state.cancelledEarly.remove(job.id) != nil { return .cancel }
            // Jobs that an idle thread, or a thread yet to start, is about to take do not wait.
            let waiting = state.queue.count - state.idleThreads - (maximumThreads - state.threads)
            if let maximumQueueLength, waiting >= maximumQueueLength {
                return .reject(maximumQueueLength)
            }
            state.queue.append(job)
            let startThread = state.queue.count > state.idleThreads && state.threads < maximumThreads
            if startThread { state.threads += 1 }
            return .queued(startThread: startThread)
        }
        switch action {
        case .cancel:
            job.fail(CancellationError())
        case .reject(let length):
            job.fail(BlockingWorkPool.QueueFullError(maximumQueueLength: length))
        case .queued(let startThread):
            available.signal()
            if startThread { startWorker() }
        }
    }

    func cancel(_ id: UInt64) {
        let job: Job? = state.withLock { state in
            if let index = state.queue.firstIndex(where: { $0.id == id }) {
                return state.queue.remove(at: index)
            }
            if state.reserved.contains(id) { state.cancelledEarly.insert(id) }
            return nil
        }
        job?.fail(CancellationError())
    }

    func shutDown() {
        let threads = state.withLock { state in
            state.shuttingDown = true
            return state.threads
        }
        for _ in 0..<threads { available.signal() }
    }

    private func startWorker() {
        let label = self.label
        let thread = Thread { [self] in
            Thread.current.name = label  // best effort, for debuggers; set from inside the thread
            workerLoop()
        }
        thread.start()
    }

    private func workerLoop() {
        while true {
            state.withLock { $0.idleThreads += 1 }
            available.wait()
            let next: Job?? = state.withLock { state in
                state.idleThreads -= 1
                if let job = state.queue.popFirst() { return .some(job) }
                if state.shuttingDown {
                    state.threads -= 1
                    return .none
                }
                return .some(nil)  // a job cancelled while queued; wait again
            }
            switch next {
            case .none: return
            case .some(.none): continue
            case .some(.some(let job)): job.run()
            }
        }
    }
}
