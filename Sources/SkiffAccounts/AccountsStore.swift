public import Foundation
public import SkiffDomain

/// Persistence for the Accounts service: one method per use case, each atomic.
///
/// Every backend (``InMemoryAccountsStore``, the SQLite store, the PostgreSQL store) must behave exactly alike;
/// the shared conformance suite in `Tests/SkiffStorageTests` proves it.
///
/// ## Implementation requirements
/// - Each method is one atomic step: it either happens completely or not at all, and concurrent calls
///   behave as if they ran one after another.
/// - Failures the caller can act on are thrown as ``SkiffDomain/DomainError`` with the messages in
///   ``AccountsStoreError``; no backend type (SQL errors, rows) crosses this protocol.
/// - E-mail addresses are compared and stored in ``Account/normalizedEmail(_:)`` form.
/// - Dates are kept at millisecond precision (`Date.roundedToMilliseconds`); values read back are rounded.
/// - Inputs are already validated by ``AccountRules``. Uniqueness, existence, one-time token state and
///   the sign-up outcomes are decided by ``AccountLifecycle``: each write loads what its function needs,
///   calls it inside the transaction and saves what it returns, so a backend only stores and queries.
public protocol AccountsStore: Sendable {
    // MARK: Accounts

    /// Creates an account.
    ///
    /// - Returns: The account as stored (e-mail normalized, dates rounded).
    /// - Throws: `alreadyExists` if the e-mail address (compared case-insensitively) or the id is taken.
    func createAccount(_ account: Account) async throws -> Account

    /// Records a sign-up in one write, whatever the state of its address, so that every outcome costs the
    /// same store work (a sign-up's timing must not reveal whether an address is registered):
    /// - no account has the address: creates `account` and stores `token` for it → ``SignUpRegistration/created(_:)``;
    /// - an unverified account has it: drops that account's password (``Account/noPasswordHash``) and stores
    ///   `token` for it → ``SignUpRegistration/pending(_:)``;
    /// - a verified account has it: stores `token` for it already used (a harmless record of the attempt)
    ///   → ``SignUpRegistration/alreadyVerified(_:)``.
    ///
    /// `token.accountID` is ignored: the token is stored for the account that has the address.
    ///
    /// - Throws: `alreadyExists` if `account.id` or the token hash is taken.
    func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration

    /// The account with this id, or `nil`.
    func account(id: String) async throws -> Account?

    /// The account with this e-mail address (compared case-insensitively), or `nil`.
    func account(email: String) async throws -> Account?

    /// The accounts with these ids that exist, by id (at most ``PageRequest/maximumSize`` ids at a time are
    /// asked for by the service: a page's raters).
    func accounts(ids: Set<String>) async throws -> [String: Account]

    /// Applies profile changes.
    ///
    /// - Returns: The updated account.
    /// - Throws: `notFound` if there is no such account.
    func updateProfile(id: String, changes: ProfileChanges) async throws -> Account

    /// Adds one to an account's number of items sold.
    ///
    /// - Returns: The new count.
    /// - Throws: `notFound` if there is no such account.
    @discardableResult
    func incrementItemsSold(accountID: String) async throws -> Int

    /// Records that the seller completed a sale, adding one to their items sold the first time only:
    /// recording the same `saleID` again changes nothing.
    ///
    /// - Returns: The seller's items sold afterwards, and whether this call recorded the sale.
    /// - Throws: `notFound` if there is no such account; `alreadyExists`
    ///   (``AccountsStoreError/saleRecordedForAnotherSeller``) if the sale was recorded for someone else.
    func recordCompletedSale(saleID: String, sellerID: String, at date: Date) async throws -> CompletedSaleRecord

    /// Those of `imageIDs` that some account uses as its profile picture (images Listings must keep).
    func avatarImageIDs(among imageIDs: [String]) async throws -> Set<String>

    // MARK: One-time tokens and passwords

    /// Stores a one-time token (e-mail verification, password reset or e-mail change). An e-mail change
    /// token replaces the account's unused ones: they are deleted.
    ///
    /// - Throws: `notFound` if the account does not exist; `alreadyExists` if the hash is taken.
    func insertOneTimeToken(_ token: OneTimeToken) async throws

    /// Consumes an e-mail change token and gives its account the new address, verified, atomically
    /// (``AccountLifecycle/changeEmail(token:account:newEmailHolder:now:)``). Consuming also deletes the
    /// account's other e-mail change tokens and retires its unused reset tokens. Sessions stay.
    ///
    /// - Throws: as ``verifyEmail(tokenHash:now:)``, for e-mail change tokens; `alreadyExists` when another
    ///   account has the new address.
    func changeEmail(tokenHash: TokenHash, now: Date) async throws -> AccountLifecycle.EmailChange

    /// Logs a provider's user in (``AccountLifecycle/externalLogIn(linkedAccount:accountWithEmail:email:newAccount:accountIDTaken:)``),
    /// atomically: looks the link up, else the account with `email`, links or creates, and saves.
    ///
    /// - Parameters:
    ///   - identity: The provider's issuer and the user's subject there.
    ///   - email: The token's verified, allowed address, or `nil`.
    ///   - newAccount: The account to create when no account has the address.
    func logInExternally(
        _ identity: ExternalIdentity,
        email: String?,
        newAccount: Account,
        now: Date
    ) async throws -> AccountLifecycle.ExternalLogIn

    /// Erases an account (``AccountLifecycle/deleteAccount(_:now:)``) and deletes its sessions and one-time
    /// tokens and its links to external identity providers, atomically. Ratings, reports and recorded sales
    /// stay.
    ///
    /// - Returns: The erased account.
    /// - Throws: `notFound` if there is no such account or it was deleted already.
    func deleteAccount(id: String, now: Date) async throws -> Account

    /// Consumes an e-mail verification token and marks its account verified, atomically. A token that
    /// carries a sign-up's ``OneTimeToken/passwordHash`` or ``OneTimeToken/displayName`` sets them on the
    /// account in the same step.
    ///
    /// Consuming also deletes the account's other unused verification tokens. The token that verified the
    /// account can be used again until it expires (a second click on the link): that changes nothing and
    /// returns the account as it is (see ``AccountLifecycle/verifyEmail(token:account:now:)``).
    ///
    /// - Returns: The verified account.
    /// - Throws: `notFound` if the token is unknown or not a verification token; `failedPrecondition` if it
    ///   was used and did not verify the account, or has expired (`expiresAt <= now`).
    func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account

    /// Consumes a password-reset token, sets the new password hash, marks the account verified (the reset
    /// proved the address) and ends every session of the account, atomically.
    ///
    /// Consuming also retires the account's other unused reset tokens, and deletes its unused verification
    /// tokens (a pending sign-up's link must not set that sign-up's password afterwards).
    ///
    /// - Returns: The account, with the new hash.
    /// - Throws: as ``verifyEmail(tokenHash:now:)``, for reset tokens.
    func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account

    /// Sets a new password hash, ends every session of the account except `keepingSession`, and deletes the
    /// account's unused password-reset tokens (a reset requested before the change no longer works).
    ///
    /// - Parameter keepingSession: The session that made the change (it stays signed in), or `nil`.
    /// - Returns: The number of sessions ended.
    /// - Throws: `notFound` if there is no such account.
    @discardableResult
    func changePassword(accountID: String, newPasswordHash: String, keepingSession: TokenHash?) async throws -> Int

    // MARK: Sessions

    /// Stores a session.
    ///
    /// - Throws: `notFound` if the account does not exist; `alreadyExists` if the hash is taken.
    func createSession(_ session: Session) async throws

    /// The session with this token hash if it is still valid at `now` (`expiresAt > now`), else `nil`.
    func session(tokenHash: TokenHash, now: Date) async throws -> Session?

    /// Ends a session (signs out). Ending an unknown session is not an error.
    ///
    /// - Returns: Whether a session was ended.
    @discardableResult
    func deleteSession(tokenHash: TokenHash) async throws -> Bool

    /// Ends every session of an account.
    ///
    /// - Returns: The number of sessions ended.
    @discardableResult
    func deleteAllSessions(accountID: String) async throws -> Int

    /// Removes sessions and one-time tokens that expired at or before `now` (housekeeping).
    ///
    /// - Returns: The number of rows removed.
    @discardableResult
    func deleteExpired(now: Date) async throws -> Int

    // MARK: Search

    /// Finds people by display name.
    ///
    /// A name matches when ``Account/searchKey(_:)`` of `nameQuery` is a substring of the name's key
    /// (so matching ignores case and diacritics); an empty query matches everyone. Results are ordered by
    /// name key, then id, and paged by keyset: a page starts strictly after the last item of the previous
    /// one, so concurrent inserts cause neither duplicates nor gaps.
    ///
    /// - Throws: `invalidArgument` if the page token is not valid or belongs to another query.
    func searchUsers(nameQuery: String, page: PageRequest) async throws -> Page<Account>

    // MARK: Ratings and reports

    /// Records a rating.
    ///
    /// - Throws: `alreadyExists` if the sale was rated already; `notFound` if the seller or the buyer does not
    ///   exist (checked in that order).
    func addRating(_ rating: Rating) async throws

    /// A seller's ratings, newest first (ties broken by sale id, descending), paged by keyset.
    ///
    /// - Throws: `invalidArgument` if the page token is not valid or belongs to another seller.
    func ratings(sellerID: String, page: PageRequest) async throws -> Page<Rating>

    /// The number and total of a seller's ratings (zero for a seller with none, or no such seller).
    func ratingSummary(sellerID: String) async throws -> RatingSummary

    /// Records a report.
    ///
    /// - Throws: `alreadyExists` if the id is taken; `notFound` if the reporter or the reported account does
    ///   not exist; `alreadyExists` (``AccountsStoreError/reportAlreadyOpen``) if the reporter has an open
    ///   report about that account (checked in that order).
    func addReport(_ report: Report) async throws

    /// The reports about an account, oldest first (ties broken by id).
    func reports(reportedID: String) async throws -> [Report]
}

/// The errors every ``AccountsStore`` throws, so that all backends use the same codes and messages.
public enum AccountsStoreError {
    /// No account with the id given.
    public static let accountNotFound = DomainError(.notFound, "The account does not exist.")
    /// The seller of a rating does not exist.
    public static let sellerNotFound = DomainError(.notFound, "The seller's account does not exist.")
    /// The buyer of a rating does not exist.
    public static let buyerNotFound = DomainError(.notFound, "The buyer's account does not exist.")
    /// The reporter does not exist.
    public static let reporterNotFound = DomainError(.notFound, "The reporting account does not exist.")
    /// The reported account does not exist.
    public static let reportedNotFound = DomainError(.notFound, "The reported account does not exist.")
    /// The e-mail address is taken.
    public static let emailTaken = DomainError(.alreadyExists, "An account with this e-mail address already exists.")
    /// The account id is taken.
    public static let accountIDTaken = DomainError(.alreadyExists, "An account with this id already exists.")
    /// The session token hash is taken.
    public static let sessionTaken = DomainError(.alreadyExists, "This session already exists.")
    /// The one-time token hash is taken.
    public static let tokenTaken = DomainError(.alreadyExists, "This link already exists.")
    /// A completed sale was recorded for another seller.
    public static let saleRecordedForAnotherSeller = DomainError(
        .alreadyExists,
        "This sale was already recorded as completed for another seller."
    )
    /// The sale has a rating already.
    public static let saleAlreadyRated = DomainError(.alreadyExists, "This sale has already been rated.")
    /// The reporter has an open report about the account already.
    public static let reportAlreadyOpen = DomainError(
        .alreadyExists,
        "You already reported this user; the moderators have your report and will look at it."
    )
    /// The report id is taken.
    public static let reportIDTaken = DomainError(.alreadyExists, "A report with this id already exists.")
    /// The one-time token is unknown or of another kind.
    public static let linkNotValid = DomainError(.notFound, "This link is not valid. Request a new one.")
    /// An external log-in whose provider user is not linked and whose token has no usable address.
    public static let externalEmailUnusable = DomainError(
        .permissionDenied,
        "The identity provider did not give a verified e-mail address this server accepts."
    )
    /// The one-time token was used.
    public static let linkUsed = DomainError(.failedPrecondition, "This link has already been used.")
    /// The one-time token has expired.
    public static let linkExpired = DomainError(.failedPrecondition, "This link has expired. Request a new one.")
}

/// The result of ``AccountsStore/registerSignUp(_:token:)``: the account that has the address, and its state.
public enum SignUpRegistration: Hashable, Sendable {
    /// The address was new: this is the account created.
    case created(Account)
    /// The address has an unverified account (its password now dropped); the token was stored for it.
    case pending(Account)
    /// The address has a verified account; the token was stored already used.
    case alreadyVerified(Account)
}

/// The result of ``AccountsStore/recordCompletedSale(saleID:sellerID:at:)``.
public struct CompletedSaleRecord: Hashable, Sendable {
    /// The seller's number of items sold, the sale included.
    public var itemsSold: Int
    /// Whether this call recorded the sale (`false` for a repeat).
    public var newlyRecorded: Bool

    public init(itemsSold: Int, newlyRecorded: Bool) {
        self.itemsSold = itemsSold
        self.newlyRecorded = newlyRecorded
    }
}
