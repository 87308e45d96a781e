import Foundation
public import SkiffDomain

/// Lifetimes and limits of the Accounts service.
///
/// Log-in throttling is exponential back-off (``BackoffPolicy``), never a lockout of correct passwords:
/// - **per account** (failures from anywhere): ``failedLoginsPerAccount`` free failures, then each
///   further attempt is evaluated only ``loginBackoffInitialDelay`` × 2ⁿ after the last failure, at most
///   ``maximumLoginBackoff`` — with the defaults at most 17 guesses per account in the first hour of an
///   attack and 4 per hour after that;
/// - **per network address** (failures across accounts, against password spraying):
///   ``failedLoginsPerSource`` free failures, then the same back-off. Accounts that logged in from that
///   address within ``trustedSourceLifetime`` are exempt, and their failures do not count there, so one
///   person behind a campus NAT cannot lock everyone else out.
///
/// Attempts are counted before the password is hashed, so the limits hold under any concurrency.
public struct AccountsConfiguration: Sendable {
    /// How long a session without "remember me" lasts (the proto documents 24 hours).
    public var sessionLifetime: Duration = .seconds(24 * 3600)
    /// How long a "remember me" session lasts.
    public var rememberedSessionLifetime: Duration = .seconds(30 * 24 * 3600)
    /// How long an e-mail verification token is valid.
    public var verificationTokenLifetime: Duration = .seconds(24 * 3600)
    /// How long a password-reset token is valid (single use).
    public var resetTokenLifetime: Duration = .seconds(3600)
    /// How long after completion a sale may be rated.
    public var ratingWindow: Duration = .seconds(14 * 24 * 3600)
    /// Failed log-ins (and wrong current passwords in ChangePassword) per account before back-off starts.
    public var failedLoginsPerAccount = 5
    /// Failed log-ins per network address, across accounts, before back-off starts for that address.
    public var failedLoginsPerSource = 20
    /// The first back-off delay; each further failure doubles it.
    public var loginBackoffInitialDelay: Duration = .seconds(1)
    /// The longest back-off delay.
    public var maximumLoginBackoff: Duration = .seconds(15 * 60)
    /// How long after the last failure an account's or address's failures are forgotten.
    public var failedLoginMemory: Duration = .seconds(24 * 3600)
    /// How long a successful log-in exempts its (network address, account) pair from the address's back-off.
    public var trustedSourceLifetime: Duration = .seconds(30 * 24 * 3600)
    /// E-mails (sign-up, verification, reset) sent per address within an hour.
    public var emailsPerAddressPerHour = 5
    /// Sign-ups per network address; `nil` for no limit. Default: 150 per hour — a campus behind one NAT
    /// signing up at orientation, not a script.
    public var signUpsPerSource: RateLimit? = RateLimit(150, per: .seconds(3600))
    /// RequestPasswordReset calls per network address; `nil` for no limit. Default: 20 per hour.
    public var passwordResetsPerSource: RateLimit? = RateLimit(20, per: .seconds(3600))
    /// ResendVerification calls per network address; `nil` for no limit. Default: 20 per hour.
    public var verificationResendsPerSource: RateLimit? = RateLimit(20, per: .seconds(3600))
    /// BeginExternalLogIn and LogInWithIdToken calls per network address (each); `nil` for no limit.
    /// Default: 30 per minute.
    public var externalLogInsPerSource: RateLimit? = RateLimit(30, per: .seconds(60))
    /// The most password hashes waiting for a hashing thread; past it, calls that hash (SignUp, LogIn,
    /// ResetPassword, ChangePassword) get RESOURCE_EXHAUSTED with `retry-after`. Default: 64 (about 2.5 s of
    /// work on two cores at 600,000 rounds).
    public var maximumQueuedPasswordHashes = 64
    /// The domain allow-list; empty accepts every domain.
    public var allowedEmailDomains: [String] = []

    public init() {}

    /// Multiplies the per-address limits of SignUp, RequestPasswordReset and ResendVerification by `factor`;
    /// 0 turns them off (load tests). Log-in back-off is a defence, not a rate, and is not scaled.
    public mutating func scaleRateLimits(by factor: Double) {
        signUpsPerSource = signUpsPerSource?.scaled(by: factor)
        passwordResetsPerSource = passwordResetsPerSource?.scaled(by: factor)
        verificationResendsPerSource = verificationResendsPerSource?.scaled(by: factor)
        externalLogInsPerSource = externalLogInsPerSource?.scaled(by: factor)
    }

    /// The back-off of one account.
    public var accountBackoff: BackoffPolicy {
        BackoffPolicy(
            freeFailures: failedLoginsPerAccount,
            initialDelay: loginBackoffInitialDelay,
            maximumDelay: maximumLoginBackoff,
            memory: failedLoginMemory
        )
    }

    /// The back-off of one network address.
    public var sourceBackoff: BackoffPolicy {
        BackoffPolicy(
            freeFailures: failedLoginsPerSource,
            initialDelay: loginBackoffInitialDelay,
            maximumDelay: maximumLoginBackoff,
            memory: failedLoginMemory
        )
    }
}
