public import Foundation
import SkiffCore
import Synchronization

/// A limit on how often something may happen per key: at most ``limit`` times within ``window``.
public struct RateLimit: Hashable, Sendable, CustomStringConvertible {
    /// How many times per window.
    public var limit: Int
    /// The sliding window.
    public var window: Duration

    /// Creates a limit of `limit` times per `window`.
    public init(_ limit: Int, per window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// This limit with `limit` multiplied by `factor` (at least 1), or `nil` when `factor` is 0 or less
    /// (no limit), e.g. for load testing.
    public func scaled(by factor: Double) -> RateLimit? {
        guard factor > 0 else { return nil }
        return RateLimit(max(1, Int((Double(limit) * factor).rounded())), per: window)
    }

    public var description: String { "\(limit) per \(window)" }
}

/// Counts attempts per key in a sliding window: failed log-ins per account and per peer, e-mails sent
/// per address, and the writes of each user that Listings and Bids rate-limit.
///
/// Answers RESOURCE_EXHAUSTED with a `retry-after` entry (whole seconds, at least 1) in the trailing
/// metadata, the convention of every Skiff service. Keys whose attempts have all left the window are
/// swept out as the table grows, so memory follows the number of recently active keys.
public final class AttemptLimiter: Sendable {
    /// How many attempts a key may make per window.
    public let limit: Int
    /// The window.
    public let window: TimeInterval

    private struct State {
        var attempts: [String: [Date]] = [:]
        /// The table size at which stale keys are swept next.
        var sweepAt = 1024
    }

    private let state = Mutex(State())

    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window.timeInterval
    }

    /// Creates a limiter for a ``RateLimit``.
    public convenience init(_ rateLimit: RateLimit) {
        self.init(limit: rateLimit.limit, window: rateLimit.window)
    }

    /// Throws RESOURCE_EXHAUSTED, with a `retry-after` (seconds) in the trailing metadata, when
    /// any of the keys has used up its attempts.
    public func check(_ keys: [String], now: Date, what: String) throws {
        let retryAfter = state.withLock { state in longestWait(keys, now: now, state: &state) }
        if let retryAfter { throw Self.exhausted(what, retryAfter: retryAfter) }
    }

    /// Records one attempt for each key.
    public func record(_ keys: [String], now: Date) {
        state.withLock { state in Self.record(keys, now: now, window: window, state: &state) }
    }

    /// Checks and records in one step, so concurrent calls cannot all slip under the limit: throws
    /// as ``check(_:now:what:)`` does (recording nothing), else records one attempt for each key.
    public func acquire(_ keys: [String], now: Date, what: String) throws {
        let retryAfter = state.withLock { state -> TimeInterval? in
            if let wait = longestWait(keys, now: now, state: &state) { return wait }
            Self.record(keys, now: now, window: window, state: &state)
            return nil
        }
        if let retryAfter { throw Self.exhausted(what, retryAfter: retryAfter) }
    }

    /// Forgets a key's attempts (after a successful log-in).
    public func reset(_ key: String) {
        _ = state.withLock { $0.attempts.removeValue(forKey: key) }
    }

    /// The number of keys with attempts still in the table (for tests).
    public var trackedKeyCount: Int { state.withLock { $0.attempts.count } }

    private func longestWait(_ keys: [String], now: Date, state: inout State) -> TimeInterval? {
        var longest: TimeInterval?
        for key in keys {
            let recent = (state.attempts[key] ?? []).filter { now.timeIntervalSince($0) < window }
            state.attempts[key] = recent.isEmpty ? nil : recent
            if recent.count >= limit, let oldest = recent.first {
                let wait = window - now.timeIntervalSince(oldest)
                longest = max(longest ?? 0, wait)
            }
        }
        return longest
    }

    private static func record(_ keys: [String], now: Date, window: TimeInterval, state: inout State) {
        for key in keys { state.attempts[key, default: []].append(now) }
        guard state.attempts.count >= state.sweepAt else { return }
        state.attempts = state.attempts.filter { _, dates in
            dates.contains { now.timeIntervalSince($0) < window }
        }
        state.sweepAt = max(1024, state.attempts.count * 2)
    }

    private static func exhausted(_ what: String, retryAfter: TimeInterval) -> RPCError {
        let seconds = max(1, Int(retryAfter.rounded(.up)))
        return RPCError(
            code: .resourceExhausted,
            message: "Too many \(what); try again in \(seconds) s.",
            metadata: ["retry-after": .string("\(seconds)")]
        )
    }
}

/// A per-user limit on one kind of write (posting listings, placing bids, …) over an
/// ``AttemptLimiter``; no limit when its ``RateLimit`` is `nil`.
public struct UserRateLimiter: Sendable {
    /// The limit, or `nil` for none.
    public let rateLimit: RateLimit?
    let limiter: AttemptLimiter?
    let what: String

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - rateLimit: The limit per user, or `nil` for none.
    ///   - what: What is limited, in the plural, for the error message (e.g. "listings posted").
    public init(_ rateLimit: RateLimit?, what: String) {
        self.rateLimit = rateLimit
        self.limiter = rateLimit.map(AttemptLimiter.init)
        self.what = rateLimit.map { "\(what) (at most \($0.limit) per \(Self.phrase($0.window)))" } ?? what
    }

    /// Counts one write by the user.
    ///
    /// - Throws: RESOURCE_EXHAUSTED with `retry-after` (seconds) in the trailing metadata when the user
    ///   has used up the limit; nothing is counted then.
    public func acquire(userID: String, now: Date) throws {
        try limiter?.acquire([userID], now: now, what: what)
    }

    /// "hour", "10 minutes", "30 seconds".
    static func phrase(_ window: Duration) -> String {
        let seconds = window.components.seconds
        func unit(_ count: Int64, _ name: String) -> String { count == 1 ? name : "\(count) \(name)s" }
        if seconds > 0, seconds % 3600 == 0 { return unit(seconds / 3600, "hour") }
        if seconds > 0, seconds % 60 == 0 { return unit(seconds / 60, "minute") }
        return unit(seconds, "second")
    }
}
