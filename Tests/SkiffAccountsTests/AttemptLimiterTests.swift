import Foundation
import SkiffCore
import Testing

@testable import SkiffDomain

/// The one limiter behind log-in throttling, e-mail rationing and the per-user write limits of
/// Listings and Bids, with explicit times.
@Suite("AttemptLimiter and UserRateLimiter")
struct AttemptLimiterTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("acquire admits `limit` per window, then RESOURCE_EXHAUSTED with retry-after; the window slides")
    func acquire() throws {
        let limiter = AttemptLimiter(limit: 3, window: .seconds(60))
        for second in [0.0, 10, 20] {
            try limiter.acquire(["usr_ann"], now: Self.t0.addingTimeInterval(second), what: "bids")
        }
        let error = #expect(throws: RPCError.self) {
            try limiter.acquire(["usr_ann"], now: Self.t0.addingTimeInterval(30), what: "bids")
        }
        #expect(error?.code == .resourceExhausted)
        #expect(error?.message == "Too many bids; try again in 30 s.")
        #expect(error?.metadata.first("retry-after") == "30")
        // A refused attempt is not counted: once the first attempt leaves the window, one more fits.
        try limiter.acquire(["usr_ann"], now: Self.t0.addingTimeInterval(60), what: "bids")
        #expect(throws: RPCError.self) {
            try limiter.acquire(["usr_ann"], now: Self.t0.addingTimeInterval(61), what: "bids")
        }
        // Other keys have their own budget.
        try limiter.acquire(["usr_bob"], now: Self.t0.addingTimeInterval(61), what: "bids")
    }

    @Test("retry-after is whole seconds, rounded up, at least 1")
    func retryAfterRounding() throws {
        let limiter = AttemptLimiter(limit: 1, window: .seconds(10))
        try limiter.acquire(["k"], now: Self.t0, what: "x")
        let error = #expect(throws: RPCError.self) {
            try limiter.acquire(["k"], now: Self.t0.addingTimeInterval(9.9995), what: "x")
        }
        #expect(error?.metadata.first("retry-after") == "1")
        let later = #expect(throws: RPCError.self) {
            try limiter.acquire(["k"], now: Self.t0.addingTimeInterval(2.5), what: "x")
        }
        #expect(later?.metadata.first("retry-after") == "8")
    }

    @Test("keys whose attempts all left the window are swept as the table grows")
    func sweep() throws {
        let limiter = AttemptLimiter(limit: 5, window: .seconds(60))
        for index in 0..<1_023 { limiter.record(["old-\(index)"], now: Self.t0) }
        #expect(limiter.trackedKeyCount == 1_023)
        limiter.record(["new"], now: Self.t0.addingTimeInterval(120))
        #expect(limiter.trackedKeyCount == 1)
    }

    @Test("UserRateLimiter names the limit in its message; nil and scale 0 mean no limit")
    func userRateLimiter() throws {
        let limiter = UserRateLimiter(RateLimit(2, per: .seconds(3600)), what: "listings posted")
        try limiter.acquire(userID: "usr_ann", now: Self.t0)
        try limiter.acquire(userID: "usr_ann", now: Self.t0)
        let error = #expect(throws: RPCError.self) {
            try limiter.acquire(userID: "usr_ann", now: Self.t0.addingTimeInterval(600))
        }
        #expect(error?.message == "Too many listings posted (at most 2 per hour); try again in 3000 s.")
        #expect(error?.metadata.first("retry-after") == "3000")

        let unlimited = UserRateLimiter(nil, what: "bids placed")
        for _ in 0..<1_000 { try unlimited.acquire(userID: "usr_ann", now: Self.t0) }

        #expect(RateLimit(60, per: .seconds(600)).scaled(by: 0) == nil)
        #expect(RateLimit(60, per: .seconds(600)).scaled(by: 0.5) == RateLimit(30, per: .seconds(600)))
        #expect(RateLimit(60, per: .seconds(600)).scaled(by: 0.001) == RateLimit(1, per: .seconds(600)))
        #expect(UserRateLimiter.phrase(.seconds(600)) == "10 minutes")
        #expect(UserRateLimiter.phrase(.seconds(7_200)) == "2 hours")
        #expect(UserRateLimiter.phrase(.seconds(45)) == "45 seconds")
    }
}
