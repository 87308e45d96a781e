import DequeModule
import Synchronization

/// Delivers events to live subscribers in this process, by user: the in-process half of every
/// "watch" and "feed" call (the store holds the other half, the replay).
///
/// Publishing never waits: each subscription has its own bounded buffer, so a slow subscriber cannot
/// hold up the publisher or other subscribers. A subscription whose buffer overflows is cut off: its
/// next read throws the error it was created with, and the client resumes from the last event it
/// received (the store replays what it missed).
public final class LiveBroadcaster<Event: Sendable>: Sendable {
    private let subscriptions = Mutex<[String: [ObjectIdentifier: LiveSubscription<Event>]]>([:])
    /// The most undelivered events one subscription may hold.
    public let bufferSize: Int

    /// Creates a broadcaster with a per-subscription buffer of `bufferSize` events.
    public init(bufferSize: Int = 256) {
        precondition(bufferSize > 0)
        self.bufferSize = bufferSize
    }

    /// Registers a subscription for a user's events; pair it with ``unsubscribe(_:)``.
    ///
    /// - Parameter fellBehind: what the subscription's reader gets after its buffer overflowed.
    public func subscribe(userID: String, fellBehind: DomainError) -> LiveSubscription<Event> {
        let subscription = LiveSubscription<Event>(userID: userID, capacity: bufferSize, fellBehind: fellBehind)
        subscriptions.withLock { $0[userID, default: [:]][ObjectIdentifier(subscription)] = subscription }
        return subscription
    }

    /// Removes a subscription.
    public func unsubscribe(_ subscription: LiveSubscription<Event>) {
        subscriptions.withLock { all in
            all[subscription.userID]?.removeValue(forKey: ObjectIdentifier(subscription))
            if all[subscription.userID]?.isEmpty == true { all.removeValue(forKey: subscription.userID) }
        }
    }

    /// Hands an event to the subscriptions of the given users. Never suspends.
    public func publish(_ event: Event, to userIDs: some Sequence<String>) {
        let targets = subscriptions.withLock { all in userIDs.flatMap { all[$0].map { Array($0.values) } ?? [] } }
        for subscription in targets { subscription.enqueue(event) }
    }

    /// Whether anyone in this process follows the user's events.
    public func hasSubscribers(userID: String) -> Bool { subscriptions.withLock { $0[userID] != nil } }

    /// The users someone in this process follows.
    public var subscribedUserIDs: [String] { subscriptions.withLock { Array($0.keys) } }

    /// The number of live subscriptions (for tests and metrics).
    public var subscriberCount: Int { subscriptions.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// One subscriber's bounded queue of events.
public final class LiveSubscription<Event: Sendable>: Sendable {
    private struct State {
        var buffer = Deque<Event>()
        var waiter: CheckedContinuation<Event, any Error>?
        var overflowed = false
        var cancelled = false
        /// Set by ``finish(throwing:)``: thrown once the buffer is empty.
        var finished: (any Error)?
    }

    /// The user whose events these are.
    public let userID: String
    private let capacity: Int
    private let fellBehind: DomainError
    private let state = Mutex(State())

    init(userID: String, capacity: Int, fellBehind: DomainError) {
        self.userID = userID
        self.capacity = capacity
        self.fellBehind = fellBehind
    }

    /// Adds an event for this subscriber alone (for example the answer to a request it made on the
    /// same stream). Never suspends; an overflow cuts the subscriber off.
    public func enqueue(_ event: Event) {
        let waiter: CheckedContinuation<Event, any Error>? = state.withLock { state in
            guard !state.overflowed, !state.cancelled, state.finished == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.buffer.count >= capacity {
                state.overflowed = true
                state.buffer.removeAll()
            } else {
                state.buffer.append(event)
            }
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the subscription: ``next()`` returns what is buffered, then throws `error` (for example when the
    /// server drains: see `DrainSignal`). Events enqueued afterwards are dropped. Never suspends.
    public func finish(throwing error: any Error) {
        let waiter: CheckedContinuation<Event, any Error>? = state.withLock { state in
            guard state.finished == nil else { return nil }
            state.finished = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: error)
    }

    /// The next event, waiting for one if none is buffered.
    ///
    /// - Throws: the subscription's `fellBehind` error after an overflow; the error given to
    ///   ``finish(throwing:)`` once the buffer is empty; `CancellationError` when the task is cancelled.
    public func next() async throws -> Event {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Event, any Error>) in
                let ready: Result<Event, any Error>? = state.withLock { state in
                    if let event = state.buffer.popFirst() { return .success(event) }
                    if state.overflowed { return .failure(fellBehind) }
                    if let finished = state.finished { return .failure(finished) }
                    if state.cancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
