import Foundation
import GRDB
import SkiffAccounts
import SkiffDomain
import Testing

@testable import SkiffSQLite

@Suite("SQLite: accounts-v2")
struct SQLiteAccountsMigrationTests {
    @Test("A database from before accounts-v2 is migrated: items sold kept, completed sales recorded once")
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        // The previous version's schema, with a seller who sold two items already.
        do {
            let old = try DatabasePool(path: path)
            try SQLiteSchema.migrator.migrate(old, upTo: "bids-v1")
            try await old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO account (id, email, displayName, displayNameKey, passwordHash, verified, createdAt,
                            itemsSold)
                        VALUES ('usr_old', 'old@school.edu', 'Old', 'old', 'pbkdf2-sha256$1$AAAA$hash', 1, 0, 2)
                        """
                )
            }
            try old.close()
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let applied = try await database.pool.read { db in try SQLiteSchema.migrator.appliedIdentifiers(db) }
        #expect(applied.contains("accounts-v2"))
        let store = database.accountsStore()
        #expect(try await store.account(id: "usr_old")?.itemsSold == 2)
        let first = try await store.recordCompletedSale(saleID: "sal_1", sellerID: "usr_old", at: Fixture.t0)
        #expect(first == CompletedSaleRecord(itemsSold: 3, newlyRecorded: true))
        let again = try await store.recordCompletedSale(saleID: "sal_1", sellerID: "usr_old", at: Fixture.t0)
        #expect(again == CompletedSaleRecord(itemsSold: 3, newlyRecorded: false))
    }
}

@Suite("SQLite: accounts-v5")
struct SQLiteAccountsTokenCleanupTests {
    @Test(
        "accounts-v5 drops verification links from before the new rules (pending ones of unverified accounts stay) and gives old ratings their sale's id"
    )
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        let pending = SecretToken.generate()
        let stale = SecretToken.generate()
        let used = SecretToken.generate()
        let reset = SecretToken.generate()
        let expires = Fixture.date(plusSeconds: 3600).millisecondsSince1970
        do {
            let old = try DatabasePool(path: path)
            try SQLiteSchema.migrator.migrate(old, upTo: "listings-v3")
            try await old.write { db in
                for (id, verified) in [("usr_reset", 1), ("usr_waiting", 0)] {
                    try db.execute(
                        sql: """
                            INSERT INTO account (id, email, displayName, displayNameKey, passwordHash, verified,
                                createdAt, itemsSold)
                            VALUES (?, ?, 'Name', 'name', 'hash', ?, 0, 0)
                            """,
                        arguments: [id, "\(id)@school.edu", verified]
                    )
                }
                // A rating from before anonymous ratings: its public id becomes its sale's id.
                try db.execute(
                    sql: """
                        INSERT INTO rating (saleID, sellerID, buyerID, stars, comment, createdAt)
                        VALUES ('sal_old', 'usr_waiting', 'usr_reset', 4, 'Fine', 0)
                        """
                )
                // usr_reset was verified by a reset before the upgrade: an impostor's sign-up link is still
                // unused, and an older link was marked used.
                for (token, account, kind, usedAt) in [
                    (stale, "usr_reset", "emailVerification", nil), (used, "usr_reset", "emailVerification", 5),
                    (reset, "usr_reset", "passwordReset", 5), (pending, "usr_waiting", "emailVerification", nil),
                ] as [(SecretToken, String, String, Int64?)] {
                    try db.execute(
                        sql: """
                            INSERT INTO oneTimeToken (tokenHash, kind, accountID, expiresAt, createdAt, usedAt,
                                passwordHash, displayName)
                            VALUES (?, ?, ?, ?, 0, ?, 'impostor-hash', 'Impostor')
                            """,
                        arguments: [token.hash.rawValue, kind, account, expires, usedAt]
                    )
                }
            }
            try old.close()
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let store = database.accountsStore()
        for token in [stale, used] {
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: token.hash, now: Fixture.t0)
            }
        }
        #expect(try await store.account(id: "usr_reset")?.passwordHash == "hash")
        // A used reset link stays used; an unverified account's pending link still verifies it.
        await #expect(throws: AccountsStoreError.linkUsed) {
            _ = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "h", now: Fixture.t0)
        }
        #expect(try await store.verifyEmail(tokenHash: pending.hash, now: Fixture.t0).verified)
        let rating = try await store.ratings(sellerID: "usr_waiting", page: PageRequest()).items.first
        #expect(rating?.ratingID == "sal_old" && rating?.saleID == "sal_old" && rating?.anonymous == false)
    }
}
