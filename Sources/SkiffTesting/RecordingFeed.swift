import SkiffCore
public import SkiffFeed
import Synchronization

/// A ``SkiffFeed/FeedPublisher`` for tests: records what services publish, once per (user,
/// idempotency key) as Chat does, and fails while ``failing`` is set.
public final class RecordingFeed: FeedPublisher {
    private struct State {
        var failing = false
        var calls = 0
        var keys: Set<String> = []
        var notifications: [FeedNotification] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// While set, `publish` throws UNAVAILABLE and records nothing.
    public var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    /// What was recorded, once per (user, key), in the order published.
    public var notifications: [FeedNotification] { state.withLock { $0.notifications } }

    /// How many times `publish` was called, failed calls included.
    public var calls: Int { state.withLock { $0.calls } }

    /// The bid notifications recorded for `userID`, in order.
    public func bids(of userID: String) -> [FeedNotification.Bid] {
        notifications.compactMap { notification in
            guard notification.userID == userID, case .bid(let bid) = notification.kind else { return nil }
            return bid
        }
    }

    public func publish(_ notifications: [FeedNotification]) async throws {
        try state.withLock { state in
            state.calls += 1
            guard !state.failing else { throw RPCError(code: .unavailable, message: "The feed is down.") }
            for notification in notifications
            where state.keys.insert("\(notification.userID) \(notification.idempotencyKey)").inserted {
                state.notifications.append(notification)
            }
        }
    }
}
