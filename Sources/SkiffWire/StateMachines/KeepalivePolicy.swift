public import NIOCore

/// The server's policing of client PINGs (contract §5.1), as a value with no I/O and no clock of
/// its own: the caller passes the time.
///
/// Every PING is answered. PINGs are policed only while the connection has no open stream: a
/// PING sooner than `minInterval` after the previous one is a strike and the second strike ends
/// the connection; more than `maxPerSecond` in one second end it too (a flood guard for
/// `minInterval` 0). Opening a stream clears the strikes.
public struct KeepalivePolicy: Hashable, Sendable {
    /// What to do with a PING.
    public enum Verdict: Hashable, Sendable {
        /// Answer it.
        case answer
        /// Answer it, then GOAWAY(RESOURCE_EXHAUSTED, `too_many_pings`) and close.
        case answerAndClose
    }

    public let minInterval: TimeAmount
    public let maxPerSecond: Int
    public private(set) var strikes = 0
    private var lastPing: NIODeadline?
    private var windowStart: NIODeadline?
    private var pingsInWindow = 0

    public init(minInterval: TimeAmount, maxPerSecond: Int) {
        self.minInterval = minInterval
        self.maxPerSecond = maxPerSecond
    }

    /// A PING (not an ACK) arrived at `now`.
    public mutating func pingReceived(at now: NIODeadline, streamsOpen: Bool) -> Verdict {
        defer { lastPing = now }
        guard !streamsOpen else { return .answer }
        if let lastPing, now - lastPing < minInterval {
            strikes += 1
            if strikes >= 2 { return .answerAndClose }
        }
        if let start = windowStart, now - start < .seconds(1) {
            pingsInWindow += 1
        } else {
            windowStart = now
            pingsInWindow = 1
        }
        return pingsInWindow > maxPerSecond ? .answerAndClose : .answer
    }

    /// A stream opened: the client is doing real work, its strikes are forgiven.
    public mutating func streamOpened() { strikes = 0 }
}
