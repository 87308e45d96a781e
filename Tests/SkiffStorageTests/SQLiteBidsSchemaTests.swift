import Foundation
import GRDB
import SkiffBids
import SkiffDomain
import Testing

@testable import SkiffSQLite

/// The Bids schema's own defences, below the store: one sale per listing, one live bid per bidder and
/// listing, whatever code writes the rows.
@Suite("SQLite bids schema")
struct SQLiteBidsSchemaTests {
    @Test("bids-v1 is registered after accounts-v1 and creates the Bids tables")
    func migration() async throws {
        let ids = SQLiteSchema.migrationIdentifiers
        let bids = try #require(ids.firstIndex(of: "bids-v1"))
        #expect(try #require(ids.firstIndex(of: "accounts-v1")) < bids)
        try await withDatabase { database in
            let tables = try await database.pool.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            }
            #expect(Set(["bid", "sale", "acceptanceClaim", "bidEvent"]).isSubset(of: Set(tables)))
        }
    }

    @Test("A second sale of a listing, or a second live bid of a bidder, is refused by the schema")
    func constraints() async throws {
        try await withDatabase { database in
            let bid: @Sendable (String, String, BidState) -> BidRecord = { id, bidder, state in
                BidRecord(
                    Bid(
                        id: id,
                        listingID: "lst_1",
                        sellerID: "usr_s",
                        bidderID: bidder,
                        amountCents: 100,
                        state: state,
                        createdAt: Fixture.t0
                    )
                )
            }
            let sale: @Sendable (String, String) -> SaleRecord = { id, bidID in
                SaleRecord(
                    Sale(
                        id: id,
                        listingID: "lst_1",
                        listingTitle: "T",
                        category: .books,
                        bidID: bidID,
                        buyerID: "usr_b",
                        sellerID: "usr_s",
                        amountCents: 100,
                        createdAt: Fixture.t0
                    )
                )
            }
            func code(_ body: @escaping @Sendable (Database) throws -> Void) async -> DomainError.Code? {
                do {
                    try await database.storePool.domainWrite(body)
                    return nil
                } catch {
                    return (error as? DomainError)?.code
                }
            }
            #expect(await code { db in try bid("bid_1", "usr_a", .accepted).insert(db) } == nil)
            #expect(await code { db in try bid("bid_2", "usr_b", .pending).insert(db) } == nil)
            #expect(await code { db in try bid("bid_3", "usr_b", .countered).insert(db) } == .alreadyExists)
            #expect(await code { db in try bid("bid_4", "usr_b", .withdrawn).insert(db) } == nil)
            #expect(await code { db in try sale("sale_1", "bid_1").insert(db) } == nil)
            #expect(await code { db in try sale("sale_2", "bid_2").insert(db) } == .alreadyExists)
        }
    }

    private func withDatabase(_ body: (SQLiteDatabase) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        try await body(database)
    }
}
