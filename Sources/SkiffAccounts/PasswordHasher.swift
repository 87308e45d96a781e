import Crypto
import CryptoExtras
import Foundation

/// Hashes and verifies passwords with PBKDF2-HMAC-SHA256.
///
/// An encoded hash reads `pbkdf2-sha256$<rounds>$<salt>$<hash>`, with a random 16-byte salt and a 32-byte
/// derived key, both in standard base64. The round count travels with the hash, so raising ``rounds``
/// later still verifies old hashes (see ``needsRehash(_:)``). Passwords are normalized to Unicode NFC
/// first, so the same password typed on different keyboards verifies.
///
/// Derivation is slow on purpose (about 80 ms at 600,000 rounds in release builds), so it runs on a
/// ``BlockingWorkPool`` — never on the caller's executor — and at most ``BlockingWorkPool/maximumConcurrency``
/// derivations run at once; a burst of sign-ups queues instead of failing or starving other work.
///
/// ```swift
/// let hasher = PasswordHasher()                       // 600,000 rounds
/// let encoded = try await hasher.hash("correct horse battery")
/// let ok = try await hasher.verify("correct horse battery", against: encoded)
/// ```
public struct PasswordHasher: Sendable {
    /// The production round count (OWASP's 2023 recommendation for PBKDF2-HMAC-SHA256).
    public static let defaultRounds = 600_000
    /// The algorithm name at the start of every encoded hash.
    public static let algorithm = "pbkdf2-sha256"
    /// The salt length in bytes.
    public static let saltByteCount = 16
    /// The derived key length in bytes.
    public static let keyByteCount = 32
    /// The largest round count accepted from a stored hash (bounds the work a corrupt row can cause).
    public static let maximumRounds = 10_000_000

    /// The round count used for new hashes.
    public let rounds: Int
    /// Where derivations run.
    public let pool: BlockingWorkPool

    /// Creates a hasher.
    ///
    /// - Parameters:
    ///   - rounds: PBKDF2 iterations for new hashes. Keep the default (600,000) in production; tests may use
    ///     fewer to stay fast.
    ///   - pool: Where derivations run; by default a new pool admitting one derivation per active processor.
    public init(rounds: Int = PasswordHasher.defaultRounds, pool: BlockingWorkPool? = nil) {
        precondition((1...Self.maximumRounds).contains(rounds), "PBKDF2 rounds must be in 1...\(Self.maximumRounds)")
        self.rounds = rounds
        self.pool = pool ?? BlockingWorkPool(label: "skiff.password-hashing")
    }

    /// Hashes a password with a fresh random salt.
    ///
    /// - Returns: The encoded hash to store.
    public func hash(_ password: String) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let rounds = self.rounds
        let key = try await pool.run { try Self.derive(password, salt: salt, rounds: rounds) }
        return Self.encode(rounds: rounds, salt: salt, key: key)
    }

    /// Checks a password against an encoded hash, comparing in constant time.
    ///
    /// - Returns: Whether the password matches.
    /// - Throws: ``PasswordHashFormatError`` if `encoded` is not a hash this type produces (a data problem,
    ///   not a wrong password).
    public func verify(_ password: String, against encoded: String) async throws -> Bool {
        guard let parsed = Self.parse(encoded) else { throw PasswordHashFormatError() }
        let key = try await pool.run { try Self.derive(password, salt: parsed.salt, rounds: parsed.rounds) }
        return Self.constantTimeEquals(key, parsed.key)
    }

    /// Does the work of one verification and discards it.
    ///
    /// Call it when a sign-in names an unknown e-mail address, so that the response takes as long as for a
    /// known one and does not reveal which addresses have accounts.
    public func simulateVerification(_ password: String) async throws {
        let rounds = self.rounds
        let salt = [UInt8](repeating: 0, count: Self.saltByteCount)
        _ = try await pool.run { try Self.derive(password, salt: salt, rounds: rounds) }
    }

    /// Whether a stored hash should be replaced at the next successful sign-in (fewer rounds than
    /// ``rounds``, or not in the current format).
    public func needsRehash(_ encoded: String) -> Bool {
        guard let parsed = Self.parse(encoded) else { return true }
        return parsed.rounds < rounds
    }

    /// Compares two byte strings in time that depends only on their lengths, not on where they differ.
    public static func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) {
            difference |= left ^ right
        }
        return difference == 0
    }

    // MARK: Format

    static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let normalized = password.precomposedStringWithCanonicalMapping
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(normalized.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: keyByteCount,
            unsafeUncheckedRounds: rounds
        )
        return key.withUnsafeBytes { Array($0) }
    }

    static func encode(rounds: Int, salt: [UInt8], key: [UInt8]) -> String {
        [algorithm, String(rounds), Data(salt).base64EncodedString(), Data(key).base64EncodedString()]
            .joined(separator: "$")
    }

    struct Parsed {
        var rounds: Int
        var salt: [UInt8]
        var key: [UInt8]
    }

    static func parse(_ encoded: String) -> Parsed? {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == algorithm,
            let rounds = Int(parts[1]), (1...maximumRounds).contains(rounds),
            let salt = Data(base64Encoded: String(parts[2])), !salt.isEmpty,
            let key = Data(base64Encoded: String(parts[3])), key.count == keyByteCount
        else { return nil }
        return Parsed(rounds: rounds, salt: Array(salt), key: Array(key))
    }
}

/// A stored password hash is not in the format ``PasswordHasher`` writes.
///
/// This indicates damaged data, not a wrong password; it maps to an internal error on the wire.
public struct PasswordHashFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    public var description: String { "The stored password hash is not in a known format." }
}
