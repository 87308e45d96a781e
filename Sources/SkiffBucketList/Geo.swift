import Foundation

/// Great-circle distances and bounding boxes, shared by every store so that all give the same results.
public enum Geo {
    /// The mean radius of the Earth, in kilometres.
    public static let earthRadiusKm = 6371.0088

    /// The great-circle distance between two points (haversine), in kilometres.
    public static func distanceKm(_ a: Coordinate, _ b: Coordinate) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * radians
        let dLng = (b.longitude - a.longitude) * radians
        let h =
            sin(dLat / 2) * sin(dLat / 2)
            + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * earthRadiusKm * asin(min(1, sqrt(h)))
    }

    /// A latitude/longitude box containing the circle (with a margin), for prefiltering in SQL.
    ///
    /// `longitude` is `nil` when the box would wrap around the antimeridian or reach a pole (then only
    /// latitude narrows the candidates). The exact test is always ``distanceKm(_:_:)``.
    public static func boundingBox(
        center: Coordinate,
        radiusKm: Double
    ) -> (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) {
        let degrees = radiusKm / (earthRadiusKm * Double.pi / 180) * 1.01 + 1e-6
        let minLat = center.latitude - degrees
        let maxLat = center.latitude + degrees
        let latitude = max(-90, minLat)...min(90, maxLat)
        guard minLat > -89, maxLat < 89 else { return (latitude, nil) }
        let lngDegrees = degrees / cos(max(abs(minLat), abs(maxLat)) * Double.pi / 180)
        let minLng = center.longitude - lngDegrees
        let maxLng = center.longitude + lngDegrees
        guard minLng >= -180, maxLng <= 180 else { return (latitude, nil) }
        return (latitude, minLng...maxLng)
    }
}
