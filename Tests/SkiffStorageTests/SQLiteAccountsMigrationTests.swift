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
