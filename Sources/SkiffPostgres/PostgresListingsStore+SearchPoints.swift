import Foundation
import PostgresNIO
import SkiffDomain
public import SkiffListings

extension PostgresStorage {
    /// Brings every listing's search point and its grid cell in line with this version of Skiff: the
    /// equivalent of what `SQLiteDatabase.open` does for its listings, to run once at start (after
    /// ``open(_:connectTimeout:logger:)``, before serving), with ``SkiffListings/ZipCentroids/bundled()``.
    ///
    /// A listing's search point (`search_latitude`, `search_longitude`) is where distance search
    /// places it, ``SkiffListings/ListingRules/searchPoint(for:centroids:)``: its own point, else its ZIP
    /// code's centroid, else none; `search_cell_latitude`, `search_cell_longitude` hold that point's
    /// grid cell centre (`ApproximateLocation`). Writes store both with the listing, computed by the
    /// version of Skiff that wrote it; the ZIP-code table and the grid are app data that can change
    /// without a schema change, so `listing_search_point_version` records the table's version and the
    /// grid they were computed with, and when that is not this version's, this recomputes them.
    ///
    /// - Bounded: listings are read in id order from where the last batch stopped,
    ///   ``listingsSearchPointBatchSize`` per write transaction, and the work is done once per version;
    ///   when the recorded version matches, this costs one read.
    /// - Idempotent and safe on several servers at once: each point is a function of the listing's
    ///   location and the table, and the version is recorded in the last batch's transaction.
    ///
    /// - Returns: How many listings' search points changed (0 when the recorded version matches).
    @discardableResult
    public func fillListingsSearchPoints(centroids: ZipCentroids) async throws -> Int {
        let version = Self.listingsSearchPointVersion(centroids)
        let recorded = try await read { db in
            for try await recorded in try await db.run(
                "SELECT version FROM listing_search_point_version WHERE id = 1",
                self
            ).decode(String.self) {
                return Optional(recorded)
            }
            return nil
        }
        guard recorded != version else { return 0 }
        var after = ""
        var changed = 0
        while true {
            let (count, last, updated) = try await write { db in
                try await Self.fillListingsSearchPoints(db, self, after: after, centroids: centroids, version: version)
            }
            changed += updated
            guard count == Self.listingsSearchPointBatchSize, let last else { break }
            after = last
        }
        return changed
    }

    /// How many listings one transaction of ``fillListingsSearchPoints(centroids:)`` reads.
    static let listingsSearchPointBatchSize = 1_000

    /// The version search points are computed with: the ZIP-code table's and the grid's.
    static func listingsSearchPointVersion(_ centroids: ZipCentroids) -> String {
        "\(centroids.version)|cell=\(ApproximateLocation.cellDegrees)"
    }

    /// One batch: the listings after `after` in id order; records `version` after the last one.
    private static func fillListingsSearchPoints(
        _ db: PostgresConnection,
        _ storage: PostgresStorage,
        after: String,
        centroids: ZipCentroids,
        version: String
    ) async throws -> (count: Int, last: String?, updated: Int) {
        var listings: [(id: String, location: ListingLocation, stored: [Double?])] = []
        let rows = try await db.run(
            """
            SELECT id, zip_code, latitude, longitude, search_latitude, search_longitude, search_cell_latitude,
                search_cell_longitude
            FROM listing WHERE id > \(after) ORDER BY id LIMIT \(listingsSearchPointBatchSize)
            """,
            storage
        )
        for try await (id, zip, latitude, longitude, searchLatitude, searchLongitude, cellLatitude, cellLongitude)
            in rows.decode((String, String, Double?, Double?, Double?, Double?, Double?, Double?).self)
        {
            let point = latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
            listings.append(
                (
                    id, ListingLocation(zipCode: zip, point: point),
                    [searchLatitude, searchLongitude, cellLatitude, cellLongitude]
                )
            )
        }
        var updated = 0
        for listing in listings {
            let (point, cell) = ListingsRows.searchPoint(listing.location, centroids: centroids)
            guard [point?.latitude, point?.longitude, cell?.latitude, cell?.longitude] != listing.stored else {
                continue
            }
            try await db.run(
                """
                UPDATE listing SET search_latitude = \(point?.latitude), search_longitude = \(point?.longitude),
                    search_cell_latitude = \(cell?.latitude), search_cell_longitude = \(cell?.longitude)
                WHERE id = \(listing.id)
                """,
                storage
            )
            updated += 1
        }
        if listings.count < listingsSearchPointBatchSize {
            try await db.run(
                """
                INSERT INTO listing_search_point_version (id, version) VALUES (1, \(version))
                ON CONFLICT (id) DO UPDATE SET version = excluded.version
                """,
                storage
            )
        }
        return (listings.count, listings.last?.id, updated)
    }
}
