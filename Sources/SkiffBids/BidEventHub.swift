import Foundation
import Synchronization

/// In-process live delivery of ``BidEvent``s: the service publishes every event a store recorded, right
/// after the transaction commits, to the subscribers of its user.
///
/// Delivery is best effort (a subscriber that falls more than `bufferSize` events behind loses the
/// oldest); a feed without gaps subscribes first, then replays ``BidsStore/events(userID:afterSequence:limit:)``
/// from its last sequence number, then follows the stream, skipping sequence numbers it has seen.
///
/// ```swift
/// let live = hub.subscribe(userID: user)
/// for event in try await store.events(userID: user, afterSequence: last, limit: 100) { … }
/// for await event in live where event.sequence > last { … }
/// ```
public final class BidEventHub: Sendable {
    private struct Subscriber {
        var userID: String
        var continuation: AsyncStream<BidEvent>.Continuation
    }

    private let subscribers = Mutex<[UInt64: Subscriber]>([:])
    private let nextID = Atomic<UInt64>(0)
    /// The most undelivered events kept per subscriber.
    public let bufferSize: Int

    /// Creates a hub.
    public init(bufferSize: Int = 256) {
        self.bufferSize = bufferSize
    }

    /// The live events of one user, until the stream is dropped or cancelled.
    public func subscribe(userID: String) -> AsyncStream<BidEvent> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(
            of: BidEvent.self,
            bufferingPolicy: .bufferingNewest(bufferSize)
        )
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = Subscriber(userID: userID, continuation: continuation) }
        return stream
    }

    /// Delivers events to their users' subscribers.
    public func publish(_ events: [BidEvent]) {
        guard !events.isEmpty else { return }
        let targets = subscribers.withLock { Array($0.values) }
        for event in events {
            for subscriber in targets where subscriber.userID == event.userID {
                subscriber.continuation.yield(event)
            }
        }
    }

    /// The number of open subscriptions (for tests and metrics).
    public var subscriberCount: Int { subscribers.withLock { $0.count } }
}
