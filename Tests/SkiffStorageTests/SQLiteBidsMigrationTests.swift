import Foundation
import GRDB
import SkiffBids
import SkiffDomain
import Testing

@testable import SkiffSQLite

@Suite("SQLite: bids-v4")
struct SQLiteBidsMigrationTests {
    @Test("A sale from before bids-v4 is kept with no hand-off place, and can pick one afterwards")
    func upgrade() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("skiff.sqlite")
        do {
            let old = try DatabasePool(path: path)
            try SQLiteSchema.migrator.migrate(old, upTo: "accounts-v5")
            try await old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO bid (id, listingID, sellerID, bidderID, amountCents, state, acceptedAmountCents,
                            saleID, createdAt, updatedAt)
                        VALUES ('bid_old', 'lst_old', 'usr_seller', 'usr_buyer', 900, 'accepted', 900, 'sale_old', 0, 0);
                        INSERT INTO sale (id, listingID, listingTitle, category, bidID, buyerID, sellerID, amountCents,
                            state, createdAt)
                        VALUES ('sale_old', 'lst_old', 'Lamp', 'furniture', 'bid_old', 'usr_buyer', 'usr_seller', 900,
                            'pendingHandoff', 0);
                        """
                )
            }
            try old.close()
        }
        let database = try await SQLiteDatabase.open(atPath: path)
        defer { try? database.close() }
        let store = database.bidsStore()
        let sale = try #require(try await store.sale(id: "sale_old"))
        #expect(sale.handoffPlace == nil && sale.amountCents == 900 && sale.state == .pendingHandoff)
        let place = HandoffPlace(id: "gate", name: "North gate", latitude: 1.5, longitude: 2.5, hours: "24/7")
        let picked = try await store.confirmHandoff(
            saleID: "sale_old",
            userID: "usr_buyer",
            place: place,
            now: Fixture.t0
        )
        #expect(picked.value.sale.handoffPlace == place)
        #expect(try await store.sale(id: "sale_old")?.handoffPlace == place)
    }
}
