import Foundation
import GRDB
import SkiffListings

extension SQLiteListingsStore {
    /// How many zip-only listings one transaction of ``fillSearchPoints(_:centroids:)`` reads and updates.
    static let searchPointBatchSize = 1_000

    /// Brings the search points of the listings posted with only a zip code in line with the ZIP-code
    /// table: run by ``SQLiteDatabase`` at open, after the migrations and before any store is handed out.
    ///
    /// A listing's search point (`searchLatitude`, `searchLongitude`, migration "listings-v5") is where
    /// distance search places it, ``SkiffListings/ListingRules/searchPoint(for:centroids:)``: its own
    /// point, else its zip code's centroid (``SkiffListings/ZipCentroids``), else none. Writes store it
    /// with the listing, and its grid cell ("listings-v6") with it. Points of listings with their own point never depend on the table ("listings-v5"
    /// copied them in SQL); zip-only listings' do, and the table is app data a migration may not read and
    /// that can change without a schema change. So `listingSearchPointVersion` records the version of the
    /// table their points were computed with, and when it is not `centroids.version` (a new table, or
    /// none yet: a database from before "listings-v5"), this recomputes them and records the version.
    ///
    /// - Bounded: zip-only listings are read along the coordinate index (`latitude IS NULL AND longitude IS
    ///   NULL`, in `docID` order from where the last batch stopped), ``searchPointBatchSize`` per write
    ///   transaction, so no transaction holds the writer long, and the work is done once per table
    ///   version; opening a database whose version matches costs one read.
    /// - Idempotent: each point is a function of the listing's zip code and the table; the version is
    ///   recorded in the last batch's transaction, so after an interruption the next open starts again and
    ///   computes the same points.
    ///
    /// - Returns: How many listings' search points changed (0 when the recorded version matches).
    @discardableResult
    static func fillSearchPoints(_ pool: DatabasePool, centroids: ZipCentroids) throws -> Int {
        let recorded = try pool.read { db in
            try String.fetchOne(db, sql: "SELECT zipCentroidsVersion FROM listingSearchPointVersion WHERE id = 1")
        }
        guard recorded != centroids.version else { return 0 }
        let batchSize = searchPointBatchSize
        var after = Int64.min
        var changed = 0
        while true {
            let (count, last, updated) = try pool.write { db -> (Int, Int64?, Int) in
                let rows = try Row.fetchAll(
                    db,
                    sql: zipOnlyListingsSQL,
                    arguments: [after, batchSize]
                )
                var updated = 0
                for row in rows {
                    let point = ListingRules.searchPoint(
                        for: ListingLocation(zipCode: row["zipCode"]),
                        centroids: centroids
                    )
                    try db.execute(
                        sql: """
                            UPDATE listing SET searchLatitude = ?, searchLongitude = ?, cell = ?
                            WHERE docID = ? AND (searchLatitude IS NOT ? OR searchLongitude IS NOT ?)
                            """,
                        arguments: [
                            point?.latitude, point?.longitude,
                            GridCells.key(latitude: point?.latitude, longitude: point?.longitude), row["docID"],
                            point?.latitude, point?.longitude,
                        ]
                    )
                    updated += db.changesCount
                }
                if rows.count < batchSize {
                    try db.execute(
                        sql: """
                            INSERT INTO listingSearchPointVersion (id, zipCentroidsVersion) VALUES (1, ?)
                            ON CONFLICT (id) DO UPDATE SET zipCentroidsVersion = excluded.zipCentroidsVersion
                            """,
                        arguments: [centroids.version]
                    )
                }
                return (rows.count, rows.last?["docID"], updated)
            }
            changed += updated
            guard count == batchSize, let last else { break }
            after = last
        }
        return changed
    }

    /// The next batch of zip-only listings after a `docID`, in `docID` order, read along the coordinate
    /// index (its entries with both coordinates NULL are in row id order).
    static let zipOnlyListingsSQL = """
        SELECT docID, zipCode FROM listing INDEXED BY listing_latitude_longitude
        WHERE latitude IS NULL AND longitude IS NULL AND docID > ?
        ORDER BY docID LIMIT ?
        """
}
