import Foundation
import SkiffCore
import Synchronization

/// Counts failed (or rationed) attempts per key in a sliding window, e.g. failed log-ins per
/// account and per peer, or e-mails sent per address.
public final class AttemptLimiter: Sendable {
    /// How many attempts a key may make per window.
    public let limit: Int
    /// The window.
    public let window: TimeInterval
    private let attempts = Mutex<[String: [Date]]>([:])

    public init(limit: Int, window: Duration) {
        self.limit = limit
        let (seconds, attoseconds) = window.components
        self.window = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// Throws RESOURCE_EXHAUSTED, with a `retry-after` (seconds) in the trailing metadata, when
    /// any of the keys has used up its attempts.
    public func check(_ keys: [String], now: Date, what: String) throws {
        let retryAfter: TimeInterval? = attempts.withLock { attempts in
            var longest: TimeInterval?
            for key in keys {
                let recent = (attempts[key] ?? []).filter { now.timeIntervalSince($0) < window }
                attempts[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    let wait = window - now.timeIntervalSince(oldest)
                    longest = max(longest ?? 0, wait)
                }
            }
            return longest
        }
        if let retryAfter {
            let seconds = max(1, Int(retryAfter.rounded(.up)))
            throw RPCError(
                code: .resourceExhausted,
                message: "Too many \(what); try again in \(seconds) s.",
                metadata: ["retry-after": .string("\(seconds)")]
            )
        }
    }

    /// Records one attempt for each key.
    public func record(_ keys: [String], now: Date) {
        attempts.withLock { attempts in
            for key in keys { attempts[key, default: []].append(now) }
        }
    }

    /// Forgets a key's attempts (after a successful log-in).
    public func reset(_ key: String) {
        _ = attempts.withLock { $0.removeValue(forKey: key) }
    }
}
