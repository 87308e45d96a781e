public import Foundation
public import SkiffDomain
import Synchronization

/// An ``AccountsStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one `Mutex`, and every method runs in a single critical section without
/// suspending, so each use case is atomic exactly as a database transaction would be. Writes load what
/// ``AccountLifecycle`` needs, let it decide and save what it returns.
public final class InMemoryAccountsStore: AccountsStore {
    private struct State {
        var accounts: [String: Account] = [:]
        /// The search key of each account's display name (what SQLite keeps in a column).
        var nameKeys: [String: String] = [:]
        /// The same keys in search order (key, then id, by bytes), so that a user search walks from its cursor
        /// and stops at its page, as SQLite walks its index.
        var byName = SortedKeys<NameEntry>(by: NameEntry.precedes)
        var idByEmail: [String: String] = [:]
        /// Sessions and one-time tokens, each with its account's hashes and an expiry order, so that an
        /// account's (log-out everywhere, a password change, verification) and the expired ones (housekeeping)
        /// cost what they hold, not every account's.
        var sessions = AccountSecrets<Session>()
        var tokens = AccountSecrets<OneTimeToken>()
        var ratings: [String: Rating] = [:]
        /// Each seller's ratings newest first (then by public id, descending), and their running summary:
        /// a page or a summary costs the seller's page, not every rating.
        var ratingsBySeller: [String: SortedKeys<RatingKey>] = [:]
        var summaries: [String: RatingSummary] = [:]
        /// The sale of each rating, by public id.
        var ratingIDs: [String: String] = [:]
        var reports: [String: Report] = [:]
        /// The reported accounts of each reporter's (open) reports.
        var reportedBy: [String: Set<String>] = [:]
        /// The reports about each account, by id (so listing them reads only theirs).
        var reportsAbout: [String: [String]] = [:]
        /// The seller of each completed sale recorded.
        var completedSales: [String: String] = [:]
        /// The account each external identity is linked to.
        var externalIdentities: [ExternalIdentity: String] = [:]

        /// Saves an account with its search key and e-mail index.
        mutating func save(_ account: Account) {
            if let previous = accounts[account.id]?.email, previous != account.email, idByEmail[previous] == account.id
            {
                idByEmail[previous] = nil
            }
            accounts[account.id] = account
            let key = account.storedSearchKey
            if nameKeys[account.id] != key {
                unindexName(account.id)
                byName.insert(NameEntry(key: key, id: account.id))
                nameKeys[account.id] = key
            }
            idByEmail[account.email] = account.id
        }

        /// Removes an account's name from the search order.
        mutating func unindexName(_ id: String) {
            guard let key = nameKeys[id] else { return }
            _ = byName.remove(NameEntry(key: key, id: id)) { $0.id == id }
        }

        /// Marks the token `used` used at `date` and retires the account's other unused tokens: verification
        /// tokens are deleted whichever kind was used (both prove the address; only the one that verified answers
        /// a second click, and a pending sign-up's password can no longer be set), reset tokens are marked used
        /// when a reset token was used.
        mutating func consumeToken(_ used: TokenHash, of accountID: String, kind: OneTimeToken.Kind, at date: Date) {
            tokens[used]?.usedAt = date
            for (hash, token) in tokens.of(accountID) where hash != used && token.usedAt == nil {
                if token.kind == .emailVerification {
                    tokens[hash] = nil
                } else if token.kind == kind {
                    tokens[hash]!.usedAt = date
                }
            }
            if kind == .passwordReset { cancelEmailChanges(of: accountID) }
        }

        /// Deletes the account's unused e-mail change tokens (after a password reset or change, or when
        /// every session ends).
        mutating func cancelEmailChanges(of accountID: String) {
            tokens.removeAll(of: accountID) { _, token in token.kind == .emailChange && token.usedAt == nil }
        }
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    // MARK: Accounts

    public func createAccount(_ account: Account) async throws -> Account {
        try state.withLock { (state) throws(DomainError) -> Account in
            let stored = try AccountLifecycle.createAccount(
                account,
                emailTaken: state.idByEmail[Account.normalizedEmail(account.email)] != nil,
                accountIDTaken: state.accounts[account.id] != nil
            )
            state.save(stored)
            return stored
        }
    }

    public func accounts(ids: Set<String>) async throws -> [String: Account] {
        state.withLock { state in
            var found: [String: Account] = [:]
            for id in ids { found[id] = state.accounts[id] }
            return found
        }
    }

    public func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration {
        try state.withLock { (state) throws(DomainError) -> SignUpRegistration in
            let signUp = try AccountLifecycle.registerSignUp(
                account,
                token: token,
                tokenTaken: state.tokens[token.tokenHash] != nil,
                existing: state.idByEmail[Account.normalizedEmail(account.email)].flatMap { state.accounts[$0] },
                accountIDTaken: state.accounts[account.id] != nil
            )
            switch signUp.registration {
            case .created(let account), .pending(let account): state.save(account)
            case .alreadyVerified: break
            }
            state.tokens[signUp.token.tokenHash] = signUp.token
            return signUp.registration
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
            let updated = try AccountLifecycle.updateProfile(state.accounts[id], changes: changes)
            state.save(updated)
            return updated
        }
    }

    public func incrementItemsSold(accountID: String) async throws -> Int {
        try state.withLock { (state) throws(DomainError) -> Int in
            let itemsSold = try AccountLifecycle.incrementItemsSold(state.accounts[accountID]?.itemsSold)
            state.accounts[accountID]?.itemsSold = itemsSold
            return itemsSold
        }
    }

    public func recordCompletedSale(
        saleID: String,
        sellerID: String,
        at date: Date
    ) async throws -> CompletedSaleRecord {
        try state.withLock { (state) throws(DomainError) -> CompletedSaleRecord in
            let record = try AccountLifecycle.recordCompletedSale(
                sellerID: sellerID,
                itemsSold: state.accounts[sellerID]?.itemsSold,
                recordedSellerID: state.completedSales[saleID]
            )
            if record.newlyRecorded {
                state.completedSales[saleID] = sellerID
                state.accounts[sellerID]?.itemsSold = record.itemsSold
            }
            return record
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
        try state.withLock { (state) throws(DomainError) in
            let stored = try AccountLifecycle.insertOneTimeToken(
                token,
                accountExists: state.accounts[token.accountID].map { !$0.isDeleted } ?? false,
                tokenTaken: state.tokens[token.tokenHash] != nil
            )
            if stored.kind == .emailChange {
                state.tokens.removeAll(of: stored.accountID) { _, other in
                    other.kind == .emailChange && other.usedAt == nil
                }
            }
            state.tokens[stored.tokenHash] = stored
        }
    }

    public func changeEmail(tokenHash: TokenHash, now: Date) async throws -> AccountLifecycle.EmailChange {
        try state.withLock { (state) throws(DomainError) -> AccountLifecycle.EmailChange in
            let token = state.tokens[tokenHash]
            let change = try AccountLifecycle.changeEmail(
                token: token,
                account: token.flatMap { state.accounts[$0.accountID] },
                newEmailHolder: token?.newEmail.flatMap { state.idByEmail[Account.normalizedEmail($0)] }
                    .flatMap { state.accounts[$0] },
                now: now
            )
            if let released = change.releasedAccountID, let pending = state.accounts.removeValue(forKey: released) {
                state.unindexName(released)
                state.nameKeys[released] = nil
                if state.idByEmail[pending.email] == released { state.idByEmail[pending.email] = nil }
                state.tokens.removeAll(of: released)
                state.sessions.removeAll(of: released)
            }
            let accountID = change.account.id
            state.consumeToken(tokenHash, of: accountID, kind: .emailChange, at: change.usedAt)
            for (hash, other) in state.tokens.of(accountID) where other.kind == .passwordReset && other.usedAt == nil {
                state.tokens[hash]?.usedAt = change.usedAt
            }
            state.save(change.account)
            return change
        }
    }

    public func deleteAccount(id: String, now: Date) async throws -> Account {
        try state.withLock { (state) throws(DomainError) -> Account in
            let erased = try AccountLifecycle.deleteAccount(state.accounts[id], now: now)
            state.save(erased)
            state.sessions.removeAll(of: id)
            state.tokens.removeAll(of: id)
            state.externalIdentities = state.externalIdentities.filter { $0.value != id }
            return erased
        }
    }

    public func logInExternally(
        _ identity: ExternalIdentity,
        email: String?,
        newAccount: Account,
        now: Date
    ) async throws -> AccountLifecycle.ExternalLogIn {
        try state.withLock { (state) throws(DomainError) -> AccountLifecycle.ExternalLogIn in
            let decision = try AccountLifecycle.externalLogIn(
                linkedAccount: state.externalIdentities[identity].flatMap { state.accounts[$0] },
                accountWithEmail: email.flatMap { state.idByEmail[Account.normalizedEmail($0)] }
                    .flatMap { state.accounts[$0] },
                email: email,
                newAccount: newAccount,
                accountIDTaken: state.accounts[newAccount.id] != nil
            )
            switch decision {
            case .linked: break
            case .linking(let account):
                let wasVerified = state.accounts[account.id]?.verified ?? false
                state.save(account)
                if !wasVerified {
                    state.tokens.removeAll(of: account.id) { _, token in
                        token.kind == .emailVerification && token.usedAt == nil
                    }
                }
                state.externalIdentities[identity] = account.id
            case .creating(let account):
                state.save(account)
                state.externalIdentities[identity] = account.id
            }
            return decision
        }
    }

    public func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account {
        try state.withLock { (state) throws(DomainError) -> Account in
            let token = state.tokens[tokenHash]
            let account = token.flatMap { state.accounts[$0.accountID] }
            guard let consumption = try AccountLifecycle.verifyEmail(token: token, account: account, now: now) else {
                return account!  // verified by this token already: nothing changes
            }
            state.consumeToken(tokenHash, of: consumption.account.id, kind: .emailVerification, at: consumption.usedAt)
            state.save(consumption.account)
            return consumption.account
        }
    }

    public func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account {
        try state.withLock { (state) throws(DomainError) -> Account in
            let token = state.tokens[tokenHash]
            let consumption = try AccountLifecycle.resetPassword(
                token: token,
                account: token.flatMap { state.accounts[$0.accountID] },
                newPasswordHash: newPasswordHash,
                now: now
            )
            state.consumeToken(tokenHash, of: consumption.account.id, kind: .passwordReset, at: consumption.usedAt)
            state.save(consumption.account)
            state.sessions.removeAll(of: consumption.account.id)
            return consumption.account
        }
    }

    public func changePassword(
        accountID: String,
        newPasswordHash: String,
        keepingSession: TokenHash?
    ) async throws -> Int {
        try state.withLock { (state) throws(DomainError) -> Int in
            let account = try AccountLifecycle.changePassword(
                state.accounts[accountID],
                newPasswordHash: newPasswordHash
            )
            state.save(account)
            let ended = state.sessions.removeAll(of: accountID) { hash, _ in hash != keepingSession }
            state.tokens.removeAll(of: accountID) { _, token in token.kind == .passwordReset && token.usedAt == nil }
            state.cancelEmailChanges(of: accountID)
            return ended
        }
    }

    // MARK: Sessions

    public func createSession(_ session: Session) async throws {
        try state.withLock { (state) throws(DomainError) in
            let stored = try AccountLifecycle.createSession(
                session,
                accountExists: state.accounts[session.accountID].map { !$0.isDeleted } ?? false,
                sessionTaken: state.sessions[session.tokenHash] != nil
            )
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
        state.withLock { state in
            guard state.sessions[tokenHash] != nil else { return false }
            state.sessions[tokenHash] = nil
            return true
        }
    }

    public func deleteAllSessions(accountID: String) async throws -> Int {
        state.withLock { state in
            let ended = state.sessions.removeAll(of: accountID)
            state.cancelEmailChanges(of: accountID)
            return ended
        }
    }

    public func deleteExpired(now: Date) async throws -> Int {
        let now = now.roundedToMilliseconds
        // Soonest expiry first, at most a batch of expiries per hold of the lock, so that other calls take
        // turns with a large prune; each batch reads only what has expired.
        var removed = 0
        // A batch counts the expiries it checked, so the loop stops once fewer than a batch were due.
        _ = try await BatchedDelete.run { size in
            let batch = state.withLock { state in
                (state.sessions.removeExpired(now: now, limit: size), state.tokens.removeExpired(now: now, limit: size))
            }
            removed += batch.0.removed + batch.1.removed
            return max(batch.0.checked, batch.1.checked)
        }
        return removed
    }

    // MARK: Search

    public func searchUsers(nameQuery: String, page: PageRequest) async throws -> Page<Account> {
        let queryKey = Account.searchKey(nameQuery)
        let cursor = try AccountsPaging.searchCursor(page, queryKey: queryKey)
        let fetched: [Account] = state.withLock { state in
            // Walks the names in order from the cursor until the page (and one more) is full: a page costs
            // the names walked, about `(page + 1) · accounts / matches`.
            var position =
                cursor.map { state.byName.position(of: NameEntry(key: $0.n, id: $0.i), after: true) }
                ?? state.byName.start
            var matches: [Account] = []
            while matches.count <= page.size, !state.byName.isEnd(position) {
                let entry = state.byName[position]
                if AccountsPaging.bytesContain(entry.key, queryKey), let account = state.accounts[entry.id] {
                    matches.append(account)
                }
                position = state.byName.next(position)
            }
            return matches
        }
        return AccountsPaging.searchPage(fetched, size: page.size, queryKey: queryKey)
    }

    // MARK: Ratings and reports

    public func addRating(_ rating: Rating) async throws {
        try state.withLock { (state) throws(DomainError) in
            let stored = try AccountLifecycle.addRating(
                rating,
                saleRated: state.ratings[rating.saleID] != nil,
                sellerExists: state.accounts[rating.sellerID] != nil,
                buyerExists: state.accounts[rating.buyerID] != nil
            )
            state.ratings[stored.saleID] = stored
            let key = RatingKey(createdAt: stored.createdAt.millisecondsSince1970, ratingID: stored.ratingID)
            state.ratingsBySeller[stored.sellerID, default: SortedKeys(by: RatingKey.newestFirst)].insert(key)
            state.summaries[stored.sellerID, default: RatingSummary(count: 0, totalStars: 0)].count += 1
            state.summaries[stored.sellerID]!.totalStars += stored.stars
            state.ratingIDs[stored.ratingID] = stored.saleID
        }
    }

    public func ratings(sellerID: String, page: PageRequest) async throws -> Page<Rating> {
        let cursor = try AccountsPaging.ratingsCursor(page, sellerID: sellerID)
        let fetched: [Rating] = state.withLock { state in
            guard let keys = state.ratingsBySeller[sellerID] else { return [] }
            let start =
                cursor.map { keys.position(of: RatingKey(createdAt: $0.t, ratingID: $0.i), after: true) } ?? keys.start
            var result: [Rating] = []
            keys.walk(from: start) { key in
                if let saleID = state.ratingIDs[key.ratingID], let rating = state.ratings[saleID] {
                    result.append(rating)
                }
                return result.count <= page.size
            }
            return result
        }
        return AccountsPaging.ratingsPage(fetched, size: page.size, sellerID: sellerID)
    }

    public func ratingSummary(sellerID: String) async throws -> RatingSummary {
        state.withLock { state in state.summaries[sellerID] ?? RatingSummary(count: 0, totalStars: 0) }
    }

    public func addReport(_ report: Report) async throws {
        try state.withLock { (state) throws(DomainError) in
            let stored = try AccountLifecycle.addReport(
                report,
                reportIDTaken: state.reports[report.id] != nil,
                reporterExists: state.accounts[report.reporterID] != nil,
                reportedExists: state.accounts[report.reportedID] != nil,
                reportOpen: state.reportedBy[report.reporterID]?.contains(report.reportedID) ?? false
            )
            state.reports[stored.id] = stored
            state.reportedBy[stored.reporterID, default: []].insert(stored.reportedID)
            state.reportsAbout[stored.reportedID, default: []].append(stored.id)
        }
    }

    public func reports(reportedID: String) async throws -> [Report] {
        state.withLock { state in
            (state.reportsAbout[reportedID] ?? []).compactMap { state.reports[$0] }.sorted { lhs, rhs in
                let (left, right) = (lhs.createdAt.millisecondsSince1970, rhs.createdAt.millisecondsSince1970)
                return left == right ? AccountsPaging.bytesPrecede(lhs.id, rhs.id) : left < right
            }
        }
    }
}

/// A rating's place in its seller's list: newest first, then the greater public id (by UTF-8 bytes, as SQLite's
/// BINARY collation orders them).
struct RatingKey: Sendable {
    var createdAt: Int64
    var ratingID: String

    @Sendable static func newestFirst(_ a: RatingKey, _ b: RatingKey) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : AccountsPaging.bytesPrecede(b.ratingID, a.ratingID)
    }
}

/// An account's name search key and id: the in-memory store's name order.
struct NameEntry: Sendable {
    var key: String
    var id: String

    /// By key, then id, comparing bytes (the order SQLite's index gives).
    static let precedes: @Sendable (NameEntry, NameEntry) -> Bool = { lhs, rhs in
        lhs.key.utf8.elementsEqual(rhs.key.utf8)
            ? AccountsPaging.bytesPrecede(lhs.id, rhs.id) : AccountsPaging.bytesPrecede(lhs.key, rhs.key)
    }
}
