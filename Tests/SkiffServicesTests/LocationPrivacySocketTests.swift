import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SwiftProtobuf
import Testing

/// Issue 9 (hardening), item 9, over a real socket through the production server: the exact point of a lost
/// item (or a listing) cannot be recovered by trilateration from the distances that searches report to
/// anyone but its owner; the owner still gets exact distances.
@Suite("Location privacy over a socket")
struct LocationPrivacySocketTests {
    /// The private point: 420 m south of the centre of its ~1.1 km grid cell.
    static let point = (latitude: 36.1412, longitude: -86.8080)
    /// Three search centres around it, 2.5 to 5 km away.
    static let centres = [(36.16, -86.83), (36.12, -86.79), (36.17, -86.77)]

    @Test(
        "LostFound: a guest's three searches locate the item no better than its cell; the reporter's exactly",
        arguments: Backend.allCases
    )
    func lostItem(_ backend: Backend) async throws {
        try await withBoundsApp(backend) { app, connection, _ in
            let (owner, finder) = try await LostFoundServiceTests.users(app, connection)
            let client = LostFoundClient(transport: connection)
            var item = LostFoundServiceTests.newItem(.lost, "Blue backpack")
            item.point = .with {
                $0.latitude = Self.point.latitude
                $0.longitude = Self.point.longitude
            }
            _ = try await client.reportItem(.with { $0.item = item }, metadata: owner.auth)

            func distances(_ auth: Metadata) async throws -> [Double] {
                var result: [Double] = []
                for centre in Self.centres {
                    let search = try await client.searchItems(
                        .with {
                            $0.filter.near.center = .with {
                                $0.latitude = centre.0
                                $0.longitude = centre.1
                            }
                            $0.filter.near.radiusKm = 10
                            $0.sortOrder = .distance
                        },
                        metadata: auth
                    )
                    try #require(search.results.count == 1)
                    result.append(search.results[0].distanceKm)
                }
                return result
            }
            try await Self.expectPrivate(
                guest: distances([:]),
                other: distances(finder.auth),
                owner: distances(owner.auth)
            )
        }
    }

    @Test(
        "Listings: a buyer's three searches locate the listing no better than its cell; the seller's exactly",
        arguments: Backend.allCases
    )
    func listing(_ backend: Backend) async throws {
        try await withBoundsApp(backend) { app, connection, _ in
            let (seller, buyer) = try await ListingsServiceTests.users(app, connection)
            let client = ListingsClient(transport: connection)
            var listing = ListingsServiceTests.newListing("Desk lamp")
            listing.location.point = .with {
                $0.latitude = Self.point.latitude
                $0.longitude = Self.point.longitude
            }
            _ = try await client.createListing(.with { $0.listing = listing }, metadata: seller.auth)

            func distances(_ auth: Metadata) async throws -> [Double] {
                var result: [Double] = []
                for centre in Self.centres {
                    let search = try await client.searchListings(
                        .with {
                            $0.filter.near.center = .with {
                                $0.latitude = centre.0
                                $0.longitude = centre.1
                            }
                            $0.filter.near.radiusKm = 10
                            $0.sortOrder = .distance
                        },
                        metadata: auth
                    )
                    try #require(search.results.count == 1)
                    result.append(search.results[0].distanceKm)
                }
                return result
            }
            try await Self.expectPrivate(
                guest: distances([:]),
                other: distances(buyer.auth),
                owner: distances(seller.auth)
            )
        }
    }

    /// Others see multiples of 0.5 km from which the point is recovered no closer than 200 m; the owner's
    /// exact distances recover it to the metre.
    static func expectPrivate(guest: [Double], other: [Double], owner: [Double]) throws {
        #expect(guest == other)
        for distance in guest { #expect(distance.truncatingRemainder(dividingBy: 0.5) == 0, "\(distance)") }
        let fromGuest = Trilateration.locate(centres: centres, distancesKm: guest)
        #expect(Trilateration.distanceKm(fromGuest, point) > 0.2, "recovered \(fromGuest)")
        let fromOwner = Trilateration.locate(centres: centres, distancesKm: owner)
        #expect(Trilateration.distanceKm(fromOwner, point) < 0.001, "recovered \(fromOwner)")
    }
}

/// What an attacker does with three distances: the point whose haversine distances to the centres fit them
/// best (least squares, by pattern search down to micro-degrees).
enum Trilateration {
    static func distanceKm(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.0 - a.0) * radians
        let dLon = (b.1 - a.1) * radians
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.0 * radians) * cos(b.0 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6371.0088 * asin(min(1, sqrt(h)))
    }

    static func locate(centres: [(Double, Double)], distancesKm: [Double]) -> (Double, Double) {
        func error(_ p: (Double, Double)) -> Double {
            zip(centres, distancesKm).reduce(0) { sum, pair in
                let residual = distanceKm(p, pair.0) - pair.1
                return sum + residual * residual
            }
        }
        var best = (
            centres.map(\.0).reduce(0, +) / Double(centres.count),
            centres.map(\.1).reduce(0, +) / Double(centres.count)
        )
        var bestError = error(best)
        var step = 0.01
        while step > 1e-9 {
            var moved = false
            for (dLat, dLon) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
                let candidate = (best.0 + dLat, best.1 + dLon)
                let candidateError = error(candidate)
                if candidateError < bestError {
                    best = candidate
                    bestError = candidateError
                    moved = true
                }
            }
            if !moved { step /= 2 }
        }
        return best
    }
}
