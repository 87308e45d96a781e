import Logging
import SkiffCore
import SkiffDomain

/// Where a server hears that feed events were committed by another server on the same database
/// (PostgreSQL's LISTEN/NOTIFY, say), so that its own live subscribers get them too.
public protocol FeedCommitSignals: Sendable {
    /// The signals, until the task reading them is cancelled. Each is only a hint: it may come late,
    /// twice, or not at all (say so with ``FeedCommitSignal/resynchronize``).
    func feedCommits() -> AsyncStream<FeedCommitSignal>
}

/// What a server hears of another's feed commits.
public enum FeedCommitSignal: Sendable, Hashable {
    /// The user's feed got the event with this sequence number.
    case committed(userID: String, sequence: Int64)
    /// Signals may have been lost (the listener reconnected, or fell behind): every live subscriber of
    /// this process looks at the store again.
    case resynchronize
}

extension ChatService {
    /// Hands this process's live subscribers the feed events that other processes commit, as `signals`
    /// tell of them, until the task is cancelled.
    ///
    /// The event is read from the store, never taken from the signal; followers skip what they already
    /// sent and fill any gap from the store (``FeedFollower``), so a late, repeated or lost signal costs
    /// latency, never an event or a duplicate. Only users someone here follows cost a read.
    public func followCommits(from signals: some FeedCommitSignals) async {
        for await signal in signals.feedCommits() {
            switch signal {
            case .committed(let userID, let sequence):
                guard hub.hasSubscribers(userID: userID), sequence > 0 else { continue }
                await deliverStored(userID: userID, sequence: sequence)
            case .resynchronize:
                for userID in hub.subscribedUserIDs {
                    do {
                        let last = try await store.lastFeedSequence(userID: userID)
                        if last > 0 { await deliverStored(userID: userID, sequence: last) }
                    } catch {
                        logger.warning(
                            "feed resynchronization failed",
                            metadata: ["error": "\(LogText.bounded(error))"]
                        )
                    }
                }
            }
        }
    }

    /// Publishes the user's stored event `sequence` to the hub (followers behind it catch up from the store).
    private func deliverStored(userID: String, sequence: Int64) async {
        do {
            deliver(try await store.feedEvents(userID: userID, after: sequence - 1, limit: 1))
        } catch {
            logger.warning(
                "feed event from another server not delivered",
                metadata: ["error": "\(LogText.bounded(error))"]
            )
        }
    }
}
