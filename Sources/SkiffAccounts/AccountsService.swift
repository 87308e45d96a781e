import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// The Accounts service: sign-up, verification, sessions, passwords, profiles, ratings, reports.
///
/// Domain rules live here and in ``AccountRules``; storage goes through ``AccountsStore``; the
/// wire types are converted at this edge only.
public struct AccountsService: Skiff_Accounts_V1_Accounts.ServiceProtocol {
    let store: any AccountsStore
    let hasher: PasswordHasher
    let mailer: any Mailer
    let sales: any SaleDirectory
    let blockedUsers: any BlockedUserDirectory
    let time: any TimeSource
    let configuration: AccountsConfiguration
    let rules: AccountRules
    let failedLogins: AttemptLimiter
    let failedLoginsByPeer: AttemptLimiter
    let emails: AttemptLimiter

    public init(
        store: any AccountsStore,
        hasher: PasswordHasher = PasswordHasher(),
        mailer: any Mailer,
        sales: any SaleDirectory = NoSales(),
        blockedUsers: any BlockedUserDirectory = NoBlockedUsers(),
        time: any TimeSource = SystemTimeSource(),
        configuration: AccountsConfiguration = AccountsConfiguration()
    ) {
        self.store = store
        self.hasher = hasher
        self.mailer = mailer
        self.sales = sales
        self.blockedUsers = blockedUsers
        self.time = time
        self.configuration = configuration
        self.rules = AccountRules(allowedEmailDomains: configuration.allowedEmailDomains)
        self.failedLogins = AttemptLimiter(
            limit: configuration.failedLoginsPerAccount,
            window: configuration.failedLoginWindow
        )
        self.failedLoginsByPeer = AttemptLimiter(
            limit: configuration.failedLoginsPerPeer,
            window: configuration.failedLoginWindow
        )
        self.emails = AttemptLimiter(limit: configuration.emailsPerAddressPerHour, window: .seconds(3600))
    }

    // MARK: Sign-up and verification

    public func signUp(
        request: Skiff_Accounts_V1_SignUpRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_SignUpResponse {
        let email = try rules.validateEmail(request.email)
        try AccountRules.validatePassword(request.password)
        let displayName = try AccountRules.validateDisplayName(request.displayName)
        let now = time.now()
        try rationEmail(to: email, now: now)
        // Hash before looking the address up, so both answers take the same time.
        let passwordHash = try await hasher.hash(request.password)
        let account = Account(
            id: EntityID.make(.account),
            email: email,
            displayName: displayName,
            passwordHash: passwordHash,
            createdAt: now
        )
        do {
            let created = try await store.createAccount(account)
            try await sendVerification(to: created, now: now)
        } catch let error as DomainError where error.code == .alreadyExists {
            guard let existing = try await store.account(email: email) else { throw error }
            if existing.verified {
                try await mailer.send(
                    MailMessage(
                        to: email,
                        subject: "Someone tried to sign up with your address",
                        body: "Someone tried to create a Skiff account with this address, which already has one. "
                            + "If it was you, log in instead, or reset your password if you forgot it."
                    )
                )
            } else {
                try await sendVerification(to: existing, now: now)
            }
        }
        return Skiff_Accounts_V1_SignUpResponse()
    }

    private func sendVerification(to account: Account, now: Date) async throws {
        try await sendToken(
            .emailVerification,
            lifetime: configuration.verificationTokenLifetime,
            to: account,
            now: now,
            subject: "Verify your Skiff account",
            text: "Welcome, \(account.displayName)! Confirm this address to start using Skiff.",
            label: "Verification token"
        )
    }

    /// Stores a new one-time token for the account and mails it, on a line `<label>: <token>`.
    private func sendToken(
        _ kind: OneTimeToken.Kind,
        lifetime: Duration,
        to account: Account,
        now: Date,
        subject: String,
        text: String,
        label: String
    ) async throws {
        let token = SecretToken.generate()
        try await store.insertOneTimeToken(
            OneTimeToken(
                tokenHash: token.hash,
                kind: kind,
                accountID: account.id,
                expiresAt: now.addingTimeInterval(lifetime.timeInterval),
                createdAt: now
            )
        )
        try await mailer.send(
            MailMessage(to: account.email, subject: subject, body: "\(text)\n\n\(label): \(token.value)\n")
        )
    }

    /// Counts an e-mail to an address against its hourly allowance.
    private func rationEmail(to email: String, now: Date) throws {
        try emails.check(["mail:" + email], now: now, what: "e-mails to this address")
        emails.record(["mail:" + email], now: now)
    }

    public func verifyEmail(
        request: Skiff_Accounts_V1_VerifyEmailRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_VerifyEmailResponse {
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
        let email = try rules.validateEmail(request.email)
        let now = time.now()
        try rationEmail(to: email, now: now)
        if let account = try await store.account(email: email), !account.verified {
            try await sendVerification(to: account, now: now)
        }
        return Skiff_Accounts_V1_ResendVerificationResponse()
    }

    // MARK: Sessions

    public func logIn(
        request: Skiff_Accounts_V1_LogInRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_LogInResponse {
        guard !request.email.isEmpty, !request.password.isEmpty else {
            throw DomainError(.invalidArgument, "email and password are both required.")
        }
        let email = Account.normalizedEmail(request.email)
        let now = time.now()
        let keys = ["login:" + email, "peer:" + Self.host(of: context.peer)]
        try failedLogins.check([keys[0]], now: now, what: "failed log-ins for this account")
        try failedLoginsByPeer.check([keys[1]], now: now, what: "failed log-ins from this address")
        let wrong = DomainError(.unauthenticated, "The e-mail address or password is wrong.")
        guard let account = try await store.account(email: email) else {
            try await hasher.simulateVerification(request.password)
            failedLogins.record([keys[0]], now: now)
            failedLoginsByPeer.record([keys[1]], now: now)
            throw wrong
        }
        guard try await hasher.verify(request.password, against: account.passwordHash) else {
            failedLogins.record([keys[0]], now: now)
            failedLoginsByPeer.record([keys[1]], now: now)
            throw wrong
        }
        guard account.verified else {
            throw DomainError(
                .failedPrecondition,
                "Verify your e-mail address first: use the token from the verification e-mail, "
                    + "or ask for a new one with ResendVerification."
            )
        }
        failedLogins.reset(keys[0])
        let lifetime = request.rememberMe ? configuration.rememberedSessionLifetime : configuration.sessionLifetime
        let token = SecretToken.generate()
        let expiresAt = now.addingTimeInterval(lifetime.timeInterval)
        try await store.createSession(
            Session(tokenHash: token.hash, accountID: account.id, expiresAt: expiresAt, createdAt: now)
        )
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
        let email = try rules.validateEmail(request.email)
        let now = time.now()
        try rationEmail(to: email, now: now)
        if let account = try await store.account(email: email) {
            try await sendToken(
                .passwordReset,
                lifetime: configuration.resetTokenLifetime,
                to: account,
                now: now,
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
        guard !request.token.isEmpty else {
            throw DomainError(.invalidArgument, "token is empty: use the token from the reset e-mail.")
        }
        try AccountRules.validatePassword(request.newPassword)
        let hash = try await hasher.hash(request.newPassword)
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
        let now = time.now()
        let key = "change:" + user.id
        try failedLogins.check([key], now: now, what: "wrong current passwords")
        guard let account = try await store.account(id: user.id) else {
            throw DomainError(.unauthenticated, "The account of this session no longer exists.")
        }
        try AccountRules.validatePassword(request.newPassword)
        guard try await hasher.verify(request.currentPassword, against: account.passwordHash) else {
            failedLogins.record([key], now: now)
            throw DomainError(.permissionDenied, "current_password is wrong.")
        }
        guard request.newPassword != request.currentPassword else {
            throw DomainError(.invalidArgument, "new_password must differ from the current password.")
        }
        let hash = try await hasher.hash(request.newPassword)
        _ = try await store.changePassword(
            accountID: user.id,
            newPasswordHash: hash,
            keepingSession: TokenHash(of: user.sessionToken)
        )
        return Skiff_Accounts_V1_ChangePasswordResponse()
    }

    static func host(of peer: String) -> String {
        if peer.hasPrefix("["), let end = peer.firstIndex(of: "]") { return String(peer[...end]) }
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }
}
