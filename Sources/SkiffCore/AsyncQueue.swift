package import DequeModule
package import Synchronization

/// A single-consumer queue that a producer pushes into without waiting; the consumer awaits.
///
/// The runtime's flow-control windows bound what it holds, so it needs no capacity of its own.
/// Finishing (normally or with an error) lets the consumer drain what is queued, then ends.
package final class AsyncQueue<Element: Sendable>: Sendable {
    @usableFromInline
    struct State {
        /// The first buffered element, kept inline: a queue that never holds more than one element
        /// at a time (a unary request, most streaming messages) allocates no `Deque` storage.
        /// When set, it comes before everything in `rest`.
        @usableFromInline var head: Element?
        @usableFromInline var rest: Deque<Element> = []
        @usableFromInline var waiter: CheckedContinuation<Element?, any Error>?
        @usableFromInline var finished: Result<Void, any Error>?

        @inlinable init() {}

        @inlinable @inline(__always) var isEmpty: Bool { head == nil && rest.isEmpty }

        @inlinable @inline(__always) mutating func append(_ element: Element) {
            if head == nil && rest.isEmpty {
                head = element
            } else {
                rest.append(element)
            }
        }

        @inlinable @inline(__always) mutating func popFirst() -> Element? {
            if let first = head {
                head = nil
                return first
            }
            return rest.popFirst()
        }

        @inlinable @inline(__always) mutating func removeAll() {
            head = nil
            rest.removeAll()
        }
    }

    @usableFromInline
    enum Outcome {
        case element(Element)
        case end(Result<Void, any Error>)
        case cancelled
        case wait
    }

    @usableFromInline let state = Mutex(State())

    package init() {}

    /// Appends an element; returns false if the queue has already finished.
    @discardableResult
    @inlinable @inline(__always)
    package func push(_ element: Element) -> Bool {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            guard state.finished == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.append(element)
            return nil
        }
        if let waiter {
            waiter.resume(returning: element)
            return true
        }
        return state.withLock { $0.finished == nil || !$0.isEmpty }
    }

    /// Ends the queue: the consumer gets what is buffered, then `nil` (or the error).
    @inlinable @inline(__always)
    package func finish(throwing error: (any Error)? = nil) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            guard state.finished == nil else { return nil }
            state.finished = error.map { .failure($0) } ?? .success(())
            defer { state.waiter = nil }
            return state.waiter
        }
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    /// Ends the queue at once, dropping what is buffered.
    @inlinable @inline(__always)
    package func fail(_ error: any Error) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            state.removeAll()
            if state.finished == nil { state.finished = .failure(error) }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: error)
    }

    /// The next element without waiting, if one is buffered.
    @inlinable @inline(__always)
    package func poll() -> Element? {
        state.withLock { $0.popFirst() }
    }

    /// The next element, waiting if none is buffered; `nil` at the end.
    package func next() async throws -> Element? {
        let immediate: Outcome? = state.withLock { state in
            if let element = state.popFirst() { return .element(element) }
            if let finished = state.finished { return .end(finished) }
            return nil
        }
        switch immediate {
        case .element(let element): return element
        case .end(let result):
            try result.get()
            return nil
        case .cancelled, .wait, nil: break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let outcome: Outcome = state.withLock { state in
                    if let element = state.popFirst() { return .element(element) }
                    if let finished = state.finished { return .end(finished) }
                    if Task.isCancelled { return .cancelled }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .element(let element): continuation.resume(returning: element)
                case .end(.success): continuation.resume(returning: nil)
                case .end(.failure(let error)): continuation.resume(throwing: error)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
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
