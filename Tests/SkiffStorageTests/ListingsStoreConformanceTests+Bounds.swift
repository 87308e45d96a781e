import Foundation
import SkiffDomain
import SkiffListings
import Testing

extension ListingsStoreConformanceTests {
    @Test(
        "A tag filter of any size is one SQL condition: 1,000 tags answer (no 'Expression tree is too large')",
        arguments: StoreKind.allCases
    )
    func manyFilterTags(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let listings = try await store.create([
                F.listing("Tagged", at: 0) { $0.tags = ["a", "b", "c"] },
                F.listing("Half", at: 1) { $0.tags = ["a"] },
            ])
            var filter = ListingFilter()
            // The store is not where requests are bounded (the service is): it must stay correct anyway.
            filter.tags = (0..<1_000).map { "tag\($0)" }
            #expect(try await store.searchAll(ListingQuery(filter: filter), pageSize: 10).isEmpty)
            filter.tags = ["a", "b", "c", "a", "b"]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [listings[0].id])
            filter.tags = ["a"]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [listings[1].id, listings[0].id])
        }
    }

    @Test(
        "Distances to others' listings: measured to the point's grid cell and rounded; exact for the seller",
        arguments: StoreKind.allCases
    )
    func approximateDistances(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            // 420 m south of its cell's centre (36.145).
            let point = GeoPoint(latitude: 36.1412, longitude: -86.8080)
            let listing = try await store.create([F.listing("Lamp", at: 0) { $0.location.point = point }])[0]
            let centre = GeoPoint(latitude: 36.16, longitude: -86.83)
            let exact = ListingSearchEngine.distanceKm(centre, point)
            var filter = ListingFilter()
            filter.near = GeoCircle(center: centre, radiusKm: 10)
            for viewer in [nil, F.other] {
                let hits = try await store.searchAll(ListingQuery(filter: filter, viewerID: viewer), pageSize: 10)
                #expect(hits.map(\.listing.id) == [listing.id])
                #expect(hits.first?.distanceKm == 2.5)
            }
            let own = try await store.searchAll(ListingQuery(filter: filter, viewerID: F.seller), pageSize: 10)
            #expect(own.first?.distanceKm == exact)
            // The circle is compared with the cell's distance too: exactly 2.88 km away, but the cell is
            // at 2.58 km, so a 2.6 km circle holds it for others only.
            filter.near?.radiusKm = 2.6
            #expect(try await store.ids(ListingQuery(filter: filter)) == [listing.id])
            #expect(try await store.ids(ListingQuery(filter: filter, viewerID: F.seller)).isEmpty)
        }
    }
}
