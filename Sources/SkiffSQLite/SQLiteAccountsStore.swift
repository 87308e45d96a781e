import Foundation
import GRDB
import SkiffAccounts
import SkiffDomain

/// The SQLite ``SkiffAccounts/AccountsStore``.
///
/// Each use case is one `pool.write { }` transaction (or one `pool.read { }` snapshot) on GRDB's own
/// queues, so nothing blocks the caller's executor. Uniqueness and existence are checked inside the
/// transaction so the errors match ``SkiffAccounts/InMemoryAccountsStore`` exactly; writes are serialized
/// by the single writer connection, so a check and the insert that follows it are atomic. Any constraint
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
        let record = AccountRecord(account)
        return try await pool.domainWrite { db in
            guard try AccountRecord.filter(Column("email") == record.email).fetchCount(db) == 0 else {
                throw AccountsStoreError.emailTaken
            }
            guard try !AccountRecord.exists(db, key: record.id) else { throw AccountsStoreError.accountIDTaken }
            try record.insert(db)
            return record.account
        }
    }

    public func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration {
        let record = AccountRecord(account)
        let tokenRecord = OneTimeTokenRecord(token)
        return try await pool.domainWrite { db in
            guard try !OneTimeTokenRecord.exists(db, key: tokenRecord.tokenHash) else {
                throw AccountsStoreError.tokenTaken
            }
            var tokenRecord = tokenRecord
            guard let existing = try AccountRecord.filter(Column("email") == record.email).fetchOne(db) else {
                guard try !AccountRecord.exists(db, key: record.id) else { throw AccountsStoreError.accountIDTaken }
                try record.insert(db)
                tokenRecord.accountID = record.id
                try tokenRecord.insert(db)
                return .created(record.account)
            }
            tokenRecord.accountID = existing.id
            if existing.account.verified {
                tokenRecord.usedAt = tokenRecord.createdAt
                try tokenRecord.insert(db)
                return .alreadyVerified(existing.account)
            }
            try db.execute(
                sql: "UPDATE account SET passwordHash = ? WHERE id = ?",
                arguments: [Account.noPasswordHash, existing.id]
            )
            try tokenRecord.insert(db)
            return .pending(try Self.fetchAccount(db, id: existing.id))
        }
    }

    public func account(id: String) async throws -> Account? {
        try await pool.domainRead { db in try AccountRecord.fetchOne(db, key: id)?.account }
    }

    public func account(email: String) async throws -> Account? {
        let email = Account.normalizedEmail(email)
        return try await pool.domainRead { db in
            try AccountRecord.filter(Column("email") == email).fetchOne(db)?.account
        }
    }

    public func updateProfile(id: String, changes: ProfileChanges) async throws -> Account {
        try await pool.domainWrite { db in
            guard let record = try AccountRecord.fetchOne(db, key: id) else {
                throw AccountsStoreError.accountNotFound
            }
            let updated = AccountRecord(record.account.applying(changes))
            try updated.update(db)
            return updated.account
        }
    }

    public func incrementItemsSold(accountID: String) async throws -> Int {
        try await pool.domainWrite { db in
            try db.execute(sql: "UPDATE account SET itemsSold = itemsSold + 1 WHERE id = ?", arguments: [accountID])
            guard db.changesCount > 0,
                let count = try Int.fetchOne(
                    db,
                    sql: "SELECT itemsSold FROM account WHERE id = ?",
                    arguments: [accountID]
                )
            else { throw AccountsStoreError.accountNotFound }
            return count
        }
    }

    public func recordCompletedSale(
        saleID: String,
        sellerID: String,
        at date: Date
    ) async throws -> CompletedSaleRecord {
        try await pool.domainWrite { db in
            guard
                let itemsSold = try Int.fetchOne(
                    db,
                    sql: "SELECT itemsSold FROM account WHERE id = ?",
                    arguments: [sellerID]
                )
            else { throw AccountsStoreError.accountNotFound }
            if let recorded = try String.fetchOne(
                db,
                sql: "SELECT sellerID FROM completedSale WHERE saleID = ?",
                arguments: [saleID]
            ) {
                guard recorded == sellerID else { throw AccountsStoreError.saleRecordedForAnotherSeller }
                return CompletedSaleRecord(itemsSold: itemsSold, newlyRecorded: false)
            }
            try db.execute(
                sql: "INSERT INTO completedSale (saleID, sellerID, recordedAt) VALUES (?, ?, ?)",
                arguments: [saleID, sellerID, date.millisecondsSince1970]
            )
            try db.execute(sql: "UPDATE account SET itemsSold = itemsSold + 1 WHERE id = ?", arguments: [sellerID])
            return CompletedSaleRecord(itemsSold: itemsSold + 1, newlyRecorded: true)
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
        let record = OneTimeTokenRecord(token)
        try await pool.domainWrite { db in
            guard try AccountRecord.exists(db, key: record.accountID) else { throw AccountsStoreError.accountNotFound }
            guard try !OneTimeTokenRecord.exists(db, key: record.tokenHash) else { throw AccountsStoreError.tokenTaken }
            try record.insert(db)
        }
    }

    public func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account {
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            let token = try Self.consume(db, tokenHash: tokenHash, kind: .emailVerification, now: now)
            try db.execute(sql: "UPDATE account SET verified = 1 WHERE id = ?", arguments: [token.accountID])
            if let hash = token.passwordHash {
                try db.execute(
                    sql: "UPDATE account SET passwordHash = ? WHERE id = ?",
                    arguments: [hash, token.accountID]
                )
            }
            if let name = token.displayName {
                try db.execute(
                    sql: "UPDATE account SET displayName = ?, displayNameKey = ? WHERE id = ?",
                    arguments: [name, Account.searchKey(name), token.accountID]
                )
            }
            return try Self.fetchAccount(db, id: token.accountID)
        }
    }

    public func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account {
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            let accountID = try Self.consume(db, tokenHash: tokenHash, kind: .passwordReset, now: now).accountID
            try db.execute(
                sql: "UPDATE account SET passwordHash = ?, verified = 1 WHERE id = ?",
                arguments: [newPasswordHash, accountID]
            )
            try db.execute(sql: "DELETE FROM session WHERE accountID = ?", arguments: [accountID])
            return try Self.fetchAccount(db, id: accountID)
        }
    }

    public func changePassword(
        accountID: String,
        newPasswordHash: String,
        keepingSession: TokenHash?
    ) async throws -> Int {
        try await pool.domainWrite { db in
            try db.execute(
                sql: "UPDATE account SET passwordHash = ? WHERE id = ?",
                arguments: [newPasswordHash, accountID]
            )
            guard db.changesCount > 0 else { throw AccountsStoreError.accountNotFound }
            try db.execute(
                sql: "DELETE FROM session WHERE accountID = ? AND tokenHash IS NOT ?",
                arguments: [accountID, keepingSession?.rawValue]
            )
            let ended = db.changesCount
            try db.execute(
                sql: "DELETE FROM oneTimeToken WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
                arguments: [accountID, OneTimeToken.Kind.passwordReset.rawValue]
            )
            return ended
        }
    }

    /// Checks and marks a one-time token used, retiring the account's other unused tokens of that kind.
    ///
    /// - Returns: The token. Checks run in the same order as in the in-memory store.
    private static func consume(
        _ db: Database,
        tokenHash: TokenHash,
        kind: OneTimeToken.Kind,
        now: Int64
    ) throws -> OneTimeTokenRecord {
        guard let token = try OneTimeTokenRecord.fetchOne(db, key: tokenHash.rawValue), token.kind == kind.rawValue,
            try AccountRecord.exists(db, key: token.accountID)
        else { throw AccountsStoreError.linkNotValid }
        guard token.usedAt == nil else { throw AccountsStoreError.linkUsed }
        guard token.expiresAt > now else { throw AccountsStoreError.linkExpired }
        try db.execute(
            sql: "UPDATE oneTimeToken SET usedAt = ? WHERE accountID = ? AND kind = ? AND usedAt IS NULL",
            arguments: [now, token.accountID, token.kind]
        )
        return token
    }

    private static func fetchAccount(_ db: Database, id: String) throws -> Account {
        guard let record = try AccountRecord.fetchOne(db, key: id) else { throw AccountsStoreError.accountNotFound }
        return record.account
    }

    // MARK: Sessions

    public func createSession(_ session: Session) async throws {
        let record = SessionRecord(session)
        try await pool.domainWrite { db in
            guard try AccountRecord.exists(db, key: record.accountID) else { throw AccountsStoreError.accountNotFound }
            guard try !SessionRecord.exists(db, key: record.tokenHash) else { throw AccountsStoreError.sessionTaken }
            try record.insert(db)
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
            try db.execute(sql: "DELETE FROM session WHERE accountID = ?", arguments: [accountID])
            return db.changesCount
        }
    }

    public func deleteExpired(now: Date) async throws -> Int {
        let now = now.millisecondsSince1970
        return try await pool.domainWrite { db in
            try db.execute(sql: "DELETE FROM session WHERE expiresAt <= ?", arguments: [now])
            let sessions = db.changesCount
            try db.execute(sql: "DELETE FROM oneTimeToken WHERE expiresAt <= ?", arguments: [now])
            return sessions + db.changesCount
        }
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
                conditions.append("(displayNameKey > ? OR (displayNameKey = ? AND id > ?))")
                arguments += [cursor.n, cursor.n, cursor.i]
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
        let record = RatingRecord(rating)
        try await pool.domainWrite { db in
            guard try !RatingRecord.exists(db, key: record.saleID) else { throw AccountsStoreError.saleAlreadyRated }
            guard try AccountRecord.exists(db, key: record.sellerID) else { throw AccountsStoreError.sellerNotFound }
            guard try AccountRecord.exists(db, key: record.buyerID) else { throw AccountsStoreError.buyerNotFound }
            try record.insert(db)
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
                        WHERE sellerID = ? AND (createdAt < ? OR (createdAt = ? AND saleID < ?))
                        ORDER BY createdAt DESC, saleID DESC LIMIT ?
                        """,
                    arguments: [sellerID, cursor.t, cursor.t, cursor.i, limit]
                ).map(\.rating)
            }
            return try RatingRecord.fetchAll(
                db,
                sql: "SELECT * FROM rating WHERE sellerID = ? ORDER BY createdAt DESC, saleID DESC LIMIT ?",
                arguments: [sellerID, limit]
            ).map(\.rating)
        }
        return AccountsPaging.ratingsPage(fetched, size: page.size, sellerID: sellerID)
    }

    public func ratingSummary(sellerID: String) async throws -> RatingSummary {
        try await pool.domainRead { db in
            let row = try Row.fetchOne(
                db,
                sql: "SELECT COUNT(*) AS count, COALESCE(SUM(stars), 0) AS total FROM rating WHERE sellerID = ?",
                arguments: [sellerID]
            )
            return RatingSummary(count: row?["count"] ?? 0, totalStars: row?["total"] ?? 0)
        }
    }

    public func addReport(_ report: Report) async throws {
        let record = ReportRecord(report)
        try await pool.domainWrite { db in
            guard try !ReportRecord.exists(db, key: record.id) else { throw AccountsStoreError.reportIDTaken }
            guard try AccountRecord.exists(db, key: record.reporterID) else {
                throw AccountsStoreError.reporterNotFound
            }
            guard try AccountRecord.exists(db, key: record.reportedID) else {
                throw AccountsStoreError.reportedNotFound
            }
            try record.insert(db)
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
}
