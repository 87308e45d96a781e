public import Foundation
import GRDB
public import SkiffAccounts
public import SkiffDomain

/// The SQLite ``SkiffAccounts/AccountsStore``.
///
/// Each use case is one `pool.write { }` transaction (or one `pool.read { }` snapshot) on GRDB's own
/// queues, so nothing blocks the caller's executor. Every mutation loads what
/// ``SkiffAccounts/AccountLifecycle`` needs, lets it decide (uniqueness, existence, token state) and saves
/// the result inside the same transaction, as ``SkiffAccounts/InMemoryAccountsStore`` does, so the errors
/// match exactly; writes are serialized by the single writer connection, so a check and the insert that
/// follows it are atomic. Any constraint
/// that still fires is mapped to ``SkiffDomain/DomainError``; no GRDB type crosses the protocol.
///
/// Get one from ``SQLiteDatabase/accountsStore()``.
public struct SQLiteAccountsStore: AccountsStore {
    private let pool: StorePool

    init(pool: StorePool) {
        self.pool = pool
    }

    // MARK: Accounts

    public func createAccount(_ account: Account) async throws -> Account {
        try await pool.domainWrite { db in
            let stored = try AccountLifecycle.createAccount(
                account,
                emailTaken: try Self.account(db, email: account.email) != nil,
                accountIDTaken: try AccountRecord.exists(db, key: account.id)
            )
            try AccountRecord(stored).insert(db)
            return stored
        }
    }

    public func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration {
        try await pool.domainWrite { db in
            let signUp = try AccountLifecycle.registerSignUp(
                account,
                token: token,
                tokenTaken: try OneTimeTokenRecord.exists(db, key: token.tokenHash.rawValue),
                existing: try Self.account(db, email: account.email),
                accountIDTaken: try AccountRecord.exists(db, key: account.id)
            )
            switch signUp.registration {
            case .created(let account): try AccountRecord(account).insert(db)
            case .pending(let account): try AccountRecord(account).update(db)
            case .alreadyVerified: break
            }
            try OneTimeTokenRecord(signUp.token).insert(db)
            return signUp.registration
        }
    }

    public func account(id: String) async throws -> Account? {
        try await pool.domainRead { db in try AccountRecord.fetchOne(db, key: id)?.account }
    }

    public func account(email: String) async throws -> Account? {
        try await pool.domainRead { db in try AccountRecord.account(db, email: email) }
    }

    public func accounts(ids: Set<String>) async throws -> [String: Account] {
        guard !ids.isEmpty else { return [:] }
        let list = String(decoding: try JSONEncoder().encode(Array(ids)), as: UTF8.self)
        return try await pool.domainRead { db in
            let rows = try AccountRecord.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM account WHERE id IN (SELECT value FROM json_each(?))"),
                arguments: [list]
            )
            return Dictionary(rows.map { ($0.id, $0.account) }, uniquingKeysWith: { first, _ in first })
        }
    }

    public func updateProfile(id: String, changes: ProfileChanges) async throws -> Account {
        try await pool.domainWrite { db in
            let updated = try AccountLifecycle.updateProfile(
                try AccountRecord.fetchOne(db, key: id)?.account,
                changes: changes
            )
            try AccountRecord(updated).update(db)
            return updated
        }
    }

    public func incrementItemsSold(accountID: String) async throws -> Int {
        try await pool.domainWrite { db in
            let itemsSold = try AccountLifecycle.incrementItemsSold(try Self.itemsSold(db, accountID))
            try Self.setItemsSold(db, accountID, itemsSold)
            return itemsSold
        }
    }

    public func recordCompletedSale(
        saleID: String,
        sellerID: String,
        at date: Date
    ) async throws -> CompletedSaleRecord {
        try await pool.domainWrite { db in
            let record = try AccountLifecycle.recordCompletedSale(
                sellerID: sellerID,
                itemsSold: try Self.itemsSold(db, sellerID),
                recordedSellerID: try String.fetchOne(
                    db.cachedStatement(sql: "SELECT sellerID FROM completedSale WHERE saleID = ?"),
                    arguments: [saleID]
                )
            )
            guard record.newlyRecorded else { return record }
            try db.executeCached(
                sql: "INSERT INTO completedSale (saleID, sellerID, recordedAt) VALUES (?, ?, ?)",
                arguments: [saleID, sellerID, date.millisecondsSince1970]
            )
            try Self.setItemsSold(db, sellerID, record.itemsSold)
            return record
        }
    }

    public func avatarImageIDs(among imageIDs: [String]) async throws -> Set<String> {
        let unique = Array(Set(imageIDs))
        guard !unique.isEmpty else { return [] }
        return try await pool.domainRead { db in
            var found: Set<String> = []
            var start = unique.startIndex
            while start < unique.endIndex {
                let batch = Array(unique[start..<min(start + 500, unique.endIndex)])
                let marks = Array(repeating: "?", count: batch.count).joined(separator: ", ")
                found.formUnion(
                    try String.fetchAll(
                        db,
                        sql: "SELECT DISTINCT avatarImageID FROM account WHERE avatarImageID IN (\(marks))",
                        arguments: StatementArguments(batch)
                    )
                )
                start += batch.count
            }
            return found
        }
    }

    // MARK: One-time tokens and passwords

    public func insertOneTimeToken(_ token: OneTimeToken) async throws {
        try await pool.domainWrite { db in
            let stored = try AccountLifecycle.insertOneTimeToken(
                token,
                accountExists: try Self.liveAccountExists(db, token.accountID),
                tokenTaken: try OneTimeTokenRecord.exists(db, key: token.tokenHash.rawValue)
            )
            if stored.kind == .emailChange {
                try db.executeCached(
                    sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                    arguments: [stored.accountID, OneTimeToken.Kind.emailChange.rawValue]
                )
            }
            try OneTimeTokenRecord(stored).insert(db)
        }
    }

    public func changeEmail(tokenHash: TokenHash, now: Date) async throws -> AccountLifecycle.EmailChange {
        try await pool.domainWrite { db in
            let (token, account) = try Self.tokenAndAccount(db, tokenHash)
            let holder = try token?.newEmail.flatMap { try AccountRecord.account(db, email: $0) }
            let change = try AccountLifecycle.changeEmail(
                token: token,
                account: account,
                newEmailHolder: holder,
                now: now
            )
            if let released = change.releasedAccountID {
                // Its tokens and sessions go with it (ON DELETE CASCADE); a pending sign-up has nothing else.
                try db.executeCached(sql: "DELETE FROM account WHERE id = ?", arguments: [released])
            }
            let accountID = change.account.id
            try Self.consumeToken(db, tokenHash, of: accountID, kind: .emailChange, at: change.usedAt)
            try db.executeCached(
                sql: "UPDATE oneTimeToken SET usedAt = ? WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                arguments: [
                    change.usedAt.millisecondsSince1970, accountID, OneTimeToken.Kind.passwordReset.rawValue,
                ]
            )
            try AccountRecord(change.account).update(db)
            return change
        }
    }

    public func deleteAccount(id: String, now: Date) async throws -> Account {
        try await pool.domainWrite { db in
            let erased = try AccountLifecycle.deleteAccount(try AccountRecord.fetchOne(db, key: id)?.account, now: now)
            try AccountRecord(erased).update(db)
            try db.executeCached(sql: "DELETE FROM session WHERE accountID = ?", arguments: [id])
            try db.executeCached(sql: "DELETE FROM oneTimeToken WHERE accountID = ?", arguments: [id])
            try db.executeCached(sql: "DELETE FROM externalIdentity WHERE accountID = ?", arguments: [id])
            return erased
        }
    }

    public func logInExternally(
        _ identity: ExternalIdentity,
        email: String?,
        newAccount: Account,
        now: Date
    ) async throws -> AccountLifecycle.ExternalLogIn {
        try await pool.domainWrite { db in
            let linkedID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT accountID FROM externalIdentity WHERE issuer = ? AND subject = ?"),
                arguments: [identity.issuer, identity.subject]
            )
            let linked = try linkedID.flatMap { try AccountRecord.fetchOne(db, key: $0)?.account }
            let withEmail = try email.flatMap { try AccountRecord.account(db, email: $0) }
            let decision = try AccountLifecycle.externalLogIn(
                linkedAccount: linked,
                accountWithEmail: withEmail,
                email: email,
                newAccount: newAccount,
                accountIDTaken: try AccountRecord.exists(db, key: newAccount.id)
            )
            let link = { (accountID: String) in
                try db.executeCached(
                    sql: """
                        INSERT INTO externalIdentity (issuer, subject, accountID, createdAt) VALUES (?, ?, ?, ?)
                        ON CONFLICT (issuer, subject) DO UPDATE SET accountID = excluded.accountID
                        """,
                    arguments: [identity.issuer, identity.subject, accountID, now.millisecondsSince1970]
                )
            }
            switch decision {
            case .linked: break
            case .linking(let account):
                if withEmail?.verified == false {
                    try db.executeCached(
                        sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                        arguments: [account.id, OneTimeToken.Kind.emailVerification.rawValue]
                    )
                }
                try AccountRecord(account).update(db)
                try link(account.id)
            case .creating(let account):
                try AccountRecord(account).insert(db)
                try link(account.id)
            }
            return decision
        }
    }

    public func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account {
        try await pool.domainWrite { db in
            let (token, account) = try Self.tokenAndAccount(db, tokenHash)
            guard let consumption = try AccountLifecycle.verifyEmail(token: token, account: account, now: now) else {
                return account!  // verified by this token already: nothing changes
            }
            try Self.consumeToken(
                db,
                tokenHash,
                of: consumption.account.id,
                kind: .emailVerification,
                at: consumption.usedAt
            )
            try AccountRecord(consumption.account).update(db)
            return consumption.account
        }
    }

    public func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account {
        try await pool.domainWrite { db in
            let (token, account) = try Self.tokenAndAccount(db, tokenHash)
            let consumption = try AccountLifecycle.resetPassword(
                token: token,
                account: account,
                newPasswordHash: newPasswordHash,
                now: now
            )
            try Self.consumeToken(
                db,
                tokenHash,
                of: consumption.account.id,
                kind: .passwordReset,
                at: consumption.usedAt
            )
            try AccountRecord(consumption.account).update(db)
            try db.executeCached(sql: "DELETE FROM session WHERE accountID = ?", arguments: [consumption.account.id])
            return consumption.account
        }
    }

    public func changePassword(
        accountID: String,
        newPasswordHash: String,
        keepingSession: TokenHash?
    ) async throws -> Int {
        try await pool.domainWrite { db in
            let account = try AccountLifecycle.changePassword(
                try AccountRecord.fetchOne(db, key: accountID)?.account,
                newPasswordHash: newPasswordHash
            )
            try AccountRecord(account).update(db)
            try db.executeCached(
                sql: "DELETE FROM session WHERE accountID = ? AND tokenHash IS NOT ?",
                arguments: [accountID, keepingSession?.rawValue]
            )
            let ended = db.changesCount
            try db.executeCached(
                sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                arguments: [accountID, OneTimeToken.Kind.passwordReset.rawValue]
            )
            try Self.cancelEmailChanges(db, of: accountID)
            return ended
        }
    }

    // MARK: Sessions

    public func createSession(_ session: Session) async throws {
        try await pool.domainWrite { db in
            let stored = try AccountLifecycle.createSession(
                session,
                accountExists: try Self.liveAccountExists(db, session.accountID),
                sessionTaken: try SessionRecord.exists(db, key: session.tokenHash.rawValue)
            )
            try SessionRecord(stored).insert(db)
        }
    }

    public func session(tokenHash: TokenHash, now: Date) async throws -> Session? {
        let now = now.millisecondsSince1970
        return try await pool.domainRead { db in
            try SessionRecord.fetchOne(
                db,
                sql: "SELECT * FROM session WHERE tokenHash = ? AND expiresAt > ?",
                arguments: [tokenHash.rawValue, now]
            )?.session
        }
    }

    public func deleteSession(tokenHash: TokenHash) async throws -> Bool {
        try await pool.domainWrite { db in try SessionRecord.deleteOne(db, key: tokenHash.rawValue) }
    }

    public func deleteAllSessions(accountID: String) async throws -> Int {
        try await pool.domainWrite { db in
            try db.executeCached(sql: "DELETE FROM session WHERE accountID = ?", arguments: [accountID])
            let ended = db.changesCount
            try Self.cancelEmailChanges(db, of: accountID)
            return ended
        }
    }

    public func deleteExpired(now: Date) async throws -> Int {
        let now = now.millisecondsSince1970
        // Both tables expire by `expiresAt`.
        func deleteExpired(from table: String) async throws -> Int {
            try await pool.deleteInBatches(
                "DELETE FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table) WHERE expiresAt <= ? LIMIT ?)",
                [now]
            )
        }
        return try await deleteExpired(from: "session") + deleteExpired(from: "oneTimeToken")
    }

    // MARK: Search

    public func searchUsers(nameQuery: String, page: PageRequest) async throws -> Page<Account> {
        let queryKey = Account.searchKey(nameQuery)
        let cursor = try AccountsPaging.searchCursor(page, queryKey: queryKey)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if !queryKey.isEmpty {
                conditions.append("instr(displayNameKey, ?) > 0")
                arguments += [queryKey]
            }
            if let cursor {
                conditions.append("displayNameKey >= ? AND (displayNameKey > ? OR (displayNameKey = ? AND id > ?))")
                arguments += [cursor.n, cursor.n, cursor.n, cursor.i]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            arguments += [limit]
            return try AccountRecord.fetchAll(
                db,
                sql: "SELECT * FROM account \(filter) ORDER BY displayNameKey, id LIMIT ?",
                arguments: arguments
            ).map(\.account)
        }
        return AccountsPaging.searchPage(fetched, size: page.size, queryKey: queryKey)
    }

    // MARK: Ratings and reports

    public func addRating(_ rating: Rating) async throws {
        try await pool.domainWrite { db in
            let stored = try AccountLifecycle.addRating(
                rating,
                saleRated: try RatingRecord.exists(db, key: rating.saleID),
                sellerExists: try AccountRecord.exists(db, key: rating.sellerID),
                buyerExists: try AccountRecord.exists(db, key: rating.buyerID)
            )
            try RatingRecord(stored).insert(db)
        }
    }

    public func ratings(sellerID: String, page: PageRequest) async throws -> Page<Rating> {
        let cursor = try AccountsPaging.ratingsCursor(page, sellerID: sellerID)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            if let cursor {
                return try RatingRecord.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM rating
                        WHERE sellerID = ? AND createdAt <= ? AND (createdAt < ? OR (createdAt = ? AND ratingID < ?))
                        ORDER BY createdAt DESC, ratingID DESC LIMIT ?
                        """,
                    arguments: [sellerID, cursor.t, cursor.t, cursor.t, cursor.i, limit]
                ).map(\.rating)
            }
            return try RatingRecord.fetchAll(
                db,
                sql: "SELECT * FROM rating WHERE sellerID = ? ORDER BY createdAt DESC, ratingID DESC LIMIT ?",
                arguments: [sellerID, limit]
            ).map(\.rating)
        }
        return AccountsPaging.ratingsPage(fetched, size: page.size, sellerID: sellerID)
    }

    public func ratingSummary(sellerID: String) async throws -> RatingSummary {
        try await pool.domainRead { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT COUNT(*) AS count, COALESCE(SUM(stars), 0) AS total FROM rating WHERE sellerID = ?"
                ),
                arguments: [sellerID]
            )
            return RatingSummary(count: row?["count"] ?? 0, totalStars: row?["total"] ?? 0)
        }
    }

    public func addReport(_ report: Report) async throws {
        try await pool.domainWrite { db in
            let stored = try AccountLifecycle.addReport(
                report,
                reportIDTaken: try ReportRecord.exists(db, key: report.id),
                reporterExists: try AccountRecord.exists(db, key: report.reporterID),
                reportedExists: try AccountRecord.exists(db, key: report.reportedID),
                reportOpen: try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM report WHERE reporterID = ? AND reportedID = ? LIMIT 1"),
                    arguments: [report.reporterID, report.reportedID]
                ) != nil
            )
            try ReportRecord(stored).insert(db)
        }
    }

    public func reports(reportedID: String) async throws -> [Report] {
        try await pool.domainRead { db in
            try ReportRecord.fetchAll(
                db,
                sql: "SELECT * FROM report WHERE reportedID = ? ORDER BY createdAt, id",
                arguments: [reportedID]
            ).map(\.report)
        }
    }

    // MARK: Helpers

    /// The account with this e-mail address (normalized), or `nil`.
    private static func account(_ db: Database, email: String) throws -> Account? {
        try AccountRecord.filter(Column("email") == Account.normalizedEmail(email)).fetchOne(db)?.account
    }

    /// An account's number of items sold, or `nil` if there is no such account.
    private static func itemsSold(_ db: Database, _ accountID: String) throws -> Int? {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT itemsSold FROM account WHERE id = ?"), arguments: [accountID])
    }

    private static func setItemsSold(_ db: Database, _ accountID: String, _ itemsSold: Int) throws {
        try db.executeCached(sql: "UPDATE account SET itemsSold = ? WHERE id = ?", arguments: [itemsSold, accountID])
    }

    /// The one-time token with this hash and its account, each `nil` if there is none.
    private static func tokenAndAccount(_ db: Database, _ tokenHash: TokenHash) throws -> (OneTimeToken?, Account?) {
        let token = try OneTimeTokenRecord.fetchOne(db, key: tokenHash.rawValue)?.token
        let account = try token.flatMap { try AccountRecord.fetchOne(db, key: $0.accountID)?.account }
        return (token, account)
    }

    /// Marks the token `used` used at `date` and retires the account's other unused tokens: verification tokens
    /// are deleted whichever kind was used (both prove the address; only the one that verified answers a second
    /// click, and a pending sign-up's password can no longer be set), reset tokens are marked used when a reset
    /// token was used.
    /// Deletes the account's unused e-mail change tokens: a change asked for with a password that has just
    /// been replaced (or by a session just ended) must not go through.
    private static func cancelEmailChanges(_ db: Database, of accountID: String) throws {
        try db.executeCached(
            sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
            arguments: [accountID, OneTimeToken.Kind.emailChange.rawValue]
        )
    }

    /// Whether an account exists and is not deleted.
    private static func liveAccountExists(_ db: Database, _ id: String) throws -> Bool {
        try Bool(exists: db, "SELECT 1 FROM account WHERE id = ? AND deletedAt IS NULL", [id])
    }

    private static func consumeToken(
        _ db: Database,
        _ used: TokenHash,
        of accountID: String,
        kind: OneTimeToken.Kind,
        at date: Date
    ) throws {
        try db.executeCached(
            sql: "UPDATE oneTimeToken SET usedAt = ? WHERE tokenHash = ?",
            arguments: [date.millisecondsSince1970, used.rawValue]
        )
        try db.executeCached(
            sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
            arguments: [accountID, OneTimeToken.Kind.emailVerification.rawValue]
        )
        if kind != .emailVerification {
            try db.executeCached(
                sql: "UPDATE oneTimeToken SET usedAt = ? WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                arguments: [date.millisecondsSince1970, accountID, kind.rawValue]
            )
        }
        if kind == .passwordReset { try cancelEmailChanges(db, of: accountID) }
    }
}
