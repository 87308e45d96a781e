import DequeModule
import Foundation
import SkiffDomain
import Synchronization

/// Delivers listing changes to live watchers in this process (WatchSavedListings).
///
/// Publishing never waits: each watcher has its own bounded buffer, so a slow watcher cannot hold up the
/// publisher or other watchers. A watcher whose buffer overflows is cut off: its next read throws
/// ``ChangeWatcher/fellBehind``, and the client resumes from its last resume token (the store replays
/// what it missed).
public final class ChangeBroadcaster: Sendable {
    private let watchers = Mutex<[String: [ObjectIdentifier: ChangeWatcher]]>([:])
    /// The most undelivered changes one watcher may have.
    public let bufferSize: Int

    /// Creates a broadcaster with a per-watcher buffer of `bufferSize` changes.
    public init(bufferSize: Int = 256) {
        precondition(bufferSize > 0)
        self.bufferSize = bufferSize
    }

    /// Registers a watcher for a user's saved listings; pair it with ``unsubscribe(_:)``.
    public func subscribe(userID: String) -> ChangeWatcher {
        let watcher = ChangeWatcher(userID: userID, capacity: bufferSize)
        watchers.withLock { $0[userID, default: [:]][ObjectIdentifier(watcher)] = watcher }
        return watcher
    }

    /// Removes a watcher.
    public func unsubscribe(_ watcher: ChangeWatcher) {
        watchers.withLock { all in
            all[watcher.userID]?.removeValue(forKey: ObjectIdentifier(watcher))
            if all[watcher.userID]?.isEmpty == true { all.removeValue(forKey: watcher.userID) }
        }
    }

    /// Hands a change to the watchers of the given users. Never suspends.
    public func publish(_ event: ListingChangeEvent, to userIDs: [String]) {
        let targets = watchers.withLock { all in userIDs.flatMap { all[$0].map { Array($0.values) } ?? [] } }
        for watcher in targets { watcher.enqueue(event) }
    }

    /// The number of live watchers (for tests and metrics).
    public var watcherCount: Int { watchers.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

/// One watcher's bounded queue of changes.
public final class ChangeWatcher: Sendable {
    /// What a watcher that fell too far behind gets.
    public static let fellBehind = DomainError(
        .aborted,
        "This watch fell too far behind: watch again with the resume_token of the last change you received."
    )

    private struct State {
        var buffer = Deque<ListingChangeEvent>()
        var waiter: CheckedContinuation<ListingChangeEvent, any Error>?
        var overflowed = false
        var cancelled = false
    }

    /// The user whose saved listings are watched.
    public let userID: String
    private let capacity: Int
    private let state = Mutex(State())

    init(userID: String, capacity: Int) {
        self.userID = userID
        self.capacity = capacity
    }

    func enqueue(_ event: ListingChangeEvent) {
        let waiter: CheckedContinuation<ListingChangeEvent, any Error>? = state.withLock { state in
            guard !state.overflowed, !state.cancelled else { return nil }
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

    /// The next change, waiting for one if none is buffered.
    ///
    /// - Throws: ``fellBehind`` after an overflow; `CancellationError` when the task is cancelled.
    public func next() async throws -> ListingChangeEvent {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<ListingChangeEvent, any Error>) in
                let ready: Result<ListingChangeEvent, any Error>? = state.withLock { state in
                    if let event = state.buffer.popFirst() { return .success(event) }
                    if state.overflowed { return .failure(Self.fellBehind) }
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
