import Foundation
import Testing

@testable import SkiffAccounts

@Suite("Password hasher")
struct PasswordHasherTests {
    /// Few rounds keep the tests fast; the format and logic do not depend on the count.
    let hasher = PasswordHasher(rounds: 1_000)

    @Test("The production default is at least 600,000 rounds")
    func defaultRounds() {
        #expect(PasswordHasher.defaultRounds >= 600_000)
        #expect(PasswordHasher().rounds >= 600_000)  // constructing does not hash
    }

    @Test("The right password verifies; wrong ones do not")
    func verify() async throws {
        let encoded = try await hasher.hash("correct horse battery staple")
        #expect(try await hasher.verify("correct horse battery staple", against: encoded))
        #expect(try await !hasher.verify("correct horse battery stapler", against: encoded))
        #expect(try await !hasher.verify("Correct horse battery staple", against: encoded))
        #expect(try await !hasher.verify("", against: encoded))
    }

    @Test("Encoded format: pbkdf2-sha256$rounds$salt(16 bytes)$hash(32 bytes)")
    func format() async throws {
        let encoded = try await hasher.hash("format check 123")
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 4)
        #expect(parts[0] == "pbkdf2-sha256")
        #expect(parts[1] == "1000")
        #expect(Data(base64Encoded: parts[2])?.count == 16)
        #expect(Data(base64Encoded: parts[3])?.count == 32)
    }

    @Test("Each hash has its own salt")
    func distinctSalts() async throws {
        let first = try await hasher.hash("same password here")
        let second = try await hasher.hash("same password here")
        #expect(first != second)
        #expect(first.split(separator: "$")[2] != second.split(separator: "$")[2])
        #expect(try await hasher.verify("same password here", against: first))
        #expect(try await hasher.verify("same password here", against: second))
    }

    @Test("The round count travels with the hash; fewer rounds than configured needs a rehash")
    func roundsTravel() async throws {
        let old = try await PasswordHasher(rounds: 500).hash("upgrade me please")
        #expect(try await hasher.verify("upgrade me please", against: old))
        #expect(hasher.needsRehash(old))
        #expect(!hasher.needsRehash(try await hasher.hash("upgrade me please")))
        #expect(hasher.needsRehash("md5$abc"))
    }

    @Test("Composed and decomposed accents are the same password (NFC)")
    func unicodeNormalization() async throws {
        let encoded = try await hasher.hash("caf\u{00E9} au lait!")
        #expect(try await hasher.verify("cafe\u{0301} au lait!", against: encoded))
    }

    @Test(
        "Malformed stored hashes throw rather than verify",
        arguments: [
            "", "plaintext", "pbkdf2-sha256$1000$c2FsdA==", "bcrypt$1000$c2FsdA==$aGFzaA==",
            "pbkdf2-sha256$0$c2FsdA==$" + Data(count: 32).base64EncodedString(),
            "pbkdf2-sha256$99999999999$c2FsdA==$" + Data(count: 32).base64EncodedString(),
            "pbkdf2-sha256$1000$c2FsdA==$aGFzaA==",  // 4-byte key
            "pbkdf2-sha256$1000$!!!$" + Data(count: 32).base64EncodedString(),
        ]
    )
    func malformed(encoded: String) async {
        await #expect(throws: PasswordHashFormatError()) {
            _ = try await hasher.verify("whatever password", against: encoded)
        }
    }

    @Test("Derivation matches the RFC 7914 PBKDF2-HMAC-SHA256 test vector")
    func knownVector() throws {
        // RFC 7914 §11: P = "passwd", S = "salt", c = 1; the first 32 bytes of the 64-byte output.
        let key = try PasswordHasher.derive("passwd", salt: Array("salt".utf8), rounds: 1)
        let hex = key.map { String(format: "%02x", $0) }.joined()
        #expect(hex == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc")
    }

    @Test("Constant-time comparison")
    func constantTimeEquals() {
        #expect(PasswordHasher.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!PasswordHasher.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!PasswordHasher.constantTimeEquals([0, 2, 3], [1, 2, 3]))
        #expect(!PasswordHasher.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(PasswordHasher.constantTimeEquals([UInt8](), [UInt8]()))
        #expect(PasswordHasher.constantTimeEquals(Data([9, 9]), [9, 9]))
    }

    @Test("A burst of hashes with a limit of 2 all complete")
    func burst() async throws {
        let limited = PasswordHasher(rounds: 1_000, pool: BlockingWorkPool(label: "test.burst", maximumConcurrency: 2))
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<12 {
                group.addTask {
                    let encoded = try await limited.hash("password number \(index)")
                    return try await limited.verify("password number \(index)", against: encoded)
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 12))
    }

    @Test("Timing equalizer for unknown accounts runs without error")
    func simulate() async throws {
        try await hasher.simulateVerification("any password at all")
    }
}
