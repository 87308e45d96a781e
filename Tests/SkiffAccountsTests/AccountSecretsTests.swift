import Foundation
import Testing

@testable import SkiffAccounts

/// The in-memory store's sessions and tokens (``AccountSecrets``): found by account and by expiry.
@Suite("In-memory account secrets")
struct AccountSecretsTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func session(_ name: String, account: String, expiresIn seconds: Double) -> Session {
        Session(
            tokenHash: TokenHash(of: name),
            accountID: account,
            expiresAt: t0.addingTimeInterval(seconds),
            createdAt: t0
        )
    }

    @Test("Each account's secrets, through sets, replacements and removals")
    func byAccount() {
        var secrets = AccountSecrets<Session>()
        for index in 0..<5 {
            secrets[TokenHash(of: "a\(index)")] = Self.session("a\(index)", account: "a", expiresIn: 60)
        }
        secrets[TokenHash(of: "b0")] = Self.session("b0", account: "b", expiresIn: 60)
        #expect(secrets.count == 6)
        #expect(Set(secrets.of("a").map(\.hash)) == Set((0..<5).map { TokenHash(of: "a\($0)") }))
        #expect(secrets.of("b").map(\.secret.accountID) == ["b"])
        #expect(secrets.of("nobody").isEmpty)
        // Moved to another account (not something a store does, but the index follows).
        secrets[TokenHash(of: "a4")] = Self.session("a4", account: "b", expiresIn: 60)
        #expect(secrets.of("a").count == 4 && secrets.of("b").count == 2)
        secrets[TokenHash(of: "a3")] = nil
        #expect(secrets.of("a").count == 3 && secrets.count == 5)
        // Only what the predicate picks, of that account only.
        let removed = secrets.removeAll(of: "a") { hash, _ in hash != TokenHash(of: "a0") }
        #expect(removed == 2)
        #expect(secrets.of("a").map(\.hash) == [TokenHash(of: "a0")])
        #expect(secrets.removeAll(of: "b") == 2 && secrets.count == 1)
        #expect(secrets.removeAll(of: "b") == 0)
    }

    @Test(
        "Expired secrets go soonest first, a bounded number of expiries at a time; replaced ones keep their new expiry"
    )
    func expiry() {
        var secrets = AccountSecrets<Session>()
        for index in 0..<10 {
            secrets[TokenHash(of: "s\(index)")] = Self.session("s\(index)", account: "a", expiresIn: Double(index))
        }
        // s2 is given a later expiry, s3 an earlier one, s4 is removed (a log-out).
        secrets[TokenHash(of: "s2")] = Self.session("s2", account: "a", expiresIn: 100)
        secrets[TokenHash(of: "s3")] = Self.session("s3", account: "a", expiresIn: 0.5)
        secrets[TokenHash(of: "s4")] = nil
        // Expired by t0 + 5: s0, s1, s3 (now 0.5) and s5; s2's old and s3's old and s4's entries are checked and
        // skipped. Three expiries at a time.
        let now = Self.t0.addingTimeInterval(5)
        var removed = 0
        var rounds = 0
        while true {
            let batch = secrets.removeExpired(now: now, limit: 3)
            #expect(batch.checked <= 3)
            removed += batch.removed
            rounds += 1
            if batch.checked < 3 { break }
        }
        #expect(removed == 4)
        #expect(rounds == 3)  // 7 expiries due: 3, 3, then 1
        let left = Set(secrets.of("a").map(\.hash))
        #expect(left == Set(["s2", "s6", "s7", "s8", "s9"].map { TokenHash(of: $0) }))
        // Nothing more is due; s2 goes at its new expiry.
        #expect(secrets.removeExpired(now: now, limit: 100) == (removed: 0, checked: 0))
        #expect(secrets.removeExpired(now: Self.t0.addingTimeInterval(100), limit: 100).removed == 5)
        #expect(secrets.count == 0 && secrets.of("a").isEmpty)
    }
}
