/// Generates opaque entity identifiers: a type prefix followed by 128 random bits in base64url.
///
/// An id looks like `usr_3q2-7wEvr2pY0u5BnGxR6A`. It carries no order, time or count, so it reveals nothing
/// and cannot be guessed. The randomness comes from `SystemRandomNumberGenerator`, which is cryptographically
/// secure on every supported platform.
///
/// ```swift
/// let id = EntityID.make(.account)   // "usr_…"
/// ```
public enum EntityID {
    /// The number of random bytes in an id (128 bits).
    public static let randomByteCount = 16

    /// A type prefix, written before the underscore. Prefixes are lowercase ASCII letters.
    public struct Prefix: Hashable, Sendable, CustomStringConvertible {
        /// The prefix without the underscore, e.g. `usr`.
        public let rawValue: String

        /// Creates a prefix.
        ///
        /// - Precondition: `rawValue` is 1–8 lowercase ASCII letters.
        public init(_ rawValue: String) {
            precondition(
                (1...8).contains(rawValue.utf8.count)
                    && rawValue.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) },
                "An id prefix is 1–8 lowercase ASCII letters"
            )
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// Accounts (`usr_`).
        public static let account = Prefix("usr")
        /// Sessions (`ses_`).
        public static let session = Prefix("ses")
        /// Abuse reports (`rep_`).
        public static let report = Prefix("rep")
        /// Anonymous seller ratings (`rat_`): their public id, which must not reveal the sale.
        public static let rating = Prefix("rat")
    }

    /// Makes a new random id with the given prefix.
    public static func make(_ prefix: Prefix) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(prefix, using: &generator)
    }

    /// Makes a new id using the given generator (deterministic generators make reproducible test fixtures).
    public static func make(_ prefix: Prefix, using generator: inout some RandomNumberGenerator) -> String {
        var bytes = [UInt8](repeating: 0, count: randomByteCount)
        for index in bytes.indices {
            bytes[index] = generator.next()
        }
        return prefix.rawValue + "_" + Base64URL.encode(bytes)
    }

    /// Whether a string has the shape of an id with the given prefix (it may still not exist).
    ///
    /// Use it to reject malformed ids early with `invalidArgument` rather than looking them up.
    public static func isWellFormed(_ id: String, prefix: Prefix) -> Bool {
        let head = prefix.rawValue + "_"
        guard id.hasPrefix(head) else { return false }
        let body = id.utf8.dropFirst(head.utf8.count)
        return body.count == 22 && body.allSatisfy(Base64URL.isAlphabet)
    }
}
