import ArgumentParser
import Foundation
import GRDB
import NIOCore
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffSQLite
import SkiffServer
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

@Suite("Restart on a large database")
struct RestartTests {
    @Test("a server opens a database of 100,000 listings at once and serves it")
    func hundredThousandListings() async throws {
        try await withTemporaryDatabasePath { path in
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            do {
                let database = try SQLiteDatabase(path: path)
                try await database.pool.write { db in
                    try db.execute(
                        sql: """
                            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
                            INSERT INTO listing (id, sellerID, title, titleKey, description, priceCents, category,
                                condition, size, tags, madeOnCampus, biddingEnabled, anonymous, zipCode, latitude,
                                longitude, imageIDs, status, createdAt, updatedAt, searchTitle, searchDescription,
                                searchTags)
                            SELECT 'lst_seed' || i, 'usr_seed', 'Seeded textbook ' || i, 'seeded textbook ' || i,
                                'A seeded listing', i, 'books', 'new', '', '[]', 0, 0, 0, '37235', NULL, NULL, '[]',
                                'active', 1767225600000 + i, 1767225600000 + i, 'seeded textbook ' || i,
                                'a seeded listing', ''
                            FROM n
                            """
                    )
                }
                try database.close()
            }
            // Opening a large database works (migrations check included); how long it takes is measured
            // in Benchmarks, not here (no timings in tests).
            let storage = StorageSelection(defaultBackend: .sqlite(path: path))
            try await withTestApplication(.forTests(storage: storage)) { test in
                let newest = try await test.listings.searchListings(.with { $0.pageSize = 5 })
                #expect(newest.results.first?.listing.listingID == "lst_seed100000")
                let found = try await test.listings.searchListings(.with { $0.query = "textbook 99999" })
                #expect(found.results.contains { $0.listing.listingID == "lst_seed99999" })
            }
        }
    }
}
