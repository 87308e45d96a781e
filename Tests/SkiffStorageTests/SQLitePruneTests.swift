import Foundation
import GRDB
import SkiffAccounts
import SkiffDomain
import Testing

@testable import SkiffSQLite

@Suite("SQLite housekeeping prunes")
struct SQLitePruneTests {
    /// Writes the group-commit writer has run.
    private func writes(_ database: SQLiteDatabase) -> Int { database.storePool.writer.statistics.writes }

    @Test("Expired sessions, old feed events and old listing changes are deleted 1,000 rows a write, all of them")
    func batches() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        #expect(BatchedDelete.batchSize == 1_000)
        let account = try await database.accountsStore().createAccount(Fixture.account("Pruned"))
        let cut: Int64 = Fixture.t0.millisecondsSince1970
        // Past the cut: 2,500 expired sessions, 1,200 old feed events and 1,500 old changes; and a few of each
        // that stay.
        try await database.pool.write { db in
            for index in Int64(0)..<2_510 {
                let expiresAt: Int64 = index < 2_500 ? cut - 1 - index : cut + 1_000 + index
                try db.execute(
                    sql: "INSERT INTO session (tokenHash, accountID, expiresAt, createdAt) VALUES (?, ?, ?, 0)",
                    arguments: ["hash-\(index)", account.id, expiresAt]
                )
            }
            for index in Int64(0)..<1_205 {
                let occurredAt: Int64 = index < 1_200 ? cut - 1 - index : cut + index
                try db.execute(
                    sql: "INSERT INTO feedEvent (userID, sequence, occurredAt, payload) VALUES (?, ?, ?, x'00')",
                    arguments: [account.id, index + 1, occurredAt]
                )
            }
            for index in Int64(0)..<1_507 {
                let changedAt: Int64 = index < 1_500 ? cut - 1 - index : cut + index
                try db.execute(
                    sql: """
                        INSERT INTO listingChange (listingID, title, kind, newPriceCents, oldPriceCents, changedAt)
                        VALUES ('lst_x', 'Desk', 'updated', 1, 1, ?)
                        """,
                    arguments: [changedAt]
                )
            }
        }

        var before = writes(database)
        #expect(try await database.accountsStore().deleteExpired(now: Fixture.t0) == 2_500)
        // Sessions: 1,000, 1,000, 500; one-time tokens: none, one write to find that out.
        #expect(writes(database) - before == 4)
        before = writes(database)
        #expect(try await database.chatStore().pruneFeed(before: Fixture.t0) == 1_200)
        #expect(writes(database) - before == 2)
        before = writes(database)
        #expect(try await database.listingsStore().pruneChanges(before: Fixture.t0) == 1_500)
        #expect(writes(database) - before == 2)

        let left = try await database.pool.read { db in
            [
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM feedEvent"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listingChange"),
            ]
        }
        #expect(left == [10, 5, 7])
        // Nothing more to prune: one write each finds nothing.
        #expect(try await database.accountsStore().deleteExpired(now: Fixture.t0) == 0)
        #expect(try await database.chatStore().pruneFeed(before: Fixture.t0) == 0)
    }
}
