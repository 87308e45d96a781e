public import Foundation

/// A signed-in session. The store keeps only the SHA-256 of the bearer token (``TokenHash``).
public struct Session: Hashable, Sendable {
    /// The hash of the session token the client holds.
    public var tokenHash: TokenHash
    /// The account signed in.
    public var accountID: String
    /// The instant from which the session is no longer valid.
    public var expiresAt: Date
    /// When the session was created.
    public var createdAt: Date

    /// Creates a session value.
    public init(tokenHash: TokenHash, accountID: String, expiresAt: Date, createdAt: Date) {
        self.tokenHash = tokenHash
        self.accountID = accountID
        self.expiresAt = expiresAt
        self.createdAt = createdAt
    }

    /// Whether the session is still valid at `now` (it expires at ``expiresAt`` exactly).
    public func isValid(at now: Date) -> Bool { expiresAt > now }
}

/// A single-use token sent by e-mail: to verify the address, or to reset a forgotten password.
///
/// Only the hash is stored. Consuming the token marks it used (``usedAt``); it is kept so that a second
/// use gets "already used" rather than "not valid".
public struct OneTimeToken: Hashable, Sendable {
    /// What a one-time token is for.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The stored name of the kind.
        public let rawValue: String

        /// Creates a kind from its stored name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Proves the person owns the account's e-mail address.
        public static let emailVerification = Kind(rawValue: "emailVerification")
        /// Lets the person choose a new password.
        public static let passwordReset = Kind(rawValue: "passwordReset")
        /// Proves the person owns the new address of an e-mail change (``OneTimeToken/newEmail``).
        public static let emailChange = Kind(rawValue: "emailChange")

        public var description: String { rawValue }
    }

    /// The hash of the token in the link.
    public var tokenHash: TokenHash
    /// What the token is for.
    public var kind: Kind
    /// The account it acts on.
    public var accountID: String
    /// The instant from which the token no longer works.
    public var expiresAt: Date
    /// When the token was created.
    public var createdAt: Date
    /// When the token was used, or `nil` if it was not.
    public var usedAt: Date?
    /// For a verification token issued by a sign-up: the password hash that sign-up chose, which verifying
    /// sets on the account. `nil` keeps the account's password.
    ///
    /// Each sign-up for an address gets its own token, so whoever verifies (the owner of the mailbox)
    /// chooses which sign-up's password the account gets; one sign-up never confirms another's password.
    public var passwordHash: String?
    /// For a verification token issued by a sign-up: the display name that sign-up chose, which verifying
    /// sets on the account. `nil` keeps the account's name.
    public var displayName: String?
    /// For an e-mail change token: the new address (normalized), which consuming the token gives the
    /// account.
    public var newEmail: String?

    /// Creates a one-time token value.
    public init(
        tokenHash: TokenHash,
        kind: Kind,
        accountID: String,
        expiresAt: Date,
        createdAt: Date,
        usedAt: Date? = nil,
        passwordHash: String? = nil,
        displayName: String? = nil,
        newEmail: String? = nil
    ) {
        self.tokenHash = tokenHash
        self.kind = kind
        self.accountID = accountID
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.usedAt = usedAt
        self.passwordHash = passwordHash
        self.displayName = displayName
        self.newEmail = newEmail
    }
}

/// A user at an external identity provider: the provider's issuer (`iss`) and the user's subject there
/// (`sub`), linked to one Skiff account.
public struct ExternalIdentity: Hashable, Sendable {
    /// The issuer URL.
    public var issuer: String
    /// The provider's id of the user (at most 255 characters).
    public var subject: String

    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }
}
