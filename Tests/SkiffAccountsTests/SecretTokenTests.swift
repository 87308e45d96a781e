import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

@Suite("Secret tokens and ids")
struct SecretTokenTests {
    @Test("Tokens are 256 random bits in 43 base64url characters")
    func shape() throws {
        let token = SecretToken.generate()
        #expect(token.value.utf8.count == 43)
        #expect(token.value.utf8.allSatisfy(Base64URL.isAlphabet))
        #expect(try #require(Base64URL.decode(token.value)).count == 32)
        #expect(!"\(token)".contains(token.value), "descriptions are redacted")
    }

    @Test("Only the SHA-256 is stored: 64 lowercase hex digits, deterministic")
    func hash() {
        let token = SecretToken.generate()
        #expect(token.hash.rawValue.count == 64)
        #expect(token.hash.rawValue.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(token.hash == TokenHash(of: token.value))
        #expect(token.hash.rawValue != token.value)
        // SHA-256("abc"), FIPS 180-2.
        #expect(TokenHash(of: "abc").rawValue == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("Tokens are unique and their bits look uniform")
    func entropy() throws {
        let tokens = (0..<2000).map { _ in SecretToken.generate() }
        #expect(Set(tokens.map(\.value)).count == tokens.count)
        var ones = 0
        var bits = 0
        for token in tokens {
            let bytes = try #require(Base64URL.decode(token.value))
            ones += bytes.reduce(0) { $0 + $1.nonzeroBitCount }
            bits += bytes.count * 8
        }
        // 512,000 fair bits: mean 256,000, standard deviation ≈ 358; allow 6σ.
        #expect(abs(Double(ones) - Double(bits) / 2) < 6 * (Double(bits).squareRoot() / 2))
    }

    @Test("Ids: prefix, 128 random bits, URL-safe, unique")
    func ids() {
        let ids = (0..<2000).map { _ in EntityID.make(.account) }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(50) {
            #expect(id.hasPrefix("usr_"))
            #expect(id.utf8.count == 4 + 22)
            #expect(EntityID.isWellFormed(id, prefix: .account))
            #expect(!EntityID.isWellFormed(id, prefix: .session))
        }
        #expect(EntityID.make(.session).hasPrefix("ses_"))
        #expect(!EntityID.isWellFormed("usr_short", prefix: .account))
        #expect(!EntityID.isWellFormed("usr_" + String(repeating: "/", count: 22), prefix: .account))
    }

    @Test("A seeded generator makes reproducible tokens and ids")
    func deterministic() {
        struct Counter: RandomNumberGenerator {
            var value: UInt64 = 0
            mutating func next() -> UInt64 {
                value &+= 1
                return value
            }
        }
        var first = Counter()
        var second = Counter()
        #expect(SecretToken.generate(using: &first) == SecretToken.generate(using: &second))
        #expect(EntityID.make(.report, using: &first) == EntityID.make(.report, using: &second))
    }
}
