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

    /// The version search points are computed with: the ZIP-code table's and the grid's (and, since
    /// "listings-v2", the cell key stored in `search_cell`).
    static func listingsSearchPointVersion(_ centroids: ZipCentroids) -> String {
        "\(centroids.version)|cell=\(ApproximateLocation.cellDegrees)|key"
    }

    /// One batch: the listings after `after` in id order, the changed ones written back in one statement;
    /// records `version` after the last one.
    private static func fillListingsSearchPoints(
        _ db: PostgresConnection,
        _ storage: PostgresStorage,
        after: String,
        centroids: ZipCentroids,
        version: String
    ) async throws -> (count: Int, last: String?, updated: Int) {
        var count = 0
        var last: String?
        var ids: [String] = []
        // Arrays of non-null values (PostgresNIO binds no array of optionals), with whether each is there.
        var columns: [[Double]] = [[], [], [], []]
        var placed: [Bool] = []
        var cells: [Int64] = []
        var celled: [Bool] = []
        let rows = try await db.run(
            """
            SELECT id, zip_code, latitude, longitude, search_latitude, search_longitude, search_cell_latitude,
                search_cell_longitude, search_cell
            FROM listing WHERE id > \(after) ORDER BY id LIMIT \(listingsSearchPointBatchSize)
            """,
            storage
        )
        for try await (id, zip, latitude, longitude, searchLatitude, searchLongitude, cellLatitude, cellLongitude, key)
            in rows.decode((String, String, Double?, Double?, Double?, Double?, Double?, Double?, Int64?).self)
        {
            count += 1
            last = id
            let point = latitude.flatMap { lat in longitude.map { GeoPoint(latitude: lat, longitude: $0) } }
            let search = ListingsRows.searchPoint(ListingLocation(zipCode: zip, point: point), centroids: centroids)
            let computed = [
                search.point?.latitude, search.point?.longitude, search.cell?.latitude, search.cell?.longitude,
            ]
            let cell = ApproximateLocation.Cell.key(
                latitude: search.point?.latitude,
                longitude: search.point?.longitude
            )
            guard computed != [searchLatitude, searchLongitude, cellLatitude, cellLongitude] || cell != key else {
                continue
            }
            ids.append(id)
            for (index, value) in computed.enumerated() { columns[index].append(value ?? 0) }
            placed.append(search.point != nil && search.cell != nil)
            cells.append(cell ?? 0)
            celled.append(cell != nil)
        }
        if !ids.isEmpty {
            try await db.run(
                """
                UPDATE listing SET search_latitude = CASE WHEN new.placed THEN new.latitude END,
                    search_longitude = CASE WHEN new.placed THEN new.longitude END,
                    search_cell_latitude = CASE WHEN new.placed THEN new.cell_latitude END,
                    search_cell_longitude = CASE WHEN new.placed THEN new.cell_longitude END,
                    search_cell = CASE WHEN new.celled THEN new.cell END
                FROM unnest(\(ids)::text[], \(columns[0])::float8[], \(columns[1])::float8[], \(columns[2])::float8[],
                    \(columns[3])::float8[], \(placed)::boolean[], \(cells)::bigint[], \(celled)::boolean[])
                    AS new (id, latitude, longitude, cell_latitude, cell_longitude, placed, cell, celled)
                WHERE listing.id = new.id
                """,
                storage
            )
        }
        if count < listingsSearchPointBatchSize {
            try await db.run(
                """
                INSERT INTO listing_search_point_version (id, version) VALUES (1, \(version))
                ON CONFLICT (id) DO UPDATE SET version = excluded.version
                """,
                storage
            )
        }
        return (count, last, ids.count)
    }
}
