import Foundation
import PostgresNIO
import SkiffAccounts
import SkiffDomain
import SkiffTesting
import Testing

@testable import SkiffPostgres

@Suite("PostgreSQL housekeeping prunes")
struct PostgresPruneTests {
    @Test(
        "Expired sessions, old feed events and old listing changes: batches of 1,000 delete all of them, and only them"
    )
    func batches() async throws {
        try await TestPostgres.withDatabase { storage in
            #expect(BatchedDelete.batchSize == 1_000)
            let account = try await storage.accountsStore().createAccount(Fixture.account("Pruned"))
            let cut = Fixture.t0.millisecondsSince1970
            // Past the cut: 2,500 expired sessions, 1,200 old feed events and 1,500 old changes; and a few of
            // each that stay.
            try await storage.withConnection { db in
                _ = try await db.query(
                    """
                    INSERT INTO session (token_hash, account_id, expires_at, created_at)
                    SELECT 'hash-' || i, \(account.id),
                        CASE WHEN i < 2500 THEN \(cut) - 1 - i ELSE \(cut) + 1000 + i END, 0
                    FROM generate_series(0, 2509) AS i
                    """,
                    logger: storage.logger
                )
                _ = try await db.query(
                    """
                    INSERT INTO feed_event (user_id, sequence, occurred_at, payload)
                    SELECT \(account.id), i + 1, CASE WHEN i < 1200 THEN \(cut) - 1 - i ELSE \(cut) + i END, '\\x00'
                    FROM generate_series(0, 1204) AS i
                    """,
                    logger: storage.logger
                )
                _ = try await db.query(
                    """
                    INSERT INTO listing_change
                        (sequence, listing_id, title, kind, new_price_cents, old_price_cents, changed_at)
                    SELECT i + 1, 'lst_x', 'Desk', 'updated', 1, 1,
                        CASE WHEN i < 1500 THEN \(cut) - 1 - i ELSE \(cut) + i END
                    FROM generate_series(0, 1506) AS i
                    """,
                    logger: storage.logger
                )
            }

            #expect(try await storage.accountsStore().deleteExpired(now: Fixture.t0) == 2_500)
            #expect(try await storage.chatStore().pruneFeed(before: Fixture.t0) == 1_200)
            #expect(try await storage.listingsStore().pruneChanges(before: Fixture.t0) == 1_500)
            let left = try await storage.withConnection { db in
                var counts: [Int] = []
                for table in ["session", "feed_event", "listing_change"] {
                    let rows = try await db.query(
                        PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"),
                        logger: storage.logger
                    )
                    for try await count in rows.decode(Int.self) { counts.append(count) }
                }
                return counts
            }
            #expect(left == [10, 5, 7])
            #expect(try await storage.accountsStore().deleteExpired(now: Fixture.t0) == 0)
            #expect(try await storage.chatStore().pruneFeed(before: Fixture.t0) == 0)
        }
    }
}
