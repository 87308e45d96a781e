import Foundation
import SkiffCore
import SkiffDomain
import Testing

@testable import SkiffAccounts

/// The pure logic of log-in back-off, with explicit times.
@Suite("Login back-off")
struct LoginThrottleTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let policy = BackoffPolicy(freeFailures: 5, initialDelay: .seconds(1), maximumDelay: .seconds(900))

    @Test("Delays: none for the free failures, then 1 s doubling to the cap")
    func delays() {
        #expect((0..<5).map { Self.policy.delay(afterFailures: $0) } == [nil, nil, nil, nil, nil])
        #expect((5..<16).map { Self.policy.delay(afterFailures: $0) } == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900])
        #expect(Self.policy.delay(afterFailures: 10_000) == 900)
    }

    @Test("The documented bound: 17 guesses per account in the first hour, 4 an hour after")
    func guessesPerHour() {
        #expect(Self.policy.guesses(within: .seconds(3600)) == 17)
        #expect(Self.policy.guesses(within: .seconds(7200)) == 21)
        #expect(AccountsConfiguration().accountBackoff.guesses(within: .seconds(3600)) == 17)
    }

    @Test("Attempts in flight count: once failures plus attempts in flight reach the free ones, the next waits")
    func inFlight() {
        #expect(Self.policy.wait(failures: 0, inFlight: 4, lastFailure: nil, now: Self.t0) == nil)
        #expect(Self.policy.wait(failures: 0, inFlight: 5, lastFailure: nil, now: Self.t0) == 1)
        #expect(Self.policy.wait(failures: 4, inFlight: 2, lastFailure: Self.t0, now: Self.t0) == 2)
        #expect(
            Self.policy.wait(failures: 6, inFlight: 0, lastFailure: Self.t0, now: Self.t0.addingTimeInterval(1)) == 1
        )
        #expect(
            Self.policy.wait(failures: 6, inFlight: 0, lastFailure: Self.t0, now: Self.t0.addingTimeInterval(2)) == nil
        )
    }

    @Test("reserve/settle: concurrent reservations cannot exceed the free failures; success forgets; memory expires")
    func reserveAndSettle() throws {
        let throttle = LoginThrottle()
        let key = LoginThrottle.Key("account:a", policy: Self.policy, what: "failed log-ins")
        var reservations: [LoginThrottle.Reservation] = []
        for _ in 0..<5 { reservations.append(try throttle.reserve([key], now: Self.t0)) }
        let refused = #expect(throws: RPCError.self) { _ = try throttle.reserve([key], now: Self.t0) }
        #expect(refused?.code == .resourceExhausted)
        #expect(refused?.metadata.first("retry-after") == "1")
        #expect(refused?.message == "Too many failed log-ins; try again in 1 s.")
        // Not evaluated: frees the slot without counting.
        throttle.settle(reservations.removeLast(), .notEvaluated, now: Self.t0)
        reservations.append(try throttle.reserve([key], now: Self.t0))
        for reservation in reservations { throttle.settle(reservation, .failed, now: Self.t0) }
        #expect(throttle.failures(of: "account:a") == 5)
        #expect(throws: RPCError.self) { _ = try throttle.reserve([key], now: Self.t0.addingTimeInterval(0.5)) }
        let next = try throttle.reserve([key], now: Self.t0.addingTimeInterval(1))
        throttle.settle(next, .succeeded, now: Self.t0.addingTimeInterval(1))
        #expect(throttle.failures(of: "account:a") == 0)

        // Failures are forgotten a day after the last one.
        for _ in 0..<5 { throttle.settle(try throttle.reserve([key], now: Self.t0), .failed, now: Self.t0) }
        #expect(throws: RPCError.self) { _ = try throttle.reserve([key], now: Self.t0) }
        _ = try throttle.reserve([key], now: Self.t0.addingTimeInterval(24 * 3600))
    }

    @Test("A refusal on one key reserves nothing on the others")
    func atomicAcrossKeys() throws {
        let throttle = LoginThrottle()
        let strict = LoginThrottle.Key("source:x", policy: BackoffPolicy(freeFailures: 0), what: "from x")
        let lenient = LoginThrottle.Key("account:a", policy: Self.policy, what: "for a")
        // No failures yet: the strict key admits one attempt at a time.
        let first = try throttle.reserve([lenient, strict], now: Self.t0)
        #expect(throws: RPCError.self) { _ = try throttle.reserve([lenient, strict], now: Self.t0) }
        throttle.settle(first, .notEvaluated, now: Self.t0)
        // The refused call left nothing in flight on the lenient key: five more fit there.
        for _ in 0..<5 { _ = try throttle.reserve([lenient], now: Self.t0) }
        #expect(throws: RPCError.self) { _ = try throttle.reserve([lenient], now: Self.t0) }
    }

    @Test("A success does not forget the failures of a key that does not forget on success (an address)")
    func addressKeepsFailures() throws {
        let throttle = LoginThrottle()
        let address = LoginThrottle.Key("source:x", policy: Self.policy, what: "from x", forgetsOnSuccess: false)
        let account = LoginThrottle.Key("account:a", policy: Self.policy, what: "for a")
        for _ in 0..<3 {
            throttle.settle(try throttle.reserve([account, address], now: Self.t0), .failed, now: Self.t0)
        }
        throttle.settle(try throttle.reserve([account, address], now: Self.t0), .succeeded, now: Self.t0)
        #expect(throttle.failures(of: "account:a") == 0)
        #expect(throttle.failures(of: "source:x") == 3)
    }

    @Test("Trusted pairs expire after their lifetime")
    func trust() {
        let throttle = LoginThrottle()
        throttle.trust("127.0.0.1 a@b.edu", now: Self.t0, for: .seconds(60))
        #expect(throttle.isTrusted("127.0.0.1 a@b.edu", now: Self.t0.addingTimeInterval(59)))
        #expect(!throttle.isTrusted("127.0.0.1 a@b.edu", now: Self.t0.addingTimeInterval(60)))
        #expect(!throttle.isTrusted("10.0.0.1 a@b.edu", now: Self.t0))
    }

    @Test("Per-address limits scale with --rate-limit-scale; 0 turns them off; back-off is not scaled")
    func scaling() {
        var configuration = AccountsConfiguration()
        configuration.scaleRateLimits(by: 0.1)
        #expect(configuration.signUpsPerSource == RateLimit(15, per: .seconds(3600)))
        #expect(configuration.passwordResetsPerSource == RateLimit(2, per: .seconds(3600)))
        #expect(configuration.failedLoginsPerAccount == 5)
        configuration.scaleRateLimits(by: 0)
        #expect(configuration.signUpsPerSource == nil)
        #expect(configuration.verificationResendsPerSource == nil)
    }
}
