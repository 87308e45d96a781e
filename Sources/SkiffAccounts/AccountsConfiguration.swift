import Foundation

/// Lifetimes and limits of the Accounts service.
public struct AccountsConfiguration: Sendable {
    /// How long a session lasts.
    public var sessionLifetime: Duration = .seconds(7 * 24 * 3600)
    /// How long a "remember me" session lasts.
    public var rememberedSessionLifetime: Duration = .seconds(30 * 24 * 3600)
    /// How long an e-mail verification token is valid.
    public var verificationTokenLifetime: Duration = .seconds(24 * 3600)
    /// How long a password-reset token is valid (single use).
    public var resetTokenLifetime: Duration = .seconds(3600)
    /// How long after completion a sale may be rated.
    public var ratingWindow: Duration = .seconds(14 * 24 * 3600)
    /// Failed log-ins allowed per account within ``failedLoginWindow``.
    public var failedLoginsPerAccount = 5
    /// Failed log-ins allowed per peer address within ``failedLoginWindow``.
    public var failedLoginsPerPeer = 20
    /// The window failed log-ins are counted in.
    public var failedLoginWindow: Duration = .seconds(15 * 60)
    /// E-mails (sign-up, verification, reset) sent per address within an hour.
    public var emailsPerAddressPerHour = 5
    /// The domain allow-list; empty accepts every domain.
    public var allowedEmailDomains: [String] = []

    public init() {}
}
