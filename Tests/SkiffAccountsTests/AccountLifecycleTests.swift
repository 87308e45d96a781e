import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

@Suite("Account lifecycle")
struct AccountLifecycleTests {
    static let created = Date(millisecondsSince1970: 1_767_225_600_000)
    /// A time with sub-millisecond digits, to see the decisions round it.
    static let now = Date(timeIntervalSince1970: 1_767_229_200.123_456)

    static func account(id: String = "usr_1", verified: Bool = false) -> Account {
        Account(
            id: id,
            email: "jane@campus.edu",
            displayName: "Jane",
            passwordHash: "hash",
            verified: verified,
            createdAt: created,
            itemsSold: 2
        )
    }

    static func token(
        _ kind: OneTimeToken.Kind = .emailVerification,
        accountID: String = "usr_1",
        expiresAt: Date = AccountLifecycleTests.now.addingTimeInterval(60),
        usedAt: Date? = nil
    ) -> OneTimeToken {
        OneTimeToken(
            tokenHash: TokenHash(rawValue: "abc"),
            kind: kind,
            accountID: accountID,
            expiresAt: expiresAt,
            createdAt: now,
            usedAt: usedAt,
            passwordHash: "signup-hash",
            displayName: "Jane Doe"
        )
    }

    // MARK: Accounts

    @Test("A new account is stored with its e-mail normalized and its date rounded")
    func createAccount() throws {
        var asked = Self.account()
        asked.email = "  Jane@Campus.EDU "
        asked.createdAt = Self.now
        let stored = try AccountLifecycle.createAccount(asked, emailTaken: false, accountIDTaken: false)
        #expect(stored.email == "jane@campus.edu")
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.emailTaken) {
            try AccountLifecycle.createAccount(asked, emailTaken: true, accountIDTaken: true)
        }
        #expect(throws: AccountsStoreError.accountIDTaken) {
            try AccountLifecycle.createAccount(asked, emailTaken: false, accountIDTaken: true)
        }
    }

    @Test("A sign-up for a new address creates the account, with the token for it")
    func signUpCreated() throws {
        let signUp = try AccountLifecycle.registerSignUp(
            Self.account(id: "usr_new"),
            token: Self.token(accountID: "ignored"),
            tokenTaken: false,
            existing: nil,
            accountIDTaken: false
        )
        #expect(signUp.registration == .created(Self.account(id: "usr_new")))
        #expect(signUp.token.accountID == "usr_new")
        #expect(signUp.token.usedAt == nil)
        #expect(signUp.token.createdAt == Self.now.roundedToMilliseconds)
    }

    @Test("A sign-up for an unverified address drops its password; for a verified one the token is used")
    func signUpExisting() throws {
        let pending = try AccountLifecycle.registerSignUp(
            Self.account(id: "usr_new"),
            token: Self.token(),
            tokenTaken: false,
            existing: Self.account(id: "usr_old"),
            accountIDTaken: true
        )
        var dropped = Self.account(id: "usr_old")
        dropped.passwordHash = Account.noPasswordHash
        #expect(pending.registration == .pending(dropped))
        #expect(pending.token.accountID == "usr_old")
        #expect(pending.token.usedAt == nil)

        let verified = try AccountLifecycle.registerSignUp(
            Self.account(id: "usr_new"),
            token: Self.token(),
            tokenTaken: false,
            existing: Self.account(id: "usr_old", verified: true),
            accountIDTaken: false
        )
        #expect(verified.registration == .alreadyVerified(Self.account(id: "usr_old", verified: true)))
        #expect(verified.token.accountID == "usr_old")
        #expect(verified.token.usedAt == Self.now.roundedToMilliseconds)
    }

    @Test("A sign-up checks the token hash first, then, for a new address, the account id")
    func signUpErrors() {
        #expect(throws: AccountsStoreError.tokenTaken) {
            try AccountLifecycle.registerSignUp(
                Self.account(),
                token: Self.token(),
                tokenTaken: true,
                existing: nil,
                accountIDTaken: true
            )
        }
        #expect(throws: AccountsStoreError.accountIDTaken) {
            try AccountLifecycle.registerSignUp(
                Self.account(),
                token: Self.token(),
                tokenTaken: false,
                existing: nil,
                accountIDTaken: true
            )
        }
    }

    @Test("Profile changes apply to an existing account")
    func updateProfile() throws {
        let updated = try AccountLifecycle.updateProfile(
            Self.account(),
            changes: ProfileChanges(bio: "Hi", zipCode: "")
        )
        #expect(updated.bio == "Hi")
        #expect(updated.zipCode == nil)
        #expect(throws: AccountsStoreError.accountNotFound) {
            try AccountLifecycle.updateProfile(nil, changes: ProfileChanges(bio: "Hi"))
        }
    }

    @Test("Items sold grow by one; a completed sale counts once, for its own seller only")
    func itemsSold() throws {
        #expect(try AccountLifecycle.incrementItemsSold(2) == 3)
        #expect(throws: AccountsStoreError.accountNotFound) { try AccountLifecycle.incrementItemsSold(nil) }

        let first = try AccountLifecycle.recordCompletedSale(sellerID: "usr_1", itemsSold: 2, recordedSellerID: nil)
        #expect(first == CompletedSaleRecord(itemsSold: 3, newlyRecorded: true))
        let again = try AccountLifecycle.recordCompletedSale(sellerID: "usr_1", itemsSold: 3, recordedSellerID: "usr_1")
        #expect(again == CompletedSaleRecord(itemsSold: 3, newlyRecorded: false))
        #expect(throws: AccountsStoreError.saleRecordedForAnotherSeller) {
            try AccountLifecycle.recordCompletedSale(sellerID: "usr_1", itemsSold: 3, recordedSellerID: "usr_2")
        }
        #expect(throws: AccountsStoreError.accountNotFound) {
            try AccountLifecycle.recordCompletedSale(sellerID: "usr_1", itemsSold: nil, recordedSellerID: "usr_2")
        }
    }

    // MARK: Tokens and passwords

    @Test("A one-time token is stored rounded; its account must exist, then its hash be free")
    func insertOneTimeToken() throws {
        let stored = try AccountLifecycle.insertOneTimeToken(
            Self.token(usedAt: Self.now),
            accountExists: true,
            tokenTaken: false
        )
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(stored.usedAt == Self.now.roundedToMilliseconds)
        #expect(stored.expiresAt == Self.now.addingTimeInterval(60).roundedToMilliseconds)
        #expect(throws: AccountsStoreError.accountNotFound) {
            try AccountLifecycle.insertOneTimeToken(Self.token(), accountExists: false, tokenTaken: true)
        }
        #expect(throws: AccountsStoreError.tokenTaken) {
            try AccountLifecycle.insertOneTimeToken(Self.token(), accountExists: true, tokenTaken: true)
        }
    }

    @Test("Verifying an e-mail verifies the account and applies the sign-up's password and name")
    func verifyEmail() throws {
        let consumption = try #require(
            try AccountLifecycle.verifyEmail(token: Self.token(), account: Self.account(), now: Self.now)
        )
        #expect(consumption.usedAt == Self.now.roundedToMilliseconds)
        #expect(consumption.account.verified)
        #expect(consumption.account.passwordHash == "signup-hash")
        #expect(consumption.account.displayName == "Jane Doe")
    }

    @Test("The token that verified the account works again until it expires, changing nothing")
    func verifyEmailAgain() throws {
        var verified = Self.account()
        verified.verified = true
        let used = Self.token(usedAt: Self.created)
        #expect(try AccountLifecycle.verifyEmail(token: used, account: verified, now: Self.now) == nil)
        // Expired (at `now` exactly): refused like any other use of a used link.
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.verifyEmail(
                token: Self.token(expiresAt: Self.now.roundedToMilliseconds, usedAt: Self.created),
                account: verified,
                now: Self.now
            )
        }
        // An unused token of an account verified by other means (a reset) is retired: it sets nothing.
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.verifyEmail(token: Self.token(), account: verified, now: Self.now)
        }
        // A used token of an account that is not verified, or of another account, is refused.
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.verifyEmail(token: used, account: Self.account(), now: Self.now)
        }
        var stranger = verified
        stranger.id = "usr_2"
        #expect(throws: AccountsStoreError.linkNotValid) {
            try AccountLifecycle.verifyEmail(token: used, account: stranger, now: Self.now)
        }
        // A reset token is never "used again".
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.resetPassword(
                token: Self.token(.passwordReset, usedAt: Self.created),
                account: verified,
                newPasswordHash: "h",
                now: Self.now
            )
        }
    }

    @Test("A sign-up for a verified address stores a token born used and expired: it never verifies")
    func signUpForVerifiedAddress() throws {
        var verified = Self.account()
        verified.verified = true
        let decision = try AccountLifecycle.registerSignUp(
            Self.account(),
            token: Self.token(),
            tokenTaken: false,
            existing: verified,
            accountIDTaken: false
        )
        #expect(decision.token.usedAt == Self.now.roundedToMilliseconds)
        #expect(decision.token.expiresAt == Self.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.verifyEmail(token: decision.token, account: verified, now: Self.now)
        }
    }

    @Test("A password reset sets the new hash and verifies the account")
    func resetPassword() throws {
        let consumption = try AccountLifecycle.resetPassword(
            token: Self.token(.passwordReset),
            account: Self.account(),
            newPasswordHash: "new-hash",
            now: Self.now
        )
        #expect(consumption.account.passwordHash == "new-hash")
        #expect(consumption.account.verified)
        #expect(consumption.account.displayName == "Jane")
        #expect(consumption.usedAt == Self.now.roundedToMilliseconds)
    }

    @Test("A link is checked: known, of its kind, with an account; then unused; then unexpired")
    func linkErrors() {
        #expect(throws: AccountsStoreError.linkNotValid) {
            try AccountLifecycle.verifyEmail(token: nil, account: Self.account(), now: Self.now)
        }
        #expect(throws: AccountsStoreError.linkNotValid) {
            try AccountLifecycle.verifyEmail(token: Self.token(.passwordReset), account: Self.account(), now: Self.now)
        }
        #expect(throws: AccountsStoreError.linkNotValid) {
            try AccountLifecycle.resetPassword(
                token: Self.token(),
                account: Self.account(),
                newPasswordHash: "h",
                now: Self.now
            )
        }
        #expect(throws: AccountsStoreError.linkNotValid) {
            try AccountLifecycle.verifyEmail(token: Self.token(usedAt: Self.created), account: nil, now: Self.now)
        }
        #expect(throws: AccountsStoreError.linkUsed) {
            try AccountLifecycle.verifyEmail(
                token: Self.token(expiresAt: Self.created, usedAt: Self.created),
                account: Self.account(),
                now: Self.now
            )
        }
        // Expired at `now` exactly (at millisecond precision).
        #expect(throws: AccountsStoreError.linkExpired) {
            try AccountLifecycle.verifyEmail(
                token: Self.token(expiresAt: Self.now.roundedToMilliseconds),
                account: Self.account(),
                now: Self.now
            )
        }
    }

    @Test("A password change needs the account")
    func changePassword() throws {
        #expect(try AccountLifecycle.changePassword(Self.account(), newPasswordHash: "new").passwordHash == "new")
        #expect(throws: AccountsStoreError.accountNotFound) {
            try AccountLifecycle.changePassword(nil, newPasswordHash: "new")
        }
    }

    // MARK: Sessions, ratings, reports

    @Test("A session is stored rounded; its account must exist, then its hash be free")
    func createSession() throws {
        let session = Session(
            tokenHash: TokenHash(rawValue: "s"),
            accountID: "usr_1",
            expiresAt: Self.now,
            createdAt: Self.now
        )
        let stored = try AccountLifecycle.createSession(session, accountExists: true, sessionTaken: false)
        #expect(stored.expiresAt == Self.now.roundedToMilliseconds)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.accountNotFound) {
            try AccountLifecycle.createSession(session, accountExists: false, sessionTaken: true)
        }
        #expect(throws: AccountsStoreError.sessionTaken) {
            try AccountLifecycle.createSession(session, accountExists: true, sessionTaken: true)
        }
    }

    @Test("A rating checks the sale, then the seller, then the buyer")
    func addRating() throws {
        let rating = Rating(saleID: "sal_1", sellerID: "usr_1", buyerID: "usr_2", stars: 5, createdAt: Self.now)
        let stored = try AccountLifecycle.addRating(rating, saleRated: false, sellerExists: true, buyerExists: true)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.saleAlreadyRated) {
            try AccountLifecycle.addRating(rating, saleRated: true, sellerExists: false, buyerExists: false)
        }
        #expect(throws: AccountsStoreError.sellerNotFound) {
            try AccountLifecycle.addRating(rating, saleRated: false, sellerExists: false, buyerExists: false)
        }
        #expect(throws: AccountsStoreError.buyerNotFound) {
            try AccountLifecycle.addRating(rating, saleRated: false, sellerExists: true, buyerExists: false)
        }
    }

    @Test("A report checks its id, then the reporter, then the reported account")
    func addReport() throws {
        let report = Report(
            id: "rep_1",
            reporterID: "usr_1",
            reportedID: "usr_2",
            reason: "scam",
            details: "",
            createdAt: Self.now
        )
        let stored = try AccountLifecycle.addReport(
            report,
            reportIDTaken: false,
            reporterExists: true,
            reportedExists: true,
            reportOpen: false
        )
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.reportIDTaken) {
            try AccountLifecycle.addReport(
                report,
                reportIDTaken: true,
                reporterExists: false,
                reportedExists: false,
                reportOpen: true
            )
        }
        #expect(throws: AccountsStoreError.reporterNotFound) {
            try AccountLifecycle.addReport(
                report,
                reportIDTaken: false,
                reporterExists: false,
                reportedExists: false,
                reportOpen: true
            )
        }
        #expect(throws: AccountsStoreError.reportedNotFound) {
            try AccountLifecycle.addReport(
                report,
                reportIDTaken: false,
                reporterExists: true,
                reportedExists: false,
                reportOpen: true
            )
        }
        #expect(throws: AccountsStoreError.reportAlreadyOpen) {
            try AccountLifecycle.addReport(
                report,
                reportIDTaken: false,
                reporterExists: true,
                reportedExists: true,
                reportOpen: true
            )
        }
    }
}

@Suite("Account lifecycle: e-mail change and deletion")
struct AccountEmailChangeAndDeletionTests {
    typealias T = AccountLifecycleTests

    static func changeToken(newEmail: String? = "New@Campus.edu") -> OneTimeToken {
        var token = T.token(.emailChange)
        token.newEmail = newEmail
        return token
    }

    @Test("An e-mail change token gives the account its normalized new address, verified; another holder refuses it")
    func changeEmail() throws {
        let account = T.account(verified: true)
        let change = try AccountLifecycle.changeEmail(
            token: Self.changeToken(),
            account: account,
            newEmailHolder: nil,
            now: T.now
        )
        #expect(change.account.email == "new@campus.edu" && change.account.verified)
        #expect(change.previousEmail == "jane@campus.edu")
        #expect(change.usedAt == T.now.roundedToMilliseconds)
        #expect(throws: AccountsStoreError.emailTaken) {
            _ = try AccountLifecycle.changeEmail(
                token: Self.changeToken(),
                account: account,
                newEmailHolder: T.account(id: "usr_2", verified: true),
                now: T.now
            )
        }
        // A never-verified holder (a pending sign-up) is released.
        let releasing = try AccountLifecycle.changeEmail(
            token: Self.changeToken(),
            account: account,
            newEmailHolder: T.account(id: "usr_2", verified: false),
            now: T.now
        )
        #expect(releasing.releasedAccountID == "usr_2")
        // The account's own address (already its) is no conflict; wrong kinds and deleted accounts are not valid.
        _ = try AccountLifecycle.changeEmail(
            token: Self.changeToken(),
            account: account,
            newEmailHolder: account,
            now: T.now
        )
        #expect(throws: AccountsStoreError.linkNotValid) {
            _ = try AccountLifecycle.changeEmail(
                token: T.token(.passwordReset),
                account: account,
                newEmailHolder: nil,
                now: T.now
            )
        }
        #expect(throws: AccountsStoreError.linkNotValid) {
            _ = try AccountLifecycle.changeEmail(
                token: Self.changeToken(newEmail: nil),
                account: account,
                newEmailHolder: nil,
                now: T.now
            )
        }
        let erased = try AccountLifecycle.deleteAccount(account, now: T.now)
        #expect(throws: AccountsStoreError.linkNotValid) {
            _ = try AccountLifecycle.changeEmail(
                token: Self.changeToken(),
                account: erased,
                newEmailHolder: nil,
                now: T.now
            )
        }
    }

    @Test("Deleting erases everything personal and keeps the id, dates and counts; twice is NOT_FOUND")
    func delete() throws {
        var account = T.account(verified: true)
        account.bio = "Bio"
        account.avatarImageID = "img_1"
        account.paymentHandle = "@jane"
        account.zipCode = "92093"
        let erased = try AccountLifecycle.deleteAccount(account, now: T.now)
        #expect(erased.id == account.id && erased.createdAt == account.createdAt && erased.itemsSold == 2)
        #expect(erased.displayName == "Deleted user" && erased.storedSearchKey.isEmpty)
        #expect(
            erased.bio.isEmpty && erased.avatarImageID == nil && erased.paymentHandle == nil && erased.zipCode == nil
        )
        #expect(!erased.hasPassword && !erased.verified && erased.deletedAt == T.now.roundedToMilliseconds)
        #expect(erased.email == Account.erasedEmail(id: account.id))
        #expect(Account.erasedEmail(id: "usr_aB") != Account.erasedEmail(id: "usr_Ab"))
        #expect(throws: AccountsStoreError.accountNotFound) {
            _ = try AccountLifecycle.deleteAccount(erased, now: T.now)
        }
        #expect(throws: AccountsStoreError.accountNotFound) { _ = try AccountLifecycle.deleteAccount(nil, now: T.now) }
    }
}
