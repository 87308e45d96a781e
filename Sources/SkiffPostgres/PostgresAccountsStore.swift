public import Foundation
import PostgresNIO
public import SkiffAccounts
public import SkiffDomain

/// The PostgreSQL ``SkiffAccounts/AccountsStore``.
///
/// Each mutation is one SERIALIZABLE transaction (``PostgresStorage/write(_:)``): it loads what
/// ``SkiffAccounts/AccountLifecycle`` needs, lets it decide (uniqueness, existence, token state) and saves
/// the result, as the SQLite and in-memory stores do, so the errors match exactly. Two servers racing on
/// the same rows cannot both act on what they read: PostgreSQL aborts one, which is run again and then
/// sees the other's write. Reads are one snapshot each.
///
/// Get one from ``PostgresStorage/accountsStore()``.
public struct PostgresAccountsStore: AccountsStore {
    private let storage: PostgresStorage

    init(storage: PostgresStorage) {
        self.storage = storage
    }

    // MARK: Accounts

    public func createAccount(_ account: Account) async throws -> Account {
        try await storage.write { db in
            let stored = try AccountLifecycle.createAccount(
                account,
                emailTaken: try await self.account(db, email: account.email) != nil,
                accountIDTaken: try await db.exists("SELECT 1 FROM account WHERE id = \(account.id)", storage)
            )
            try await db.run(AccountRows.insert(stored), storage)
            return stored
        }
    }

    public func registerSignUp(_ account: Account, token: OneTimeToken) async throws -> SignUpRegistration {
        try await storage.write { db in
            let signUp = try AccountLifecycle.registerSignUp(
                account,
                token: token,
                tokenTaken: try await db.exists(
                    "SELECT 1 FROM one_time_token WHERE token_hash = \(token.tokenHash.rawValue)",
                    storage
                ),
                existing: try await self.account(db, email: account.email),
                accountIDTaken: try await db.exists("SELECT 1 FROM account WHERE id = \(account.id)", storage)
            )
            switch signUp.registration {
            case .created(let account): try await db.run(AccountRows.insert(account), storage)
            case .pending(let account): try await db.run(AccountRows.update(account), storage)
            case .alreadyVerified: break
            }
            try await db.run(TokenRows.insert(signUp.token), storage)
            return signUp.registration
        }
    }

    public func account(id: String) async throws -> Account? {
        try await storage.read { db in try await account(db, id: id) }
    }

    public func account(email: String) async throws -> Account? {
        try await storage.read { db in try await account(db, email: email) }
    }

    public func accounts(ids: Set<String>) async throws -> [String: Account] {
        guard !ids.isEmpty else { return [:] }
        let list = Array(ids)
        return try await storage.read { db in
            let rows = try await AccountRows.accounts(
                db.run("SELECT \(unescaped: AccountRows.columns) FROM account WHERE id = ANY(\(list))", storage)
            )
            return Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    public func updateProfile(id: String, changes: ProfileChanges) async throws -> Account {
        try await storage.write { db in
            let updated = try AccountLifecycle.updateProfile(try await account(db, id: id), changes: changes)
            try await db.run(AccountRows.update(updated), storage)
            return updated
        }
    }

    public func incrementItemsSold(accountID: String) async throws -> Int {
        try await storage.write { db in
            let itemsSold = try AccountLifecycle.incrementItemsSold(try await itemsSold(db, accountID))
            try await db.run("UPDATE account SET items_sold = \(itemsSold) WHERE id = \(accountID)", storage)
            return itemsSold
        }
    }

    public func recordCompletedSale(
        saleID: String,
        sellerID: String,
        at date: Date
    ) async throws -> CompletedSaleRecord {
        try await storage.write { db in
            var recordedSellerID: String?
            for try await seller in try await db.run(
                "SELECT seller_id FROM completed_sale WHERE sale_id = \(saleID)",
                storage
            ).decode(String.self) {
                recordedSellerID = seller
            }
            let record = try AccountLifecycle.recordCompletedSale(
                sellerID: sellerID,
                itemsSold: try await itemsSold(db, sellerID),
                recordedSellerID: recordedSellerID
            )
            guard record.newlyRecorded else { return record }
            try await db.run(
                """
                INSERT INTO completed_sale (sale_id, seller_id, recorded_at)
                VALUES (\(saleID), \(sellerID), \(date.millisecondsSince1970))
                """,
                storage
            )
            try await db.run("UPDATE account SET items_sold = \(record.itemsSold) WHERE id = \(sellerID)", storage)
            return record
        }
    }

    public func avatarImageIDs(among imageIDs: [String]) async throws -> Set<String> {
        let unique = Array(Set(imageIDs))
        guard !unique.isEmpty else { return [] }
        return try await storage.read { db in
            var found: Set<String> = []
            for try await id in try await db.run(
                "SELECT DISTINCT avatar_image_id FROM account WHERE avatar_image_id = ANY(\(unique))",
                storage
            ).decode(String.self) {
                found.insert(id)
            }
            return found
        }
    }

    // MARK: One-time tokens and passwords

    public func insertOneTimeToken(_ token: OneTimeToken) async throws {
        try await storage.write { db in
            let stored = try AccountLifecycle.insertOneTimeToken(
                token,
                accountExists: try await liveAccountExists(db, token.accountID),
                tokenTaken: try await db.exists(
                    "SELECT 1 FROM one_time_token WHERE token_hash = \(token.tokenHash.rawValue)",
                    storage
                )
            )
            if stored.kind == .emailChange { try await cancelEmailChanges(db, of: stored.accountID) }
            try await db.run(TokenRows.insert(stored), storage)
        }
    }

    public func changeEmail(tokenHash: TokenHash, now: Date) async throws -> AccountLifecycle.EmailChange {
        try await storage.write { db in
            let (token, account) = try await tokenAndAccount(db, tokenHash)
            var holder: Account?
            if let newEmail = token?.newEmail { holder = try await self.account(db, email: newEmail) }
            let change = try AccountLifecycle.changeEmail(
                token: token,
                account: account,
                newEmailHolder: holder,
                now: now
            )
            if let released = change.releasedAccountID {
                // Its tokens and sessions go with it (ON DELETE CASCADE); a pending sign-up has nothing else.
                try await db.run("DELETE FROM account WHERE id = \(released)", storage)
            }
            let accountID = change.account.id
            try await consumeToken(db, tokenHash, of: accountID, kind: .emailChange, at: change.usedAt)
            try await db.run(
                """
                UPDATE one_time_token SET used_at = \(change.usedAt.millisecondsSince1970)
                WHERE account_id = \(accountID) AND kind = \(OneTimeToken.Kind.passwordReset.rawValue)
                    AND used_at IS NULL
                """,
                storage
            )
            try await db.run(AccountRows.update(change.account), storage)
            return change
        }
    }

    public func deleteAccount(id: String, now: Date) async throws -> Account {
        try await storage.write { db in
            let erased = try AccountLifecycle.deleteAccount(try await account(db, id: id), now: now)
            try await db.run(AccountRows.update(erased), storage)
            try await db.run("DELETE FROM session WHERE account_id = \(id)", storage)
            try await db.run("DELETE FROM one_time_token WHERE account_id = \(id)", storage)
            try await db.run("DELETE FROM external_identity WHERE account_id = \(id)", storage)
            return erased
        }
    }

    public func logInExternally(
        _ identity: ExternalIdentity,
        email: String?,
        newAccount: Account,
        now: Date
    ) async throws -> AccountLifecycle.ExternalLogIn {
        try await storage.write { db in
            var linked: Account?
            for try await accountID in try await db.run(
                """
                SELECT account_id FROM external_identity
                WHERE issuer = \(identity.issuer) AND subject = \(identity.subject)
                """,
                storage
            ).decode(String.self) {
                linked = try await account(db, id: accountID)
            }
            var withEmail: Account?
            if let email { withEmail = try await account(db, email: email) }
            let decision = try AccountLifecycle.externalLogIn(
                linkedAccount: linked,
                accountWithEmail: withEmail,
                email: email,
                newAccount: newAccount,
                accountIDTaken: try await db.exists("SELECT 1 FROM account WHERE id = \(newAccount.id)", storage)
            )
            let link: PostgresQuery? =
                switch decision {
                case .linked: nil
                case .linking(let account), .creating(let account):
                    """
                    INSERT INTO external_identity (issuer, subject, account_id, created_at)
                    VALUES (\(identity.issuer), \(identity.subject), \(account.id), \(now.millisecondsSince1970))
                    ON CONFLICT (issuer, subject) DO UPDATE SET account_id = excluded.account_id
                    """
                }
            switch decision {
            case .linked: break
            case .linking(let account):
                if withEmail?.verified == false {
                    try await deleteUnusedTokens(db, of: account.id, kind: .emailVerification)
                }
                try await db.run(AccountRows.update(account), storage)
            case .creating(let account):
                try await db.run(AccountRows.insert(account), storage)
            }
            if let link { try await db.run(link, storage) }
            return decision
        }
    }

    public func verifyEmail(tokenHash: TokenHash, now: Date) async throws -> Account {
        try await storage.write { db in
            let (token, account) = try await tokenAndAccount(db, tokenHash)
            guard let consumption = try AccountLifecycle.verifyEmail(token: token, account: account, now: now) else {
                return account!  // verified by this token already: nothing changes
            }
            try await consumeToken(
                db,
                tokenHash,
                of: consumption.account.id,
                kind: .emailVerification,
                at: consumption.usedAt
            )
            try await db.run(AccountRows.update(consumption.account), storage)
            return consumption.account
        }
    }

    public func resetPassword(tokenHash: TokenHash, newPasswordHash: String, now: Date) async throws -> Account {
        try await storage.write { db in
            let (token, account) = try await tokenAndAccount(db, tokenHash)
            let consumption = try AccountLifecycle.resetPassword(
                token: token,
                account: account,
                newPasswordHash: newPasswordHash,
                now: now
            )
            try await consumeToken(
                db,
                tokenHash,
                of: consumption.account.id,
                kind: .passwordReset,
                at: consumption.usedAt
            )
            try await db.run(AccountRows.update(consumption.account), storage)
            try await db.run("DELETE FROM session WHERE account_id = \(consumption.account.id)", storage)
            return consumption.account
        }
    }

    public func changePassword(
        accountID: String,
        newPasswordHash: String,
        keepingSession: TokenHash?
    ) async throws -> Int {
        try await storage.write { db in
            let account = try AccountLifecycle.changePassword(
                try await account(db, id: accountID),
                newPasswordHash: newPasswordHash
            )
            try await db.run(AccountRows.update(account), storage)
            let kept = keepingSession?.rawValue
            let ended = try await db.count(
                """
                WITH ended AS (
                    DELETE FROM session WHERE account_id = \(accountID) AND token_hash IS DISTINCT FROM \(kept)
                    RETURNING 1
                )
                SELECT count(*) FROM ended
                """,
                storage
            )
            try await deleteUnusedTokens(db, of: accountID, kind: .passwordReset)
            try await cancelEmailChanges(db, of: accountID)
            return ended
        }
    }

    // MARK: Sessions

    public func createSession(_ session: Session) async throws {
        try await storage.write { db in
            let stored = try AccountLifecycle.createSession(
                session,
                accountExists: try await liveAccountExists(db, session.accountID),
                sessionTaken: try await db.exists(
                    "SELECT 1 FROM session WHERE token_hash = \(session.tokenHash.rawValue)",
                    storage
                )
            )
            try await db.run(
                """
                INSERT INTO session (token_hash, account_id, expires_at, created_at)
                VALUES (\(stored.tokenHash.rawValue), \(stored.accountID), \(stored.expiresAt.millisecondsSince1970),
                    \(stored.createdAt.millisecondsSince1970))
                """,
                storage
            )
        }
    }

    public func session(tokenHash: TokenHash, now: Date) async throws -> Session? {
        let now = now.millisecondsSince1970
        return try await storage.read { db in
            let rows = try await db.run(
                """
                SELECT token_hash, account_id, expires_at, created_at FROM session
                WHERE token_hash = \(tokenHash.rawValue) AND expires_at > \(now)
                """,
                storage
            )
            for try await (hash, accountID, expiresAt, createdAt) in rows.decode((String, String, Int64, Int64).self) {
                return Session(
                    tokenHash: TokenHash(rawValue: hash),
                    accountID: accountID,
                    expiresAt: Date(millisecondsSince1970: expiresAt),
                    createdAt: Date(millisecondsSince1970: createdAt)
                )
            }
            return nil
        }
    }

    public func deleteSession(tokenHash: TokenHash) async throws -> Bool {
        try await storage.write { db in
            try await db.exists("DELETE FROM session WHERE token_hash = \(tokenHash.rawValue) RETURNING 1", storage)
        }
    }

    public func deleteAllSessions(accountID: String) async throws -> Int {
        try await storage.write { db in
            let ended = try await db.count(
                """
                WITH ended AS (DELETE FROM session WHERE account_id = \(accountID) RETURNING 1)
                SELECT count(*) FROM ended
                """,
                storage
            )
            try await cancelEmailChanges(db, of: accountID)
            return ended
        }
    }

    public func deleteExpired(now: Date) async throws -> Int {
        let now = now.millisecondsSince1970
        // Both tables are keyed by the token's hash and expire by `expires_at`.
        func deleteExpired(from table: String) async throws -> Int {
            try await storage.deleteInBatches { limit in
                """
                WITH deleted AS (
                    DELETE FROM \(unescaped: table) WHERE token_hash IN
                        (SELECT token_hash FROM \(unescaped: table) WHERE expires_at <= \(now) LIMIT \(limit))
                    RETURNING 1
                )
                SELECT count(*) FROM deleted
                """
            }
        }
        return try await deleteExpired(from: "session") + deleteExpired(from: "one_time_token")
    }

    // MARK: Search

    public func searchUsers(nameQuery: String, page: PageRequest) async throws -> Page<Account> {
        let queryKey = Account.searchKey(nameQuery)
        let cursor = try AccountsPaging.searchCursor(page, queryKey: queryKey)
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            // Walks the (display_name_key, id) index from the cursor, keeping names that contain the key.
            var query = PostgresQueryBuilder("SELECT \(AccountRows.columns) FROM account WHERE true")
            if !queryKey.isEmpty {
                let key = query.bind(queryKey)
                query.append(" AND strpos(display_name_key, \(key)) > 0")
            }
            if let cursor {
                let (name, id) = (query.bind(cursor.n), query.bind(cursor.i))
                query.append(" AND (display_name_key, id) > (\(name), \(id))")
            }
            let limit = query.bind(limit)
            query.append(" ORDER BY display_name_key, id LIMIT \(limit)")
            return try await AccountRows.accounts(db.run(query.query, storage))
        }
        return AccountsPaging.searchPage(fetched, size: page.size, queryKey: queryKey)
    }

    // MARK: Ratings and reports

    public func addRating(_ rating: Rating) async throws {
        try await storage.write { db in
            let stored = try AccountLifecycle.addRating(
                rating,
                saleRated: try await db.exists("SELECT 1 FROM rating WHERE sale_id = \(rating.saleID)", storage),
                sellerExists: try await db.exists("SELECT 1 FROM account WHERE id = \(rating.sellerID)", storage),
                buyerExists: try await db.exists("SELECT 1 FROM account WHERE id = \(rating.buyerID)", storage)
            )
            try await db.run(
                """
                INSERT INTO rating (sale_id, rating_id, seller_id, buyer_id, stars, comment, created_at, anonymous)
                VALUES (\(stored.saleID), \(stored.ratingID), \(stored.sellerID), \(stored.buyerID), \(stored.stars),
                    \(stored.comment), \(stored.createdAt.millisecondsSince1970), \(stored.anonymous))
                """,
                storage
            )
        }
    }

    public func ratings(sellerID: String, page: PageRequest) async throws -> Page<Rating> {
        let cursor = try AccountsPaging.ratingsCursor(page, sellerID: sellerID)
        let limit = page.size + 1
        let fetched = try await storage.read { db in
            var query = PostgresQueryBuilder("SELECT \(RatingRows.columns) FROM rating WHERE seller_id = ")
            query.append(query.bind(sellerID))
            if let cursor {
                let (time, id) = (query.bind(cursor.t), query.bind(cursor.i))
                query.append(" AND (created_at, rating_id) < (\(time), \(id))")
            }
            let limit = query.bind(limit)
            query.append(" ORDER BY created_at DESC, rating_id DESC LIMIT \(limit)")
            return try await RatingRows.ratings(db.run(query.query, storage))
        }
        return AccountsPaging.ratingsPage(fetched, size: page.size, sellerID: sellerID)
    }

    public func ratingSummary(sellerID: String) async throws -> RatingSummary {
        try await storage.read { db in
            let rows = try await db.run(
                "SELECT count(*)::bigint, COALESCE(sum(stars), 0)::bigint FROM rating WHERE seller_id = \(sellerID)",
                storage
            )
            for try await (count, total) in rows.decode((Int, Int).self) {
                return RatingSummary(count: count, totalStars: total)
            }
            return RatingSummary(count: 0, totalStars: 0)
        }
    }

    public func addReport(_ report: Report) async throws {
        try await storage.write { db in
            let stored = try AccountLifecycle.addReport(
                report,
                reportIDTaken: try await db.exists("SELECT 1 FROM report WHERE id = \(report.id)", storage),
                reporterExists: try await db.exists("SELECT 1 FROM account WHERE id = \(report.reporterID)", storage),
                reportedExists: try await db.exists("SELECT 1 FROM account WHERE id = \(report.reportedID)", storage),
                reportOpen: try await db.exists(
                    """
                    SELECT 1 FROM report WHERE reporter_id = \(report.reporterID) AND reported_id = \(report.reportedID)
                    LIMIT 1
                    """,
                    storage
                )
            )
            try await db.run(
                """
                INSERT INTO report (id, reporter_id, reported_id, reason, details, created_at)
                VALUES (\(stored.id), \(stored.reporterID), \(stored.reportedID), \(stored.reason), \(stored.details),
                    \(stored.createdAt.millisecondsSince1970))
                """,
                storage
            )
        }
    }

    public func reports(reportedID: String) async throws -> [Report] {
        try await storage.read { db in
            var reports: [Report] = []
            let rows = try await db.run(
                """
                SELECT id, reporter_id, reported_id, reason, details, created_at FROM report
                WHERE reported_id = \(reportedID) ORDER BY created_at, id
                """,
                storage
            )
            for try await (id, reporter, reported, reason, details, createdAt) in rows.decode(
                (String, String, String, String, String, Int64).self
            ) {
                reports.append(
                    Report(
                        id: id,
                        reporterID: reporter,
                        reportedID: reported,
                        reason: reason,
                        details: details,
                        createdAt: Date(millisecondsSince1970: createdAt)
                    )
                )
            }
            return reports
        }
    }

    // MARK: Helpers

    private func account(_ db: PostgresConnection, id: String) async throws -> Account? {
        try await AccountRows.accounts(
            db.run("SELECT \(unescaped: AccountRows.columns) FROM account WHERE id = \(id)", storage)
        ).first
    }

    /// The account with this e-mail address (normalized here), or `nil`.
    private func account(_ db: PostgresConnection, email: String) async throws -> Account? {
        let normalized = Account.normalizedEmail(email)
        return try await AccountRows.accounts(
            db.run("SELECT \(unescaped: AccountRows.columns) FROM account WHERE email = \(normalized)", storage)
        ).first
    }

    /// An account's number of items sold, or `nil` if there is no such account.
    private func itemsSold(_ db: PostgresConnection, _ accountID: String) async throws -> Int? {
        for try await sold in try await db.run("SELECT items_sold FROM account WHERE id = \(accountID)", storage)
            .decode(Int.self)
        {
            return sold
        }
        return nil
    }

    /// The one-time token with this hash and its account, each `nil` if there is none.
    private func tokenAndAccount(
        _ db: PostgresConnection,
        _ tokenHash: TokenHash
    ) async throws -> (OneTimeToken?, Account?) {
        let token = try await TokenRows.tokens(
            db.run(
                "SELECT \(unescaped: TokenRows.columns) FROM one_time_token WHERE token_hash = \(tokenHash.rawValue)",
                storage
            )
        ).first
        guard let token else { return (nil, nil) }
        return (token, try await account(db, id: token.accountID))
    }

    private func deleteUnusedTokens(
        _ db: PostgresConnection,
        of accountID: String,
        kind: OneTimeToken.Kind
    )
        async throws
    {
        try await db.run(
            """
            DELETE FROM one_time_token
            WHERE account_id = \(accountID) AND kind = \(kind.rawValue) AND used_at IS NULL
            """,
            storage
        )
    }

    /// Deletes the account's unused e-mail change tokens: a change asked for with a password that has just
    /// been replaced (or by a session just ended) must not go through.
    private func cancelEmailChanges(_ db: PostgresConnection, of accountID: String) async throws {
        try await deleteUnusedTokens(db, of: accountID, kind: .emailChange)
    }

    /// Whether an account exists and is not deleted.
    private func liveAccountExists(_ db: PostgresConnection, _ id: String) async throws -> Bool {
        try await db.exists("SELECT 1 FROM account WHERE id = \(id) AND deleted_at IS NULL", storage)
    }

    /// Marks the token used at `date` and retires the account's other unused tokens: verification tokens
    /// are deleted whichever kind was used (both prove the address), tokens of the used kind are marked
    /// used, and a password reset cancels pending e-mail changes.
    private func consumeToken(
        _ db: PostgresConnection,
        _ used: TokenHash,
        of accountID: String,
        kind: OneTimeToken.Kind,
        at date: Date
    ) async throws {
        let at = date.millisecondsSince1970
        try await db.run("UPDATE one_time_token SET used_at = \(at) WHERE token_hash = \(used.rawValue)", storage)
        try await deleteUnusedTokens(db, of: accountID, kind: .emailVerification)
        if kind != .emailVerification {
            try await db.run(
                """
                UPDATE one_time_token SET used_at = \(at)
                WHERE account_id = \(accountID) AND kind = \(kind.rawValue) AND used_at IS NULL
                """,
                storage
            )
        }
        if kind == .passwordReset { try await cancelEmailChanges(db, of: accountID) }
    }
}

extension PostgresStorage {
    /// The Accounts store on this database.
    public func accountsStore() -> PostgresAccountsStore { PostgresAccountsStore(storage: self) }
}
