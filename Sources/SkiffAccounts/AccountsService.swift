import Foundation
public import Logging
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
import SwiftProtobuf

/// The Accounts service: sign-up, verification, sessions, passwords, profiles, ratings, reports.
///
/// Domain rules live here and in ``AccountRules``; storage goes through ``AccountsStore``; the
/// wire types are converted at this edge only. Every RPC first checks its request against
/// ``AccountsRequestBounds``, before any hashing or store access.
public struct AccountsService: Skiff_Accounts_V1_Accounts.ServiceProtocol {
    let store: any AccountsStore
    let hasher: PasswordHasher
    let mailer: any Mailer
    let sales: any SaleDirectory
    let blockedUsers: any BlockedUserDirectory
    let images: any ImageDirectory
    let cleanup: any AccountCleanup
    /// The configured OpenID Connect providers; `nil` when none are.
    let identityProviders: IdentityTokenVerifier?
    let nonces = NonceBook()
    let externalLogInsBySource: UserRateLimiter
    let time: any TimeSource
    let configuration: AccountsConfiguration
    let rules: AccountRules
    let logger: Logger
    /// Back-off of log-ins and password changes (see ``AccountsConfiguration``).
    let throttle: LoginThrottle
    let emails: AttemptLimiter
    let signUpsBySource: UserRateLimiter
    let resetsBySource: UserRateLimiter
    let resendsBySource: UserRateLimiter

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - hasher: Hashes passwords. Bound its pool's queue (``BlockingWorkPool/maximumQueueLength``, e.g. to
    ///     ``AccountsConfiguration/maximumQueuedPasswordHashes``) so that a flood is refused rather than queued.
    ///   - logger: Where failures of work done after answering (reset and verification e-mails) are logged.
    public init(
        store: any AccountsStore,
        hasher: PasswordHasher = PasswordHasher(),
        mailer: any Mailer,
        sales: any SaleDirectory = NoSales(),
        blockedUsers: any BlockedUserDirectory = NoBlockedUsers(),
        images: any ImageDirectory = NoImages(),
        cleanup: any AccountCleanup = NoAccountCleanup(),
        identityProviders: IdentityTokenVerifier? = nil,
        time: any TimeSource = SystemTimeSource(),
        configuration: AccountsConfiguration = AccountsConfiguration(),
        logger: Logger = Logger(label: "skiff.accounts")
    ) {
        self.store = store
        self.hasher = hasher
        self.mailer = mailer
        self.sales = sales
        self.blockedUsers = blockedUsers
        self.images = images
        self.cleanup = cleanup
        self.identityProviders = identityProviders
        self.externalLogInsBySource = UserRateLimiter(
            configuration.externalLogInsPerSource,
            what: "external log-ins from this network address"
        )
        self.time = time
        self.configuration = configuration
        self.rules = AccountRules(allowedEmailDomains: configuration.allowedEmailDomains)
        self.logger = logger
        self.throttle = LoginThrottle()
        self.emails = AttemptLimiter(limit: configuration.emailsPerAddressPerHour, window: .seconds(3600))
        self.signUpsBySource = UserRateLimiter(
            configuration.signUpsPerSource,
            what: "sign-ups from this network address"
        )
        self.resetsBySource = UserRateLimiter(
            configuration.passwordResetsPerSource,
            what: "password resets requested from this network address"
        )
        self.resendsBySource = UserRateLimiter(
            configuration.verificationResendsPerSource,
            what: "verification e-mails requested from this network address"
        )
    }

    // MARK: Sign-up and verification

    public func signUp(
        request: Skiff_Accounts_V1_SignUpRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_SignUpResponse {
        try AccountsRequestBounds.check(request)
        let email = try rules.validateEmail(request.email)
        try AccountRules.validatePassword(request.password)
        let displayName = try AccountRules.validateDisplayName(request.displayName)
        let now = time.now()
        try signUpsBySource.acquire(userID: Self.host(of: context.peer), now: now)
        try rationEmail(to: email, now: now)
        // Hash before looking the address up, so every answer takes the same time.
        let passwordHash = try await hashing { try await hasher.hash(request.password) }
        let account = Account(
            id: EntityID.make(.account),
            email: email,
            displayName: displayName,
            passwordHash: passwordHash,
            createdAt: now
        )
        // One store write whatever the address's state (new, unverified, verified), then one e-mail, so the
        // answer's timing does not tell them apart. Each sign-up gets a token of its own carrying its
        // password and name: whoever owns the mailbox verifies one sign-up (which sets them) or resets the
        // password; a second sign-up for an unverified address drops the earlier password.
        let token = SecretToken.generate()
        let registration = try await store.registerSignUp(
            account,
            token: OneTimeToken(
                tokenHash: token.hash,
                kind: .emailVerification,
                accountID: account.id,
                expiresAt: now.addingTimeInterval(configuration.verificationTokenLifetime.timeInterval),
                createdAt: now,
                passwordHash: passwordHash,
                displayName: displayName
            )
        )
        switch registration {
        case .created(let stored), .pending(let stored):
            try await mailer.send(verificationMail(to: stored, token: token, displayName: displayName))
        case .alreadyVerified:
            try await mailer.send(
                MailMessage(
                    to: email,
                    subject: "Someone tried to sign up with your address",
                    body: "Someone tried to create a Skiff account with this address, which already has one. "
                        + "If it was you, log in instead, or reset your password if you forgot it."
                )
            )
        }
        return Skiff_Accounts_V1_SignUpResponse()
    }

    /// The verification e-mail for `account` with `token`; `displayName` is the sign-up's (`nil` for a resend).
    private func verificationMail(to account: Account, token: SecretToken, displayName: String?) -> MailMessage {
        // "Welcome, <name>!" starts the body: skiff-load's MailLogTokenSource finds seeded accounts' tokens by it.
        var text = "Welcome, \(displayName ?? account.displayName)! Confirm this address to start using Skiff."
        if displayName == nil && !account.hasPassword {
            text += " Then choose your password with \"Forgot password\"."
        }
        text += " If you did not sign up, ignore this e-mail: nothing happens unless the token is used."
        return MailMessage(
            to: account.email,
            subject: "Verify your Skiff account",
            body: "\(text)\n\nVerification token: \(token.value)\n"
        )
    }

    /// Stores a one-time token for the account and mails it, on a line `<label>: <token>`.
    func sendToken(
        _ token: SecretToken,
        _ record: OneTimeToken,
        to account: Account,
        subject: String,
        text: String,
        label: String
    ) async throws {
        try await store.insertOneTimeToken(record)
        try await mailer.send(
            MailMessage(to: account.email, subject: subject, body: "\(text)\n\n\(label): \(token.value)\n")
        )
    }

    /// Counts an e-mail to an address against its hourly allowance.
    func rationEmail(to email: String, now: Date) throws {
        try emails.check(["mail:" + email], now: now, what: "e-mails to this address")
        emails.record(["mail:" + email], now: now)
    }

    /// Runs work that must not show in the answer's timing (looking an address up, storing a token,
    /// mailing it) after the answer; failures are logged without request data.
    func afterAnswering(_ what: String, _ work: @escaping @Sendable () async throws -> Void) {
        let logger = self.logger
        Task {
            do {
                try await work()
            } catch {
                logger.warning(
                    "Accounts e-mail work failed",
                    metadata: ["work": "\(what)", "error": "\(type(of: error))"]
                )
            }
        }
    }

    /// Runs password hashing, answering RESOURCE_EXHAUSTED with `retry-after` when the hashing queue is full.
    func hashing<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch is BlockingWorkPool.QueueFullError {
            throw RPCError(
                code: .resourceExhausted,
                message: "The server is busy checking passwords; try again in 1 s.",
                metadata: ["retry-after": .string("1")]
            )
        }
    }

    public func verifyEmail(
        request: Skiff_Accounts_V1_VerifyEmailRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_VerifyEmailResponse {
        try AccountsRequestBounds.check(request)
        guard !request.token.isEmpty else {
            throw DomainError(.invalidArgument, "token is empty: use the token from the verification e-mail.")
        }
        do {
            _ = try await store.verifyEmail(tokenHash: TokenHash(of: request.token), now: time.now())
        } catch let error as DomainError where error.code == .notFound || error.code == .failedPrecondition {
            throw DomainError(
                .failedPrecondition,
                "The verification token is unknown or has expired; ask for a new one with ResendVerification."
            )
        }
        return Skiff_Accounts_V1_VerifyEmailResponse()
    }

    public func resendVerification(
        request: Skiff_Accounts_V1_ResendVerificationRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ResendVerificationResponse {
        try AccountsRequestBounds.check(request)
        let email = try rules.validateEmail(request.email)
        let now = time.now()
        try resendsBySource.acquire(userID: Self.host(of: context.peer), now: now)
        try rationEmail(to: email, now: now)
        let token = SecretToken.generate()
        afterAnswering("verification resend") { [self] in
            guard let account = try await store.account(email: email), !account.verified else { return }
            // Without a sign-up's password: verifying keeps the account's (none, if sign-ups competed).
            try await store.insertOneTimeToken(
                OneTimeToken(
                    tokenHash: token.hash,
                    kind: .emailVerification,
                    accountID: account.id,
                    expiresAt: now.addingTimeInterval(configuration.verificationTokenLifetime.timeInterval),
                    createdAt: now
                )
            )
            try await mailer.send(verificationMail(to: account, token: token, displayName: nil))
        }
        return Skiff_Accounts_V1_ResendVerificationResponse()
    }

    // MARK: Sessions

    public func logIn(
        request: Skiff_Accounts_V1_LogInRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_LogInResponse {
        try AccountsRequestBounds.check(request)
        guard !request.email.isEmpty, !request.password.isEmpty else {
            throw DomainError(.invalidArgument, "email and password are both required.")
        }
        let email = Account.normalizedEmail(request.email)
        let source = Self.host(of: context.peer)
        let now = time.now()
        // Back-off per account, and per network address unless this account logged in from it before.
        let pair = source + " " + email
        var keys = [
            LoginThrottle.Key(
                "account:" + email,
                policy: configuration.accountBackoff,
                what: "failed log-ins for this account"
            )
        ]
        if !throttle.isTrusted(pair, now: now) {
            keys.append(
                LoginThrottle.Key(
                    "source:" + source,
                    policy: configuration.sourceBackoff,
                    what: "failed log-ins from this network address",
                    forgetsOnSuccess: false
                )
            )
        }
        // Counted before hashing and settled after, so concurrent attempts cannot exceed the limits.
        let reservation = try throttle.reserve(keys, now: now)
        var outcome = LoginThrottle.Outcome.notEvaluated
        defer { throttle.settle(reservation, outcome, now: time.now()) }

        let account = try await store.account(email: email)
        let correct: Bool
        if let account, account.hasPassword {
            correct = try await hashing { try await hasher.verify(request.password, against: account.passwordHash) }
        } else {
            try await hashing { try await hasher.simulateVerification(request.password) }
            correct = false
        }
        guard correct, let account else {
            outcome = .failed
            throw DomainError(.unauthenticated, "The e-mail address or password is wrong.")
        }
        outcome = .succeeded
        guard account.verified else {
            throw DomainError(
                .failedPrecondition,
                "Verify your e-mail address first: use the token from the verification e-mail, "
                    + "or ask for a new one with ResendVerification."
            )
        }
        throttle.trust(pair, now: now, for: configuration.trustedSourceLifetime)
        let (token, expiresAt) = try await startSession(accountID: account.id, rememberMe: request.rememberMe, now: now)
        return .with {
            $0.sessionToken = token.value
            $0.expiresAt = Google_Protobuf_Timestamp(date: expiresAt)
            $0.userID = account.id
        }
    }

    public func logOut(
        request: Skiff_Accounts_V1_LogOutRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_LogOutResponse {
        let user = try context.requireUser()
        _ = try await store.deleteSession(tokenHash: TokenHash(of: user.sessionToken))
        return Skiff_Accounts_V1_LogOutResponse()
    }

    public func logOutEverywhere(
        request: Skiff_Accounts_V1_LogOutEverywhereRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_LogOutEverywhereResponse {
        let user = try context.requireUser()
        let ended = try await store.deleteAllSessions(accountID: user.id)
        return .with { $0.sessionsEnded = Int32(clamping: ended) }
    }

    // MARK: Passwords

    public func requestPasswordReset(
        request: Skiff_Accounts_V1_RequestPasswordResetRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_RequestPasswordResetResponse {
        try AccountsRequestBounds.check(request)
        let email = try rules.validateEmail(request.email)
        let now = time.now()
        try resetsBySource.acquire(userID: Self.host(of: context.peer), now: now)
        try rationEmail(to: email, now: now)
        let token = SecretToken.generate()
        afterAnswering("password reset") { [self] in
            guard let account = try await store.account(email: email) else { return }
            try await sendToken(
                token,
                OneTimeToken(
                    tokenHash: token.hash,
                    kind: .passwordReset,
                    accountID: account.id,
                    expiresAt: now.addingTimeInterval(configuration.resetTokenLifetime.timeInterval),
                    createdAt: now
                ),
                to: account,
                subject: "Reset your Skiff password",
                text:
                    "Use this token within an hour to choose a new password. If you did not ask for it, ignore this e-mail.",
                label: "Reset token"
            )
        }
        return Skiff_Accounts_V1_RequestPasswordResetResponse()
    }

    public func resetPassword(
        request: Skiff_Accounts_V1_ResetPasswordRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ResetPasswordResponse {
        try AccountsRequestBounds.check(request)
        guard !request.token.isEmpty else {
            throw DomainError(.invalidArgument, "token is empty: use the token from the reset e-mail.")
        }
        try AccountRules.validatePassword(request.newPassword)
        let hash = try await hashing { try await hasher.hash(request.newPassword) }
        do {
            _ = try await store.resetPassword(
                tokenHash: TokenHash(of: request.token),
                newPasswordHash: hash,
                now: time.now()
            )
        } catch let error as DomainError where error.code == .notFound || error.code == .failedPrecondition {
            throw DomainError(
                .failedPrecondition,
                "The reset token is unknown, used or expired; ask for a new one with RequestPasswordReset."
            )
        }
        return Skiff_Accounts_V1_ResetPasswordResponse()
    }

    public func changePassword(
        request: Skiff_Accounts_V1_ChangePasswordRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ChangePasswordResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        try AccountRules.validatePassword(request.newPassword)
        guard request.newPassword != request.currentPassword else {
            throw DomainError(.invalidArgument, "new_password must differ from the current password.")
        }
        _ = try await checkCurrentPassword(request.currentPassword, of: user)
        let hash = try await hashing { try await hasher.hash(request.newPassword) }
        // Also revokes reset tokens requested before the change.
        _ = try await store.changePassword(
            accountID: user.id,
            newPasswordHash: hash,
            keepingSession: TokenHash(of: user.sessionToken)
        )
        return Skiff_Accounts_V1_ChangePasswordResponse()
    }

    /// Starts a session for the account: 24 hours, or 30 days when remembered.
    func startSession(accountID: String, rememberMe: Bool, now: Date) async throws -> (SecretToken, Date) {
        let lifetime = rememberMe ? configuration.rememberedSessionLifetime : configuration.sessionLifetime
        let token = SecretToken.generate()
        let expiresAt = now.addingTimeInterval(lifetime.timeInterval)
        try await store.createSession(
            Session(tokenHash: token.hash, accountID: accountID, expiresAt: expiresAt, createdAt: now)
        )
        return (token, expiresAt)
    }

    /// The caller's account, once `password` is checked to be its password. Wrong passwords back off per
    /// account (one budget for ChangePassword, RequestEmailChange and DeleteAccount), counted before hashing
    /// and settled after, as for LogIn.
    ///
    /// - Throws: `permissionDenied` for a wrong password; `resourceExhausted` during a back-off or when the
    ///   hasher is busy; `unauthenticated` when the account is gone.
    func checkCurrentPassword(_ password: String, of user: AuthenticatedUser) async throws -> Account {
        let reservation = try throttle.reserve(
            [
                LoginThrottle.Key(
                    "change:" + user.id,
                    policy: configuration.accountBackoff,
                    what: "wrong current passwords"
                )
            ],
            now: time.now()
        )
        var outcome = LoginThrottle.Outcome.notEvaluated
        defer { throttle.settle(reservation, outcome, now: time.now()) }
        guard let account = try await store.account(id: user.id), !account.isDeleted else {
            throw DomainError(.unauthenticated, "The account of this session no longer exists.")
        }
        var correct = false
        if account.hasPassword {
            correct = try await hashing { try await hasher.verify(password, against: account.passwordHash) }
        }
        guard correct else {
            outcome = .failed
            throw DomainError(.permissionDenied, "current_password is wrong.")
        }
        outcome = .succeeded
        return account
    }

    /// The network address (without the port) of a peer given as `host:port` or `[v6]:port`: the key of
    /// the per-address limits.
    static func host(of peer: String) -> String {
        if peer.hasPrefix("["), let end = peer.firstIndex(of: "]") { return String(peer[...end]) }
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }
}
