import Foundation
import SkiffDomain
import Synchronization

/// An ``AccountsStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one `Mutex`, and every method runs in a single critical section without
/// suspending, so each use case is atomic exactly as a database transaction would be.
public final class InMemoryAccountsStore: AccountsStore {
    private struct State {
        var accounts: [String: Account] = [:]
        /// The search key of each account's display name (what SQLite keeps in a column).
        var nameKeys: [String: String] = [:]
        var idByEmail: [String: String] = [:]
        var sessions: [TokenHash: Session] = [:]
        var tokens: [TokenHash: OneTimeToken] = [:]
        var ratings: [String: Rating] = [:]
        var reports: [String: Report] = [:]
        /// The seller of each completed sale recorded.
        var completedSales: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    // MARK: Accounts

    public func createAccount(_ account: Account) async throws -> Account {
        var account = account
        account.email = Account.normalizedEmail(account.email)
        account.createdAt = account.createdAt.roundedToMilliseconds
        let stored = account
        return try state.withLock { (state) throws(DomainError) -> Account in
            guard state.idByEmail[stored.email] == nil else { throw AccountsStoreError.emailTaken }
            guard state.accounts[stored.id] == nil else { throw AccountsStoreError.accountIDTaken }
            state.accounts[stored.id] = stored
            state.nameKeys[stored.id] = Account.searchKey(stored.displayName)
            state.idByEmail[stored.email] = stored.id
            return stored
        }
    }

    public func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration {
        var account = account
        account.email = Account.normalizedEmail(account.email)
        account.createdAt = account.createdAt.roundedToMilliseconds
        var token = token
        token.expiresAt = token.expiresAt.roundedToMilliseconds
        token.createdAt = token.createdAt.roundedToMilliseconds
        let (newAccount, newToken) = (account, token)
        return try state.withLock { (state) throws(DomainError) -> SignUpRegistration in
            guard state.tokens[newToken.tokenHash] == nil else { throw AccountsStoreError.tokenTaken }
            var token = newToken
            guard let id = state.idByEmail[newAccount.email], let existing = state.accounts[id] else {
                guard state.accounts[newAccount.id] == nil else { throw AccountsStoreError.accountIDTaken }
                state.accounts[newAccount.id] = newAccount
                state.nameKeys[newAccount.id] = Account.searchKey(newAccount.displayName)
                state.idByEmail[newAccount.email] = newAccount.id
                token.accountID = newAccount.id
                state.tokens[token.tokenHash] = token
                return .created(newAccount)
            }
            token.accountID = id
            if existing.verified {
                token.usedAt = token.createdAt
                state.tokens[token.tokenHash] = token
                return .alreadyVerified(existing)
            }
            state.accounts[id]!.passwordHash = Account.noPasswordHash
            state.tokens[token.tokenHash] = token
            return .pending(state.accounts[id]!)
        }
    }

    public func account(id: String) async throws -> Account? {
        state.withLock { $0.accounts[id] }
    }

    public func account(email: String) async throws -> Account? {
        let email = Account.normalizedEmail(email)
        return state.withLock { state in state.idByEmail[email].flatMap { state.accounts[$0] } }
    }

    public func updateProfile(id: String, changes: ProfileChanges) async throws -> Account {
        try state.withLock { (state) throws(DomainError) -> Account in
            guard let account = state.accounts[id] else { throw AccountsStoreError.accountNotFound }
            let updated = account.applying(changes)
            state.accounts[id] = updated
            state.nameKeys[id] = Account.searchKey(updated.displayName)
            return updated
        }
    }

    public func incrementItemsSold(accountID: String) async throws -> Int {
        try state.withLock { (state) throws(DomainError) -> Int in
            guard state.accounts[accountID] != nil else { throw AccountsStoreError.accountNotFound }
            state.accounts[accountID]!.itemsSold += 1
            return state.accounts[accountID]!.itemsSold
        }
    }

    public func recordCompletedSale(
        saleID: String,
        sellerID: String,
        at date: Date
    ) async throws -> CompletedSaleRecord {
        try state.withLock { (state) throws(DomainError) -> CompletedSaleRecord in
            guard let account = state.accounts[sellerID] else { throw AccountsStoreError.accountNotFound }
            if let recorded = state.completedSales[saleID] {
                guard recorded == sellerID else { throw AccountsStoreError.saleRecordedForAnotherSeller }
                return CompletedSaleRecord(itemsSold: account.itemsSold, newlyRecorded: false)
            }
            state.completedSales[saleID] = sellerID
            state.accounts[sellerID]!.itemsSold += 1
            return CompletedSaleRecord(itemsSold: account.itemsSold + 1, newlyRecorded: true)
        }
    }

    public func avatarImageIDs(among imageIDs: [String]) async throws -> Set<String> {
        let wanted = Set(imageIDs)
        return state.withLock { state in
            Set(state.accounts.values.compactMap(\.avatarImageID).filter { wanted.contains($0) })
        }
    }

    // MARK: One-time tokens and passwords

    public func insertOneTimeToken(_ token: OneTimeToken) async throws {
        var token = token
        token.expiresAt = token.expiresAt.roundedToMilliseconds
        token.createdAt = token.createdAt.roundedToMilliseconds
        token.usedAt = token.usedAt?.roundedToMilliseconds
        let stored = token
        try state.withLock { (state) throws(DomainError) in
            guard state.accounts[stored.accountID] != nil else { throw AccountsStoreError.accountNotFound }
            guard state.tokens[stored.tokenHash] == nil else { throw AccountsStoreError.tokenTaken }
            state.tokens[stored.tokenHash] = stored
        }
    }

    public func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Account in
            let token = try Self.consume(&state, tokenHash: tokenHash, kind: .emailVerification, now: now)
            state.accounts[token.accountID]!.verified = true
            if let hash = token.passwordHash { state.accounts[token.accountID]!.passwordHash = hash }
            if let name = token.displayName {
                state.accounts[token.accountID]!.displayName = name
                state.nameKeys[token.accountID] = Account.searchKey(name)
            }
            return state.accounts[token.accountID]!
        }
    }

    public func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account {
        let now = now.roundedToMilliseconds
        return try state.withLock { (state) throws(DomainError) -> Account in
            let token = try Self.consume(&state, tokenHash: tokenHash, kind: .passwordReset, now: now)
            state.accounts[token.accountID]!.passwordHash = newPasswordHash
            state.accounts[token.accountID]!.verified = true
            state.sessions = state.sessions.filter { $0.value.accountID != token.accountID }
            return state.accounts[token.accountID]!
        }
    }

    public func changePassword(
        accountID: String,
        newPasswordHash: String,
        keepingSession: TokenHash?
    ) async throws -> Int {
        try state.withLock { (state) throws(DomainError) -> Int in
            guard state.accounts[accountID] != nil else { throw AccountsStoreError.accountNotFound }
            state.accounts[accountID]!.passwordHash = newPasswordHash
            let before = state.sessions.count
            state.sessions = state.sessions.filter { $0.value.accountID != accountID || $0.key == keepingSession }
            state.tokens = state.tokens.filter { _, token in
                token.accountID != accountID || token.kind != .passwordReset || token.usedAt != nil
            }
            return before - state.sessions.count
        }
    }

    /// Checks and marks a one-time token used, and retires the account's other unused tokens of that kind.
    private static func consume(
        _ state: inout State,
        tokenHash: TokenHash,
        kind: OneTimeToken.Kind,
        now: Date
    ) throws(DomainError) -> OneTimeToken {
        guard let token = state.tokens[tokenHash], token.kind == kind,
            state.accounts[token.accountID] != nil
        else { throw AccountsStoreError.linkNotValid }
        guard token.usedAt == nil else { throw AccountsStoreError.linkUsed }
        guard token.expiresAt > now else { throw AccountsStoreError.linkExpired }
        for (hash, other) in state.tokens
        where other.accountID == token.accountID && other.kind == kind && other.usedAt == nil {
            state.tokens[hash]!.usedAt = now
        }
        return token
    }

    // MARK: Sessions

    public func createSession(_ session: Session) async throws {
        var session = session
        session.expiresAt = session.expiresAt.roundedToMilliseconds
        session.createdAt = session.createdAt.roundedToMilliseconds
        let stored = session
        try state.withLock { (state) throws(DomainError) in
            guard state.accounts[stored.accountID] != nil else { throw AccountsStoreError.accountNotFound }
            guard state.sessions[stored.tokenHash] == nil else { throw AccountsStoreError.sessionTaken }
            state.sessions[stored.tokenHash] = stored
        }
    }

    public func session(tokenHash: TokenHash, now: Date) async throws -> Session? {
        let now = now.roundedToMilliseconds
        return state.withLock { state in
            guard let session = state.sessions[tokenHash], session.isValid(at: now) else { return nil }
            return session
        }
    }

    public func deleteSession(tokenHash: TokenHash) async throws -> Bool {
        state.withLock { $0.sessions.removeValue(forKey: tokenHash) != nil }
    }

    public func deleteAllSessions(accountID: String) async throws -> Int {
        state.withLock { state in
            let before = state.sessions.count
            state.sessions = state.sessions.filter { $0.value.accountID != accountID }
            return before - state.sessions.count
        }
    }

    public func deleteExpired(now: Date) async throws -> Int {
        let now = now.roundedToMilliseconds
        return state.withLock { state in
            let before = state.sessions.count + state.tokens.count
            state.sessions = state.sessions.filter { $0.value.expiresAt > now }
            state.tokens = state.tokens.filter { $0.value.expiresAt > now }
            return before - state.sessions.count - state.tokens.count
        }
    }

    // MARK: Search

    public func searchUsers(nameQuery: String, page: PageRequest) async throws -> Page<Account> {
        let queryKey = Account.searchKey(nameQuery)
        let cursor = try AccountsPaging.searchCursor(page, queryKey: queryKey)
        let fetched: [Account] = state.withLock { state in
            var matches: [(key: String, account: Account)] = []
            for (id, key) in state.nameKeys where AccountsPaging.bytesContain(key, queryKey) {
                if let cursor {
                    let after =
                        AccountsPaging.bytesPrecede(cursor.n, key)
                        || (cursor.n.utf8.elementsEqual(key.utf8) && AccountsPaging.bytesPrecede(cursor.i, id))
                    guard after else { continue }
                }
                matches.append((key, state.accounts[id]!))
            }
            matches.sort { lhs, rhs in
                lhs.key.utf8.elementsEqual(rhs.key.utf8)
                    ? AccountsPaging.bytesPrecede(lhs.account.id, rhs.account.id)
                    : AccountsPaging.bytesPrecede(lhs.key, rhs.key)
            }
            return matches.prefix(page.size + 1).map(\.account)
        }
        return AccountsPaging.searchPage(fetched, size: page.size, queryKey: queryKey)
    }

    // MARK: Ratings and reports

    public func addRating(_ rating: Rating) async throws {
        var rating = rating
        rating.createdAt = rating.createdAt.roundedToMilliseconds
        let stored = rating
        try state.withLock { (state) throws(DomainError) in
            guard state.ratings[stored.saleID] == nil else { throw AccountsStoreError.saleAlreadyRated }
            guard state.accounts[stored.sellerID] != nil else { throw AccountsStoreError.sellerNotFound }
            guard state.accounts[stored.buyerID] != nil else { throw AccountsStoreError.buyerNotFound }
            state.ratings[stored.saleID] = stored
        }
    }

    public func ratings(sellerID: String, page: PageRequest) async throws -> Page<Rating> {
        let cursor = try AccountsPaging.ratingsCursor(page, sellerID: sellerID)
        let fetched: [Rating] = state.withLock { state in
            var matches = state.ratings.values.filter { rating in
                guard rating.sellerID == sellerID else { return false }
                guard let cursor else { return true }
                let time = rating.createdAt.millisecondsSince1970
                return time < cursor.t || (time == cursor.t && AccountsPaging.bytesPrecede(rating.saleID, cursor.i))
            }
            matches.sort { lhs, rhs in
                let (left, right) = (lhs.createdAt.millisecondsSince1970, rhs.createdAt.millisecondsSince1970)
                return left == right ? AccountsPaging.bytesPrecede(rhs.saleID, lhs.saleID) : left > right
            }
            return Array(matches.prefix(page.size + 1))
        }
        return AccountsPaging.ratingsPage(fetched, size: page.size, sellerID: sellerID)
    }

    public func ratingSummary(sellerID: String) async throws -> RatingSummary {
        state.withLock { state in
            var summary = RatingSummary(count: 0, totalStars: 0)
            for rating in state.ratings.values where rating.sellerID == sellerID {
                summary.count += 1
                summary.totalStars += rating.stars
            }
            return summary
        }
    }

    public func addReport(_ report: Report) async throws {
        var report = report
        report.createdAt = report.createdAt.roundedToMilliseconds
        let stored = report
        try state.withLock { (state) throws(DomainError) in
            guard state.reports[stored.id] == nil else { throw AccountsStoreError.reportIDTaken }
            guard state.accounts[stored.reporterID] != nil else { throw AccountsStoreError.reporterNotFound }
            guard state.accounts[stored.reportedID] != nil else { throw AccountsStoreError.reportedNotFound }
            state.reports[stored.id] = stored
        }
    }

    public func reports(reportedID: String) async throws -> [Report] {
        state.withLock { state in
            state.reports.values.filter { $0.reportedID == reportedID }.sorted { lhs, rhs in
                let (left, right) = (lhs.createdAt.millisecondsSince1970, rhs.createdAt.millisecondsSince1970)
                return left == right ? AccountsPaging.bytesPrecede(lhs.id, rhs.id) : left < right
            }
        }
    }
}
