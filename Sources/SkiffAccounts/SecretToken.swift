import Crypto
import SkiffDomain

/// A bearer secret handed to a client once: a session token or the token in an e-mailed link.
///
/// The value is 256 random bits in unpadded base64url (43 characters). Only its ``hash`` is stored, so a
/// leaked database does not hand out sessions.
///
/// ```swift
/// let token = SecretToken.generate()
/// try await store.createSession(Session(tokenHash: token.hash, …))
/// return token.value   // to the client, once
/// ```
public struct SecretToken: Hashable, Sendable {
    /// The number of random bytes in a token (256 bits).
    public static let byteCount = 32

    /// The secret, to give to the client. Never log or store it.
    public let value: String

    private init(value: String) { self.value = value }

    /// Generates a new token from the system's cryptographically secure generator.
    public static func generate() -> SecretToken {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// Generates a token with the given generator (tests may pass a deterministic one).
    public static func generate(using generator: inout some RandomNumberGenerator) -> SecretToken {
        var bytes = [UInt8](repeating: 0, count: byteCount)
        for index in bytes.indices {
            bytes[index] = generator.next()
        }
        return SecretToken(value: Base64URL.encode(bytes))
    }

    /// The hash to store and look up by.
    public var hash: TokenHash { TokenHash(of: value) }
}

extension SecretToken: CustomStringConvertible {
    /// Redacted, so a token printed by accident does not leak.
    public var description: String { "SecretToken(<redacted>)" }
}

/// The SHA-256 of a ``SecretToken``, in lowercase hex: what stores keep and look tokens up by.
public struct TokenHash: Hashable, Sendable, CustomStringConvertible {
    /// 64 lowercase hex digits.
    public let rawValue: String

    /// Hashes a token as presented by a client.
    ///
    /// Any string hashes; an unknown or malformed token simply matches nothing.
    public init(of token: String) {
        let digest = SHA256.hash(data: Array(token.utf8))
        self.rawValue = digest.lowercaseHex
    }

    /// Wraps a stored hash. Stores use this when reading rows back.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}
