import GRDB
import SkiffBucketList
import SkiffDomain

/// The SQL function `skiff_private_distance(latitude, longitude, ownerID, centerLatitude, centerLongitude,
/// viewerID, shown)`, registered on every connection: the distance in kilometres from a centre to a private
/// point (a listing's, a lost-and-found item's) as ``SkiffDomain/ApproximateLocation`` defines it — exact
/// for its owner, to its grid cell for anyone else — either the one compared with a radius (`shown` = 0)
/// or the one reported and ordered by (`shown` = 1); NULL without a point. Searches filter and order by it
/// inside SQL, so the privacy rule is written once, in Swift, and never again in SQL.
enum PrivateDistanceFunction {
    static let function = DatabaseFunction("skiff_private_distance", argumentCount: 7, pure: true) { values in
        guard let latitude = Double.fromDatabaseValue(values[0]),
            let longitude = Double.fromDatabaseValue(values[1]),
            let centerLatitude = Double.fromDatabaseValue(values[3]),
            let centerLongitude = Double.fromDatabaseValue(values[4])
        else { return nil }
        let owner = String.fromDatabaseValue(values[2])
        let viewer = String.fromDatabaseValue(values[5])
        let km = ApproximateLocation.distance(
            from: (centerLatitude, centerLongitude),
            to: (latitude, longitude),
            exact: viewer != nil && viewer == owner
        )
        return Int.fromDatabaseValue(values[6]) == 1 ? km.shown : km.measured
    }

    /// The call for a table's columns (the point in `latitude` and `longitude` unless named otherwise), with
    /// the centre and viewer as arguments.
    static func call(
        table: String,
        latitude: String = "latitude",
        longitude: String = "longitude",
        owner: String,
        shown: Bool
    ) -> String {
        "skiff_private_distance(\(table).\(latitude), \(table).\(longitude), \(table).\(owner), ?, ?, ?, \(shown ? 1 : 0))"
    }
}

/// The SQL function `skiff_distance_km(latitude1, longitude1, latitude2, longitude2)`, registered on every
/// connection: ``SkiffBucketList/Geo/distanceKm(_:_:)`` (activities are public places, measured exactly),
/// so nearby search filters, orders and pages inside SQL with the very `Double` the in-memory store computes.
enum DistanceFunction {
    static let function = DatabaseFunction("skiff_distance_km", argumentCount: 4, pure: true) { values in
        guard let latitude1 = Double.fromDatabaseValue(values[0]),
            let longitude1 = Double.fromDatabaseValue(values[1]),
            let latitude2 = Double.fromDatabaseValue(values[2]),
            let longitude2 = Double.fromDatabaseValue(values[3])
        else { return nil }
        return Geo.distanceKm(
            Coordinate(latitude: latitude1, longitude: longitude1),
            Coordinate(latitude: latitude2, longitude: longitude2)
        )
    }
}
