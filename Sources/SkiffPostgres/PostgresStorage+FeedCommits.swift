import Logging
import PostgresNIO
public import SkiffChat
import Synchronization

extension PostgresStorage: FeedCommitSignals {
    /// The channel feed commits are announced on (`NOTIFY skiff_feed, '<sequence>:<user id>'`, sent by
    /// the Chat store in the transaction that appends the event, so it is heard only once committed).
    static let feedChannel = "skiff_feed"

    /// The most signals waiting to be handled; past it the oldest are dropped and a
    /// ``SkiffChat/FeedCommitSignal/resynchronize`` is queued instead.
    static let feedSignalBuffer = 4096

    /// The payload announcing `sequence` on `userID`'s feed.
    static func feedPayload(userID: String, sequence: Int64) -> String { "\(sequence):\(userID)" }

    /// Listens on a connection of its own (outside the pool) for feed commits of every server on the
    /// database; after the connection is lost it connects again (backing off up to 5 s) and signals
    /// ``SkiffChat/FeedCommitSignal/resynchronize``, since commits meanwhile went unheard.
    public func feedCommits() -> AsyncStream<FeedCommitSignal> {
        let (signals, continuation) = AsyncStream.makeStream(
            of: FeedCommitSignal.self,
            bufferingPolicy: .bufferingNewest(Self.feedSignalBuffer)
        )
        let current = Mutex<PostgresConnection?>(nil)
        let listening = Task { [self] in
            var pause = Duration.milliseconds(100)
            var connectedBefore = false
            while !Task.isCancelled {
                do {
                    let connection = try await Self.connect(location, timeout: .seconds(10), logger: logger)
                    current.withLock { $0 = connection }
                    defer { current.withLock { $0 = nil } }
                    do {
                        try await connection.listen(on: Self.feedChannel) { notifications in
                            if connectedBefore { continuation.yield(.resynchronize) }
                            connectedBefore = true
                            pause = .milliseconds(100)
                            for try await notification in notifications {
                                guard let signal = Self.signal(notification.payload) else { continue }
                                if case .dropped = continuation.yield(signal) { continuation.yield(.resynchronize) }
                            }
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning(
                        "listening for feed commits failed; trying again",
                        metadata: ["pause": "\(pause)", "error": "\(String(describing: error).prefix(300))"]
                    )
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            listening.cancel()
            // Ends a wait for the next notification, which cancellation alone may not.
            if let connection = current.withLock({ $0 }) { Task { try? await connection.close() } }
        }
        return signals
    }

    /// The signal a payload stands for, or `nil` for one that is not ours.
    static func signal(_ payload: String) -> FeedCommitSignal? {
        guard let colon = payload.firstIndex(of: ":"), let sequence = Int64(payload[..<colon]) else { return nil }
        let userID = String(payload[payload.index(after: colon)...])
        guard !userID.isEmpty, userID.utf8.count <= 200 else { return nil }
        return .committed(userID: userID, sequence: sequence)
    }
}
