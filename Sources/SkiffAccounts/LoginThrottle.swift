public import Foundation
import SkiffCore
import SkiffDomain
import Synchronization

/// Exponential back-off after failed password checks, as OWASP recommends instead of lockouts.
///
/// A key (an account, a network address) may fail ``freeFailures`` times; from then on each further
/// attempt is *evaluated* only once ``delay(afterFailures:)`` has passed since the last failure, and the
/// delay doubles with every failure, from ``initialDelay`` up to ``maximumDelay``. A success forgets the
/// failures; so does a quiet period of ``memory``.
///
/// With the defaults (5 free failures, 1 s doubling to 15 minutes) a key can be guessed at most 17 times
/// in its first hour under attack and 4 times an hour after that (``guesses(within:)``), while its owner
/// waits at most 15 minutes after the latest failure — never a fixed lockout of correct credentials.
public struct BackoffPolicy: Hashable, Sendable {
    /// Failures allowed before the first delay.
    public var freeFailures: Int
    /// The delay after the first failure past ``freeFailures``.
    public var initialDelay: Duration
    /// The longest delay.
    public var maximumDelay: Duration
    /// How long after the last failure the failures are forgotten.
    public var memory: Duration

    /// Creates a policy.
    public init(
        freeFailures: Int,
        initialDelay: Duration = .seconds(1),
        maximumDelay: Duration = .seconds(15 * 60),
        memory: Duration = .seconds(24 * 3600)
    ) {
        self.freeFailures = max(0, freeFailures)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.memory = memory
    }

    /// How long to wait, after the last of `failures` failures, before the next attempt is evaluated;
    /// `nil` while failures are still free.
    public func delay(afterFailures failures: Int) -> TimeInterval? {
        guard failures >= freeFailures else { return nil }
        let doublings = min(failures - freeFailures, 62)
        let delay = initialDelay.timeInterval * pow(2, Double(doublings))
        return min(delay, maximumDelay.timeInterval)
    }

    /// The most attempts an attacker who fails every time can have evaluated within `interval` from the
    /// first one (the bound documented for each policy).
    public func guesses(within interval: Duration) -> Int {
        var failures = 0
        var time: TimeInterval = 0
        while true {
            let next = time + (delay(afterFailures: failures) ?? 0)
            guard next < interval.timeInterval else { return failures }
            time = next
            failures += 1
        }
    }

    /// Whether an attempt on a key with `failures` failures (the last at `lastFailure`) and `inFlight`
    /// attempts being evaluated may be evaluated at `now`; if not, the seconds to wait.
    ///
    /// Attempts in flight count as failures until they settle, so concurrent attempts cannot all slip
    /// through: once failures plus attempts in flight reach ``freeFailures``, one attempt at a time is
    /// evaluated, and only after its delay.
    public func wait(failures: Int, inFlight: Int, lastFailure: Date?, now: Date) -> TimeInterval? {
        let pending = failures + inFlight
        guard pending >= freeFailures else { return nil }
        if inFlight > 0 {
            return delay(afterFailures: pending) ?? initialDelay.timeInterval
        }
        guard let delay = delay(afterFailures: failures), let lastFailure else { return nil }
        let readyAt = lastFailure.addingTimeInterval(delay)
        return now < readyAt ? readyAt.timeIntervalSince(now) : nil
    }
}

/// The state behind log-in and password-change back-off: failures and attempts in flight per key, and
/// the (network address, account) pairs that logged in successfully.
///
/// An attempt is **reserved** before the password is hashed and **settled** with its verdict afterwards
/// (``reserve(_:now:)``, ``settle(_:_:now:)``), so the limits hold under any concurrency. Attempts refused
/// get RESOURCE_EXHAUSTED with `retry-after` (whole seconds) in the trailing metadata and are not counted.
/// Keys whose failures were forgotten are swept out as the table grows.
public final class LoginThrottle: Sendable {
    /// One key to reserve an attempt on, with its policy and what to call it in an error message.
    public struct Key: Hashable, Sendable {
        /// The key (e.g. `account:<e-mail>`).
        public var name: String
        /// Its back-off.
        public var policy: BackoffPolicy
        /// What is throttled, in the plural, e.g. "failed log-ins for this account".
        public var what: String
        /// Whether a success forgets the key's failures: yes for an account (its owner got in), no for a
        /// network address (one correct password, e.g. for an attacker's own account, must not wipe the
        /// failures of a password-spraying run).
        public var forgetsOnSuccess: Bool

        /// Creates a key.
        public init(_ name: String, policy: BackoffPolicy, what: String, forgetsOnSuccess: Bool = true) {
            self.name = name
            self.policy = policy
            self.what = what
            self.forgetsOnSuccess = forgetsOnSuccess
        }
    }

    /// The attempts reserved by one call, to settle exactly once.
    public struct Reservation: Sendable {
        let keys: [Key]
    }

    /// What an attempt turned out to be.
    public enum Outcome: Sendable {
        /// The password was wrong: counts as a failure on every key.
        case failed
        /// The password was right: forgets the failures of the keys that ``Key/forgetsOnSuccess``.
        case succeeded
        /// The password was not checked (the server was busy, the call was cancelled): counts nothing.
        case notEvaluated
    }

    private struct Entry {
        var failures = 0
        var inFlight = 0
        var lastFailure: Date?
        var memory: TimeInterval = 0
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var trusted: [String: Date] = [:]
        var sweepAt = 1024
        var trustedSweepAt = 1024
    }

    private let state = Mutex(State())

    /// Creates an empty throttle.
    public init() {}

    /// Reserves one attempt on every key, or throws RESOURCE_EXHAUSTED (reserving nothing) when any key
    /// is in back-off; the error's `retry-after` is the longest wait.
    public func reserve(_ keys: [Key], now: Date) throws -> Reservation {
        let refusal: (what: String, wait: TimeInterval)? = state.withLock { state in
            var longest: (what: String, wait: TimeInterval)?
            for key in keys {
                var entry = state.entries[key.name] ?? Entry()
                if let last = entry.lastFailure, entry.inFlight == 0,
                    now.timeIntervalSince(last) >= key.policy.memory.timeInterval
                {
                    entry = Entry()
                }
                state.entries[key.name] = entry
                if let wait = key.policy.wait(
                    failures: entry.failures,
                    inFlight: entry.inFlight,
                    lastFailure: entry.lastFailure,
                    now: now
                ), wait > (longest?.wait ?? 0) {
                    longest = (key.what, wait)
                }
            }
            if let longest { return longest }
            for key in keys {
                state.entries[key.name]!.inFlight += 1
                state.entries[key.name]!.memory = key.policy.memory.timeInterval
            }
            return nil
        }
        if let refusal { throw Self.exhausted(refusal.what, retryAfter: refusal.wait) }
        return Reservation(keys: keys)
    }

    /// Settles a reservation with the attempt's outcome.
    public func settle(_ reservation: Reservation, _ outcome: Outcome, now: Date) {
        state.withLock { state in
            for key in reservation.keys {
                guard var entry = state.entries[key.name] else { continue }
                entry.inFlight = max(0, entry.inFlight - 1)
                switch outcome {
                case .failed:
                    entry.failures += 1
                    entry.lastFailure = max(entry.lastFailure ?? now, now)
                case .succeeded where key.forgetsOnSuccess:
                    entry.failures = 0
                    entry.lastFailure = nil
                case .succeeded:
                    break
                case .notEvaluated:
                    break
                }
                state.entries[key.name] = entry.failures == 0 && entry.inFlight == 0 ? nil : entry
            }
            guard state.entries.count >= state.sweepAt else { return }
            state.entries = state.entries.filter { _, entry in
                entry.inFlight > 0
                    || entry.lastFailure.map { now.timeIntervalSince($0) < entry.memory } ?? false
            }
            state.sweepAt = max(1024, state.entries.count * 2)
        }
    }

    /// Remembers that `pair` (a network address and an account) logged in successfully at `now`.
    public func trust(_ pair: String, now: Date, for lifetime: Duration) {
        state.withLock { state in
            state.trusted[pair] = now.addingTimeInterval(lifetime.timeInterval)
            guard state.trusted.count >= state.trustedSweepAt else { return }
            state.trusted = state.trusted.filter { $0.value > now }
            state.trustedSweepAt = max(1024, state.trusted.count * 2)
        }
    }

    /// Whether `pair` logged in successfully within its trust lifetime.
    public func isTrusted(_ pair: String, now: Date) -> Bool {
        state.withLock { $0.trusted[pair].map { $0 > now } ?? false }
    }

    /// The failures recorded for a key (for tests).
    public func failures(of key: String) -> Int {
        state.withLock { $0.entries[key]?.failures ?? 0 }
    }

    static func exhausted(_ what: String, retryAfter: TimeInterval) -> RPCError {
        let seconds = max(1, Int(retryAfter.rounded(.up)))
        return RPCError(
            code: .resourceExhausted,
            message: "Too many \(what); try again in \(seconds) s.",
            metadata: ["retry-after": .string("\(seconds)")]
        )
    }
}
