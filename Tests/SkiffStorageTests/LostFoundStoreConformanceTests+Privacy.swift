import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

extension LostFoundStoreConformanceTests {
    @Test(
        "Distances to others' items: measured to the point's grid cell and rounded, in filter, order and result",
        arguments: StoreKind.allCases
    )
    func approximateDistances(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            // 420 m south of its cell's centre (36.145); exactly 2.88 km from `centre`, its cell 2.58 km.
            let point = LostFoundPoint(latitude: 36.1412, longitude: -86.8080)
            let item = try await store.report([F.item(.lost, "Backpack") { $0.point = point }])[0]
            let centre = LostFoundPoint(latitude: 36.16, longitude: -86.83)
            var filter = LostFoundFilter()
            filter.near = LostFoundCircle(center: centre, radiusKm: 10)
            for viewer in [nil, F.finder] {
                let hits = try await store.searchAll(
                    LostFoundQuery(filter: filter, sort: .distance, viewerID: viewer),
                    pageSize: 10
                )
                #expect(hits.map(\.item.id) == [item.id])
                #expect(hits.first?.distanceKm == 2.5)
            }
            let own = try await store.searchAll(LostFoundQuery(filter: filter, viewerID: F.owner), pageSize: 10)
            #expect(own.first?.distanceKm == centre.distanceKm(to: point))
            filter.near?.radiusKm = 2.6
            #expect(try await store.ids(LostFoundQuery(filter: filter)) == [item.id])
            #expect(try await store.ids(LostFoundQuery(filter: filter, viewerID: F.owner)).isEmpty)
        }
    }
}
