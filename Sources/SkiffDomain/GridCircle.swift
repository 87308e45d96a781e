import Foundation

/// A search circle on the grid of ``ApproximateLocation``: the cells that can hold a private point within
/// it, and how those cells fall into bands of shown distance. Listings and lost-and-found search share it,
/// in memory and in SQL, so that every backend reads the same cells in the same order.
package struct GridCircle: Hashable, Sendable {
    package var latitude: Double
    package var longitude: Double
    package var radiusKm: Double

    package init(latitude: Double, longitude: Double, radiusKm: Double) {
        self.latitude = latitude
        self.longitude = longitude
        self.radiusKm = radiusKm
    }

    /// A latitude/longitude box holding every exact point whose distance, exact or approximate, can be within
    /// the circle (others measure to a point's cell, up to ``ApproximateLocation/maximumShiftKm`` from the
    /// point), for narrowing candidates by index. `longitude` is `nil` when the box would wrap.
    package var boundingBox: (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) {
        GreatCircle.boundingBox(
            latitude: latitude,
            longitude: longitude,
            radiusKm: radiusKm + ApproximateLocation.maximumShiftKm
        )
    }

    /// The rows of the grid whose cells can hold a point within the circle, each with the columns its cells
    /// can be in: the cells of ``boundingBox``. `nil` when the box wraps around the antimeridian or a pole.
    package var boxCells: [(row: Int, columns: ClosedRange<Int>)]? {
        let box = boundingBox
        guard let longitude = box.longitude,
            let low = ApproximateLocation.cell(latitude: box.latitude.lowerBound, longitude: 0),
            let high = ApproximateLocation.cell(latitude: box.latitude.upperBound, longitude: 0)
        else { return nil }
        return (low.row...high.row).map { ($0, ApproximateLocation.columns(row: $0, longitude: longitude)) }
    }

    /// The distance from the circle's centre to a cell's centre, in kilometres.
    package func distanceKm(to cell: ApproximateLocation.Cell) -> Double {
        let point = ApproximateLocation.center(of: cell)
        return GreatCircle.distanceKm(
            latitude1: latitude,
            longitude1: longitude,
            latitude2: point.latitude,
            longitude2: point.longitude
        )
    }

    /// The cells among `cells` whose centres are within the circle, grouped by the distance everyone but a
    /// point's owner is shown (``ApproximateLocation/distance(from:to:exact:)``: to the cell's centre,
    /// rounded), nearest first. Everyone else's points in the circle are those of these cells, and in
    /// distance order they come band by band, newest first within a band.
    package func bands(
        _ cells: some Sequence<ApproximateLocation.Cell>
    ) -> [(distance: Double, cells: [ApproximateLocation.Cell])] {
        var bands: [Double: [ApproximateLocation.Cell]] = [:]
        for cell in cells {
            let km = distanceKm(to: cell)
            guard km <= radiusKm else { continue }
            bands[ApproximateLocation.rounded(km), default: []].append(cell)
        }
        return bands.sorted { $0.key < $1.key }.map { (distance: $0.key, cells: $0.value) }
    }
}
