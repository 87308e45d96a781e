import Foundation

/// How a private point (a listing's or a lost-and-found item's exact place) is measured for anyone but its
/// owner: the point is snapped to the centre of its cell in a fixed grid, and distances to it are rounded.
///
/// Everything others can observe — the `near` filter, distance sorting, the reported distance, and for
/// LostFound the matches, their scores and distances — is computed from the cell centre, never from the
/// exact point. So however many searches around however many centres are combined (trilateration, or
/// moving a circle's edge to see when an item drops out), they reveal the cell and nothing finer. The
/// grid is fixed, not random noise per request (which averages out over repeated queries) nor an offset
/// derived from the id (which anyone with the source could undo).
///
/// Cells are ``cellDegrees`` of latitude high (about 1.1 km) and as wide in kilometres (their width in
/// degrees grows towards the poles); reported distances are multiples of ``distanceStepKm``.
package enum ApproximateLocation {
    /// The height of a cell, in degrees of latitude (about 1.11 km).
    package static let cellDegrees = 0.01
    /// Distances measured to a cell centre are reported to the nearest multiple of this, in kilometres.
    package static let distanceStepKm = 0.5
    /// The farthest a point moves when snapped (half a cell's diagonal, about 0.79 km), with a margin:
    /// backends widen their prefilter boxes by this much.
    package static let maximumShiftKm = 1.0

    /// The centre of the grid cell holding the point.
    package static func cellCenter(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite else { return (latitude, longitude) }
        let row = (latitude / cellDegrees).rounded(.down)
        let column = ((longitude + 180) / width(row: row)).rounded(.down)
        return center(row: row, column: column)
    }

    /// A cell of the grid: its row (from latitude) and its column (from longitude, in the row's width).
    package struct Cell: Hashable, Sendable {
        package var row: Int
        package var column: Int

        package init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }

        /// The cell as SQL stores it (a `cell` column): the row times a million plus the column. Unique for
        /// every point on Earth (a row has fewer than 40,000 columns), and a row's cells are one range of keys.
        package var key: Int64 { Int64(row) * 1_000_000 + Int64(column) }

        /// The cell of a ``key``.
        package init(key: Int64) {
            var (row, column) = key.quotientAndRemainder(dividingBy: 1_000_000)
            if column < 0 {  // a row south of the equator: the quotient rounded towards zero
                row -= 1
                column += 1_000_000
            }
            self.init(row: Int(row), column: Int(column))
        }

        /// The key of the cell holding a point, or `nil` without one (or for a point not on Earth).
        package static func key(latitude: Double?, longitude: Double?) -> Int64? {
            guard let latitude, let longitude else { return nil }
            return ApproximateLocation.cell(latitude: latitude, longitude: longitude)?.key
        }
    }

    /// The cell holding a point on Earth, or `nil` for one that is not (not finite, or far outside the
    /// ranges of latitude and longitude).
    package static func cell(latitude: Double, longitude: Double) -> Cell? {
        guard abs(latitude) <= 1_000, abs(longitude) <= 1_000 else { return nil }
        let row = (latitude / cellDegrees).rounded(.down)
        let column = ((longitude + 180) / width(row: row)).rounded(.down)
        return Cell(row: Int(row), column: Int(column))
    }

    /// The centre of a cell: ``cellCenter(latitude:longitude:)`` of every point in it.
    package static func center(of cell: Cell) -> (latitude: Double, longitude: Double) {
        center(row: Double(cell.row), column: Double(cell.column))
    }

    /// The columns of a row whose cells overlap a range of longitudes.
    package static func columns(row: Int, longitude: ClosedRange<Double>) -> ClosedRange<Int> {
        let width = width(row: Double(row))
        return Int(
            ((longitude.lowerBound + 180) / width).rounded(.down)
        )...Int(
            ((longitude.upperBound + 180) / width).rounded(.down)
        )
    }

    /// The width of a row's cells in degrees of longitude: as wide in kilometres as they are high, at the
    /// row's centre (capped near the poles).
    private static func width(row: Double) -> Double {
        cellDegrees / max(cos(centerLatitude(row: row) * Double.pi / 180), 0.01)
    }

    private static func centerLatitude(row: Double) -> Double { min(90, max(-90, (row + 0.5) * cellDegrees)) }

    private static func center(row: Double, column: Double) -> (latitude: Double, longitude: Double) {
        (centerLatitude(row: row), min(180, -180 + (column + 0.5) * width(row: row)))
    }

    /// A distance rounded to the nearest multiple of ``distanceStepKm``.
    package static func rounded(_ km: Double) -> Double {
        (km / distanceStepKm).rounded() * distanceStepKm
    }

    /// The distance between `center` and a private point as its owner sees it (exact) or as anyone else
    /// does: from `center` to the point's cell centre. `shown` is what may be reported (rounded for
    /// others); `measured` is what filters compare with the radius.
    package static func distance(
        from center: (latitude: Double, longitude: Double),
        to point: (latitude: Double, longitude: Double),
        exact: Bool
    ) -> (measured: Double, shown: Double) {
        if exact {
            let km = GreatCircle.distanceKm(
                latitude1: center.latitude,
                longitude1: center.longitude,
                latitude2: point.latitude,
                longitude2: point.longitude
            )
            return (km, km)
        }
        let cell = cellCenter(latitude: point.latitude, longitude: point.longitude)
        let km = GreatCircle.distanceKm(
            latitude1: center.latitude,
            longitude1: center.longitude,
            latitude2: cell.latitude,
            longitude2: cell.longitude
        )
        return (km, rounded(km))
    }
}
