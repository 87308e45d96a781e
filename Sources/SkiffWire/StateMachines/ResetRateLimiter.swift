public import NIOCore

/// The rapid-reset defence as a token bucket, with no clock of its own.
///
/// Each premature reset (one that ends a stream which had barely begun: the work a rapid reset
/// wastes) costs a token; tokens come back at `perSecond`, up to `burst`. A client cancelling
/// what it legitimately opened never runs out; one that opens and resets streams in a loop does.
public struct ResetRateLimiter: Hashable, Sendable {
    public let burst: Int
    public let perSecond: Int
    private var tokens: Double
    private var updated: NIODeadline

    /// A full bucket at `now`.
    public init(burst: Int, perSecond: Int, now: NIODeadline) {
        self.burst = burst
        self.perSecond = perSecond
        self.tokens = Double(burst)
        self.updated = now
    }

    /// A premature reset at `now`: `false` when the client has run out of tokens.
    public mutating func prematureReset(at now: NIODeadline) -> Bool {
        let elapsed = Double(max(0, (now - updated).nanoseconds)) / 1e9
        updated = max(updated, now)
        tokens = min(Double(burst), tokens + elapsed * Double(perSecond))
        tokens -= 1
        return tokens >= 0
    }
}
