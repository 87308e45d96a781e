import DequeModule
public import SkiffCore
import Synchronization

/// The bound on what one connection may hold of responses that its client has not read yet.
///
/// Every response message a handler writes is *reserved* here before it is handed to the
/// connection, and *released* once its bytes have gone to the socket (or been dropped). A writer
/// whose message would find the connection at or above its ``limit`` waits, in order of arrival,
/// until enough has been released; so the bytes queued in the connection never exceed
/// `limit + one message`. While the socket itself is not writable (the client stopped reading
/// and the kernel's and NIO's buffers are full) no new handler is admitted either, so a client
/// that stops reading stops the work done for it as well.
///
/// Thread-safe: handlers reserve from any thread, the connection releases on its event loop.
///
/// Every protocol keeps one per connection: ``SkiffCore/CallRunner`` (as its ``SkiffCore/CallGate``) admits handlers through it, and the
/// protocol's call objects reserve each response message before handing it to the connection.
public final class ResponseBudget: CallGate {
    private struct Waiter {
        var id: UInt64
        /// Bytes to reserve when woken; `nil` for an admission, which reserves nothing and checks
        /// again once it runs.
        var size: Int?
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var queued = 0
        var socketBlocked = false
        var closed = false
        var nextID: UInt64 = 0
        /// Writers, served in order of arrival.
        var writers = Deque<Waiter>()
        /// Handlers waiting to start, all woken together when there is room again.
        var admissions: [Waiter] = []

        func mayAdmit(limit: Int) -> Bool { writers.isEmpty && queued < limit && !socketBlocked }
    }

    /// Bytes at or above which writers wait.
    public let limit: Int
    private let state = Mutex(State())
    private let observer: ServerObserver?

    /// Creates a connection's budget of `limit` bytes (at least 1); `observer` counts what it holds
    /// in ``ServerObserver/bufferedResponseBytes``.
    public init(limit: Int, observer: ServerObserver? = nil) {
        self.limit = max(1, limit)
        self.observer = observer
    }

    /// Response bytes reserved and not yet released.
    public var queued: Int { state.withLock { $0.queued } }

    /// Writers waiting for room (for tests).
    var waitingWriters: Int { state.withLock { $0.writers.count } }

    /// Handlers waiting to start (for tests).
    var waitingAdmissions: Int { state.withLock { $0.admissions.count } }

    /// Reserves `size` bytes, waiting (in order of arrival) while the connection is at its limit.
    /// Returns `false`, reserving nothing, when the connection closed or the task was cancelled.
    public func reserve(_ size: Int) async -> Bool {
        if let fast = tryReserve(size) { return fast }
        return await wait(size: size)
    }

    /// Reserves `size` bytes if that needs no waiting; `nil` when the caller must wait.
    @inline(__always)
    public func tryReserve(_ size: Int) -> Bool? {
        state.withLock { state in
            if state.closed { return false }
            guard state.writers.isEmpty && state.queued < limit else { return nil }
            state.queued += size
            observer?.responseBytesQueued(size)
            return true
        }
    }

    /// Whether a new handler may start now without waiting; `nil` when it must wait.
    @inline(__always)
    public func tryAdmit() -> Bool? {
        state.withLock { state in
            if state.closed { return false }
            return state.mayAdmit(limit: limit) ? true : nil
        }
    }

    /// Waits until a new handler may start: the connection has room and its socket is writable.
    /// Returns `false` when the connection closed or the task was cancelled meanwhile.
    public func admit() async -> Bool {
        while true {
            if let fast = tryAdmit() { return fast }
            // Woken with room: check again, since the handlers woken before this one may have
            // used it up.
            guard await wait(size: nil) else { return false }
        }
    }

    private func wait(size: Int?) async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let failed: Bool = state.withLock { state in
                    if state.closed || Task.isCancelled { return true }
                    let waiter = Waiter(id: id, size: size, continuation: continuation)
                    if size == nil { state.admissions.append(waiter) } else { state.writers.append(waiter) }
                    return false
                }
                if failed {
                    continuation.resume(returning: false)
                } else {
                    wakeWaiters()  // the room may have come back meanwhile
                }
            }
        } onCancel: {
            let cancelled: Waiter? = state.withLock { state in
                if let index = state.writers.firstIndex(where: { $0.id == id }) {
                    return state.writers.remove(at: index)
                }
                if let index = state.admissions.firstIndex(where: { $0.id == id }) {
                    return state.admissions.remove(at: index)
                }
                return nil
            }
            cancelled?.continuation.resume(returning: false)
            wakeWaiters()
        }
    }

    /// Gives back `size` bytes (written to the socket or dropped) and wakes whoever fits now.
    public func release(_ size: Int) {
        guard size > 0 else { return }
        // After `close()` everything was given back at once.
        let someoneWaits = state.withLock { state in
            guard !state.closed else { return false }
            state.queued -= size
            observer?.responseBytesQueued(-size)
            return !state.writers.isEmpty || !state.admissions.isEmpty
        }
        if someoneWaits { wakeWaiters() }
    }

    /// Records whether the socket takes bytes; no handler starts while it does not.
    public func setSocketBlocked(_ blocked: Bool) {
        let wake = state.withLock { state in
            defer { state.socketBlocked = blocked }
            return state.socketBlocked != blocked && !blocked && !state.admissions.isEmpty
        }
        if wake { wakeWaiters() }
    }

    /// The connection is gone: every waiter and every later call gets `false`.
    public func close() {
        let waiters = state.withLock { state in
            state.closed = true
            observer?.responseBytesQueued(-state.queued)
            defer {
                state.writers.removeAll()
                state.admissions.removeAll()
                state.queued = 0
            }
            return Array(state.writers) + state.admissions
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }

    /// Resumes writers in order while there is room; then, if there still is and the socket is
    /// writable, every handler waiting to start.
    private func wakeWaiters() {
        var ready: [Waiter] = []
        state.withLock { state in
            while let first = state.writers.first, state.queued < limit {
                state.queued += first.size ?? 0
                observer?.responseBytesQueued(first.size ?? 0)
                ready.append(state.writers.removeFirst())
            }
            if !state.admissions.isEmpty && state.mayAdmit(limit: limit) {
                ready.append(contentsOf: state.admissions)
                state.admissions.removeAll()
            }
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }
}
