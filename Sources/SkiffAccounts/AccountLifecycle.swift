public import Foundation
public import SkiffDomain

/// The rules of accounts, sign-ups, one-time tokens, sessions, ratings and reports, as pure functions
/// over values: every ``AccountsStore`` backend loads what a function needs, calls it inside its
/// transaction (or critical section) and saves what it returns, so all backends decide alike.
///
/// Each function checks its rules in the order ``AccountsStore`` documents and throws the values in
/// ``AccountsStoreError``. Look-ups by e-mail use ``Account/normalizedEmail(_:)``.
public enum AccountLifecycle {
    /// The result of ``registerSignUp(_:token:tokenTaken:existing:accountIDTaken:)``.
    public struct SignUp: Hashable, Sendable {
        /// What happened, with the account to save: insert it for `.created`, store its dropped password
        /// for `.pending`, nothing for `.alreadyVerified`.
        public var registration: SignUpRegistration
        /// The token to insert, for the account that has the address (already used for `.alreadyVerified`).
        public var token: OneTimeToken

        /// Creates a sign-up decision.
        public init(registration: SignUpRegistration, token: OneTimeToken) {
            self.registration = registration
            self.token = token
        }
    }

    /// The result of consuming a one-time token (``verifyEmail(token:account:now:)`` and
    /// ``resetPassword(token:account:newPasswordHash:now:)``).
    public struct Consumption: Hashable, Sendable {
        /// The account after the change, to save.
        public var account: Account
        /// When the token was used: the store marks this token used at this time, and retires the account's
        /// other unused tokens: verification tokens are deleted whichever kind was used, reset tokens are
        /// marked used when a reset token was used.
        public var usedAt: Date

        /// Creates a consumption.
        public init(account: Account, usedAt: Date) {
            self.account = account
            self.usedAt = usedAt
        }
    }

    // MARK: Accounts

    /// Decides a new account.
    ///
    /// - Parameters:
    ///   - emailTaken: Whether an account has the account's e-mail address (normalized).
    ///   - accountIDTaken: Whether an account has the account's id.
    /// - Returns: The account to insert: e-mail normalized, creation date rounded to milliseconds.
    /// - Throws: `alreadyExists` (``AccountsStoreError/emailTaken``, then ``AccountsStoreError/accountIDTaken``).
    public static func createAccount(
        _ account: Account,
        emailTaken: Bool,
        accountIDTaken: Bool
    ) throws(DomainError) -> Account {
        guard !emailTaken else { throw AccountsStoreError.emailTaken }
        guard !accountIDTaken else { throw AccountsStoreError.accountIDTaken }
        return stored(account)
    }

    /// Decides a sign-up, whatever the state of its address (see
    /// ``AccountsStore/registerSignUp(_:token:)``).
    ///
    /// - Parameters:
    ///   - account: The account to create if the address is new.
    ///   - token: The verification token; its `accountID` is ignored.
    ///   - tokenTaken: Whether a one-time token has the token's hash.
    ///   - existing: The account that has the address (normalized), if any.
    ///   - accountIDTaken: Whether an account has `account`'s id.
    /// - Returns: The registration (with the account to save) and the token to insert.
    /// - Throws: `alreadyExists` (``AccountsStoreError/tokenTaken``) if the token hash is taken; then, for a new
    ///   address, `alreadyExists` (``AccountsStoreError/accountIDTaken``) if the id is taken.
    public static func registerSignUp(
        _ account: Account,
        token: OneTimeToken,
        tokenTaken: Bool,
        existing: Account?,
        accountIDTaken: Bool
    ) throws(DomainError) -> SignUp {
        guard !tokenTaken else { throw AccountsStoreError.tokenTaken }
        var token = stored(token)
        guard var existing else {
            guard !accountIDTaken else { throw AccountsStoreError.accountIDTaken }
            let created = stored(account)
            token.accountID = created.id
            return SignUp(registration: .created(created), token: token)
        }
        token.accountID = existing.id
        if existing.verified {
            // Born used and expired: the token is never mailed, and never counts as the one that verified.
            token.usedAt = token.createdAt
            token.expiresAt = token.createdAt
            return SignUp(registration: .alreadyVerified(existing), token: token)
        }
        existing.passwordHash = Account.noPasswordHash
        return SignUp(registration: .pending(existing), token: token)
    }

    /// Decides a profile change.
    ///
    /// - Parameter account: The account as stored, or `nil` if there is none.
    /// - Returns: The updated account, to save.
    /// - Throws: `notFound` if there is no such account.
    public static func updateProfile(_ account: Account?, changes: ProfileChanges) throws(DomainError) -> Account {
        guard let account, !account.isDeleted else { throw AccountsStoreError.accountNotFound }
        return account.applying(changes)
    }

    /// Decides adding one to an account's number of items sold.
    ///
    /// - Parameter itemsSold: The account's number of items sold, or `nil` if there is no such account.
    /// - Returns: The new count, to save.
    /// - Throws: `notFound` if there is no such account.
    public static func incrementItemsSold(_ itemsSold: Int?) throws(DomainError) -> Int {
        guard let itemsSold else { throw AccountsStoreError.accountNotFound }
        return itemsSold + 1
    }

    /// Decides recording a completed sale: the first time only, it adds one to the seller's items sold.
    ///
    /// - Parameters:
    ///   - itemsSold: The seller's number of items sold, or `nil` if there is no such account.
    ///   - recordedSellerID: The seller the sale was recorded for already, if it was.
    /// - Returns: The seller's items sold afterwards and whether to record the sale (`newlyRecorded`: insert
    ///   it and save the new count).
    /// - Throws: `notFound` if there is no such account; `alreadyExists`
    ///   (``AccountsStoreError/saleRecordedForAnotherSeller``) if the sale was recorded for someone else.
    public static func recordCompletedSale(
        sellerID: String,
        itemsSold: Int?,
        recordedSellerID: String?
    ) throws(DomainError) -> CompletedSaleRecord {
        guard let itemsSold else { throw AccountsStoreError.accountNotFound }
        if let recordedSellerID {
            guard recordedSellerID == sellerID else { throw AccountsStoreError.saleRecordedForAnotherSeller }
            return CompletedSaleRecord(itemsSold: itemsSold, newlyRecorded: false)
        }
        return CompletedSaleRecord(itemsSold: itemsSold + 1, newlyRecorded: true)
    }

    // MARK: One-time tokens and passwords

    /// Decides storing a one-time token.
    ///
    /// - Returns: The token to insert, its dates rounded to milliseconds.
    /// - Throws: `notFound` if the account does not exist; `alreadyExists` if the hash is taken.
    public static func insertOneTimeToken(
        _ token: OneTimeToken,
        accountExists: Bool,
        tokenTaken: Bool
    ) throws(DomainError) -> OneTimeToken {
        guard accountExists else { throw AccountsStoreError.accountNotFound }
        guard !tokenTaken else { throw AccountsStoreError.tokenTaken }
        return stored(token)
    }

    /// Decides consuming an e-mail verification token: the account becomes verified and takes the
    /// sign-up's password hash and display name the token carries.
    ///
    /// Using the token that verified the account again (a second click on the link) succeeds without changing
    /// anything until the token expires: the result is then `nil`, and the store saves nothing. The store
    /// deletes the account's other verification tokens when one is consumed, so only the token that verified
    /// the account answers so.
    ///
    /// - Parameters:
    ///   - token: The token with the hash presented, or `nil` if there is none.
    ///   - account: The token's account, or `nil` if there is none.
    /// - Returns: The consumption to save, or `nil` when the token already verified the account.
    /// - Throws: `notFound` (``AccountsStoreError/linkNotValid``) if the token is unknown, of another kind or
    ///   its account is gone; `failedPrecondition` if it was used and its account is not verified, or it is
    ///   unused and its account is verified already (``AccountsStoreError/linkUsed``: retired), or it has
    ///   expired (``AccountsStoreError/linkExpired``, `expiresAt <= now`).
    public static func verifyEmail(
        token: OneTimeToken?,
        account: Account?,
        now: Date
    ) throws(DomainError) -> Consumption? {
        if let token, token.kind == .emailVerification, token.usedAt != nil, let account,
            account.id == token.accountID, account.verified, token.expiresAt > now.roundedToMilliseconds
        {
            return nil
        }
        let (token, account, usedAt) = try consume(token, kind: .emailVerification, account: account, now: now)
        // An unused link of an account verified by other means (a reset, a link resent while another was
        // being used) is retired: it must never set the password or name it carries.
        guard !account.verified else { throw AccountsStoreError.linkUsed }
        var verified = account
        verified.verified = true
        if let hash = token.passwordHash { verified.passwordHash = hash }
        if let name = token.displayName { verified.displayName = name }
        return Consumption(account: verified, usedAt: usedAt)
    }

    /// Decides consuming a password-reset token: the account takes the new password hash and becomes
    /// verified (the store also ends every session of the account).
    ///
    /// - Throws: as ``verifyEmail(token:account:now:)``, for reset tokens.
    public static func resetPassword(
        token: OneTimeToken?,
        account: Account?,
        newPasswordHash: String,
        now: Date
    ) throws(DomainError) -> Consumption {
        let (_, account, usedAt) = try consume(token, kind: .passwordReset, account: account, now: now)
        var reset = account
        reset.passwordHash = newPasswordHash
        reset.verified = true
        return Consumption(account: reset, usedAt: usedAt)
    }

    /// The result of ``changeEmail(token:account:newEmailHolder:now:)``.
    public struct EmailChange: Hashable, Sendable {
        /// The account with its new address, verified, to save.
        public var account: Account
        /// The address it had, to tell.
        public var previousEmail: String
        /// A never-verified account that held the new address (a pending sign-up, which proved nothing):
        /// the store deletes it, with its tokens, so the address is free. `nil` when there is none.
        public var releasedAccountID: String?
        /// When the token was used: the store marks it used then, deletes the account's other e-mail change
        /// tokens and marks its unused reset tokens used (they were mailed to the previous address).
        public var usedAt: Date

        public init(account: Account, previousEmail: String, releasedAccountID: String? = nil, usedAt: Date) {
            self.account = account
            self.previousEmail = previousEmail
            self.releasedAccountID = releasedAccountID
            self.usedAt = usedAt
        }
    }

    /// Decides consuming an e-mail change token: the account takes the token's new address, verified.
    ///
    /// - Parameters:
    ///   - token: The token with the hash presented, or `nil`.
    ///   - account: The token's account, or `nil`.
    ///   - newEmailHolder: The account that has the token's new address, if any.
    /// - Throws: as ``verifyEmail(token:account:now:)`` for e-mail change tokens (a token of a deleted account
    ///   is not valid); `alreadyExists` (``AccountsStoreError/emailTaken``) when another, verified account has
    ///   the new address. A never-verified one (a pending sign-up) is released instead: the token proves the
    ///   mailbox, as verifying would.
    public static func changeEmail(
        token: OneTimeToken?,
        account: Account?,
        newEmailHolder: Account?,
        now: Date
    ) throws(DomainError) -> EmailChange {
        let (token, account, usedAt) = try consume(token, kind: .emailChange, account: account, now: now)
        guard let newEmail = token.newEmail else { throw AccountsStoreError.linkNotValid }
        var released: String?
        if let holder = newEmailHolder, holder.id != account.id {
            guard !holder.verified, !holder.isDeleted else { throw AccountsStoreError.emailTaken }
            released = holder.id
        }
        var changed = account
        changed.email = Account.normalizedEmail(newEmail)
        changed.verified = true
        return EmailChange(account: changed, previousEmail: account.email, releasedAccountID: released, usedAt: usedAt)
    }

    /// Decides deleting an account: everything personal is erased (address, password, bio, picture,
    /// payment handle, zip code), the name becomes ``Account/deletedDisplayName``; the id, dates and counts
    /// stay. The store also deletes the account's sessions and one-time tokens.
    ///
    /// - Throws: `notFound` if there is no such account or it is deleted already.
    public static func deleteAccount(_ account: Account?, now: Date) throws(DomainError) -> Account {
        guard let account, !account.isDeleted else { throw AccountsStoreError.accountNotFound }
        var erased = Account(
            id: account.id,
            email: Account.erasedEmail(id: account.id),
            displayName: Account.deletedDisplayName,
            passwordHash: Account.noPasswordHash,
            verified: false,
            createdAt: account.createdAt,
            itemsSold: account.itemsSold
        )
        erased.deletedAt = now.roundedToMilliseconds
        return erased
    }

    /// What a log-in through an external identity provider does (``externalLogIn(linkedAccount:accountWithEmail:email:newAccount:accountIDTaken:)``).
    public enum ExternalLogIn: Hashable, Sendable {
        /// The provider's user is linked to this account already: nothing to save.
        case linked(Account)
        /// The account with the token's verified address: save it (verified; if it was not, without the
        /// password a sign-up set, whose pending verification tokens the store deletes), and link it.
        case linking(Account)
        /// No account has the address: insert this one (verified, no password) and link it.
        case creating(Account)

        /// The account logged in.
        public var account: Account {
            switch self {
            case .linked(let account), .linking(let account), .creating(let account): account
            }
        }
    }

    /// Decides a log-in through an external identity provider whose ID token was verified.
    ///
    /// - Parameters:
    ///   - linkedAccount: The account linked to the token's issuer and subject, if any.
    ///   - accountWithEmail: The account with `email`, if any.
    ///   - email: The token's address when the provider verified it and it passes the domain allow-list
    ///     (normalized), else `nil`.
    ///   - newAccount: The account to create when no account has the address.
    ///   - accountIDTaken: Whether `newAccount`'s id is taken.
    /// - Throws: `permissionDenied` (``AccountsStoreError/externalEmailUnusable``) when the provider's user
    ///   is not linked and `email` is `nil`; `alreadyExists` if the new account's id is taken.
    public static func externalLogIn(
        linkedAccount: Account?,
        accountWithEmail: Account?,
        email: String?,
        newAccount: Account,
        accountIDTaken: Bool
    ) throws(DomainError) -> ExternalLogIn {
        if let linkedAccount, !linkedAccount.isDeleted { return .linked(linkedAccount) }
        guard let email else { throw AccountsStoreError.externalEmailUnusable }
        if var account = accountWithEmail, !account.isDeleted {
            if !account.verified {
                // The provider proved the address, as a reset does; a pending sign-up's password must not
                // come with it.
                account.verified = true
                account.passwordHash = Account.noPasswordHash
            }
            return .linking(account)
        }
        guard !accountIDTaken else { throw AccountsStoreError.accountIDTaken }
        var created = stored(newAccount)
        created.email = Account.normalizedEmail(email)
        created.verified = true
        created.passwordHash = Account.noPasswordHash
        return .creating(created)
    }

    /// Decides a password change (the store also ends the account's other sessions and deletes its unused
    /// password-reset tokens).
    ///
    /// - Parameter account: The account as stored, or `nil` if there is none.
    /// - Returns: The account with the new hash, to save.
    /// - Throws: `notFound` if there is no such account.
    public static func changePassword(_ account: Account?, newPasswordHash: String) throws(DomainError) -> Account {
        guard var account else { throw AccountsStoreError.accountNotFound }
        account.passwordHash = newPasswordHash
        return account
    }

    // MARK: Sessions

    /// Decides storing a session.
    ///
    /// - Returns: The session to insert, its dates rounded to milliseconds.
    /// - Throws: `notFound` if the account does not exist; `alreadyExists` if the hash is taken.
    public static func createSession(
        _ session: Session,
        accountExists: Bool,
        sessionTaken: Bool
    ) throws(DomainError) -> Session {
        guard accountExists else { throw AccountsStoreError.accountNotFound }
        guard !sessionTaken else { throw AccountsStoreError.sessionTaken }
        var stored = session
        stored.expiresAt = session.expiresAt.roundedToMilliseconds
        stored.createdAt = session.createdAt.roundedToMilliseconds
        return stored
    }

    // MARK: Ratings and reports

    /// Decides recording a rating.
    ///
    /// - Returns: The rating to insert, its date rounded to milliseconds.
    /// - Throws: `alreadyExists` if the sale was rated already; `notFound` if the seller or the buyer does not
    ///   exist (checked in that order).
    public static func addRating(
        _ rating: Rating,
        saleRated: Bool,
        sellerExists: Bool,
        buyerExists: Bool
    ) throws(DomainError) -> Rating {
        guard !saleRated else { throw AccountsStoreError.saleAlreadyRated }
        guard sellerExists else { throw AccountsStoreError.sellerNotFound }
        guard buyerExists else { throw AccountsStoreError.buyerNotFound }
        var stored = rating
        stored.createdAt = rating.createdAt.roundedToMilliseconds
        return stored
    }

    /// Decides recording a report.
    ///
    /// Every report stays open (no moderation RPC closes one yet), so a reporter has at most one report about
    /// each user.
    ///
    /// - Parameter reportOpen: Whether the reporter already has an open report about the reported account.
    /// - Returns: The report to insert, its date rounded to milliseconds.
    /// - Throws: `alreadyExists` if the id is taken; `notFound` if the reporter or the reported account does
    ///   not exist; `alreadyExists` (``AccountsStoreError/reportAlreadyOpen``) if the reporter has an open
    ///   report about that account (checked in that order).
    public static func addReport(
        _ report: Report,
        reportIDTaken: Bool,
        reporterExists: Bool,
        reportedExists: Bool,
        reportOpen: Bool
    ) throws(DomainError) -> Report {
        guard !reportIDTaken else { throw AccountsStoreError.reportIDTaken }
        guard reporterExists else { throw AccountsStoreError.reporterNotFound }
        guard reportedExists else { throw AccountsStoreError.reportedNotFound }
        guard !reportOpen else { throw AccountsStoreError.reportAlreadyOpen }
        var stored = report
        stored.createdAt = report.createdAt.roundedToMilliseconds
        return stored
    }

    // MARK: Helpers

    /// An account as stores keep it: e-mail normalized, creation date rounded.
    private static func stored(_ account: Account) -> Account {
        var stored = account
        stored.email = Account.normalizedEmail(account.email)
        stored.createdAt = account.createdAt.roundedToMilliseconds
        return stored
    }

    /// A one-time token as stores keep it: dates rounded.
    private static func stored(_ token: OneTimeToken) -> OneTimeToken {
        var stored = token
        stored.expiresAt = token.expiresAt.roundedToMilliseconds
        stored.createdAt = token.createdAt.roundedToMilliseconds
        stored.usedAt = token.usedAt?.roundedToMilliseconds
        return stored
    }

    /// Checks a one-time token of `kind` presented at `now`.
    private static func consume(
        _ token: OneTimeToken?,
        kind: OneTimeToken.Kind,
        account: Account?,
        now: Date
    ) throws(DomainError) -> (token: OneTimeToken, account: Account, usedAt: Date) {
        let now = now.roundedToMilliseconds
        guard let token, token.kind == kind, let account, account.id == token.accountID, !account.isDeleted else {
            throw AccountsStoreError.linkNotValid
        }
        guard token.usedAt == nil else { throw AccountsStoreError.linkUsed }
        guard token.expiresAt > now else { throw AccountsStoreError.linkExpired }
        return (token, account, now)
    }
}
