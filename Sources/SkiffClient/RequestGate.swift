import Synchronization

/// Bounds how many request bytes a streaming call may have queued on the event loop.
///
/// The request writer reserves the size of each message before handing it to the loop and then
/// waits while more than ``limit`` bytes are queued; the loop releases bytes as it writes them to
/// the connection. Closing the gate (the call ended) wakes the writer and turns further writes
/// into no-ops.
final class RequestGate: Sendable {
    private struct State {
        var queued = 0
        var closed = false
        var waiter: UnsafeContinuation<Void, any Error>?
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Counts a message about to be queued; `false` when the call has ended (drop the message).
    func reserve(_ size: Int) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.queued += size
            return true
        }
    }

    /// Bytes left the queue (written to the connection, or dropped).
    func release(_ size: Int) {
        let waiter: UnsafeContinuation<Void, any Error>? = state.withLock { state in
            state.queued -= size
            guard state.queued <= limit, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The call ended: wakes the writer; later writes are dropped.
    func close() {
        let waiter: UnsafeContinuation<Void, any Error>? = state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits while more than ``limit`` bytes are queued.
    func waitUntilBelowLimit() async throws {
        guard state.withLock({ $0.queued > limit && !$0.closed }) else { return }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                enum Outcome { case wait, proceed, cancelled }
                let outcome: Outcome = state.withLock { state in
                    if state.queued <= limit || state.closed { return .proceed }
                    if Task.isCancelled { return .cancelled }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .proceed: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
