import Foundation
import SkiffDomain
import SkiffListings
import Testing

/// Distance search of listings posted with only a zip code: placed at their zip code's centroid
/// (``ZipCentroids``), on every backend alike.
extension ListingsStoreConformanceTests {
    /// Listings around Vanderbilt (``campus``): one with a point, zip-only ones in Nashville zip codes, one
    /// with a zip code that has no centroid (Vanderbilt's own 37235), one in San Diego; one second apart.
    private func zipCatalogue(_ store: any ListingsStore) async throws -> [Listing] {
        try await store.create([
            // 0.64 km from campus; a guest measures 1.29 km to its cell.
            F.listing("Point bike", at: 0) { $0.location.point = GeoPoint(latitude: 36.15, longitude: -86.80) },
            // 37232's centroid is 0.40 km from campus; its cell 0.48 km.
            F.listing("Zip lamp", at: 1) { $0.location.zipCode = "37232" },
            // 37203's centroid is 1.34 km from campus; its cell 1.74 km.
            F.listing("Zip desk", seller: F.other, at: 2) { $0.location.zipCode = "37203" },
            // 37209's centroid is 14.1 km from campus; its cell 13.9 km.
            F.listing("Far chair", at: 3) { $0.location.zipCode = "37209" },
            F.listing("Unknown zip sofa", at: 4) { $0.location.zipCode = "37235" },
            F.listing("San Diego board", at: 5) { $0.location.zipCode = "92093-0021" },
        ])
    }

    @Test(
        "Zip-only listings are found by `near` at their zip code's centroid, in distance order with point listings",
        arguments: StoreKind.allCases
    )
    func zipOnlyNear(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await zipCatalogue(store)
            var filter = ListingFilter()
            filter.near = GeoCircle(center: Self.campus, radiusKm: 5)
            // A guest: to each search point's cell, rounded to 0.5 km; ties newest first.
            let guest = try await store.searchAll(ListingQuery(filter: filter, sort: .distance), pageSize: 1)
            #expect(guest.map(\.listing.id) == [c[1].id, c[2].id, c[0].id])
            #expect(guest.map(\.distanceKm) == [0.5, 1.5, 1.5])
            // The centroid is only a search position: no listing gains a point.
            #expect(guest.map(\.listing) == [c[1], c[2], c[0]])
            #expect(guest.filter { $0.listing.id != c[0].id }.allSatisfy { $0.listing.location.point == nil })
            // The seller measures exactly, to their own listings' point and centroid; to c2's cell.
            let seller = try await store.searchAll(
                ListingQuery(filter: filter, sort: .distance, viewerID: F.seller),
                pageSize: 2
            )
            #expect(seller.map(\.listing.id) == [c[1].id, c[0].id, c[2].id])
            let distances = seller.compactMap(\.distanceKm)
            #expect(distances.count == 3)
            #expect(abs(distances[0] - 0.3988) < 0.001, "\(distances)")
            #expect(abs(distances[1] - 0.6373) < 0.001, "\(distances)")
            #expect(distances[2] == 1.5)
            // Other orders carry the distance too.
            let newest = try await store.searchAll(ListingQuery(filter: filter), pageSize: 2)
            #expect(newest.map(\.listing.id) == [c[2].id, c[1].id, c[0].id])
            #expect(newest.map(\.distanceKm) == [1.5, 0.5, 1.5])
            // Keywords and filters combine with the circle as for any listing.
            #expect(try await store.ids(ListingQuery(text: "zip", filter: filter)) == [c[2].id, c[1].id])
        }
    }

    @Test(
        "Zip-only listings outside the radius, and listings with an unknown zip code, do not match",
        arguments: StoreKind.allCases
    )
    func zipOnlyOutside(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await zipCatalogue(store)
            var filter = ListingFilter()
            // 1 km: only 37232's cell (0.48 km) is inside; 37203's (1.74 km) and the bike's (1.29 km) are not.
            filter.near = GeoCircle(center: Self.campus, radiusKm: 1)
            #expect(try await store.ids(ListingQuery(filter: filter, sort: .distance)) == [c[1].id])
            // 20 km reaches West Nashville (37209), never the unknown zip code.
            filter.near?.radiusKm = 20
            let wide = try await store.searchAll(ListingQuery(filter: filter, sort: .distance), pageSize: 3)
            #expect(wide.map(\.listing.id) == [c[1].id, c[2].id, c[0].id, c[3].id])
            #expect(wide.last?.distanceKm == 14.0)
            // The widest circle, as the seller of the unknown-zip listing: still not there.
            filter.near?.radiusKm = ListingRules.maximumRadiusKm
            for viewer in [nil, F.seller] {
                let all = try await store.ids(ListingQuery(filter: filter, viewerID: viewer))
                #expect(all == [c[3].id, c[2].id, c[1].id, c[0].id])
            }
            // San Diego's listing (ZIP+4) is found around UC San Diego.
            filter.near = GeoCircle(center: GeoPoint(latitude: 32.88, longitude: -117.24), radiusKm: 5)
            #expect(try await store.ids(ListingQuery(filter: filter, sort: .distance)) == [c[5].id])
            // Without a circle every listing matches, the unknown zip code's included.
            #expect(try await store.ids(ListingQuery()) == c.reversed().map(\.id))
        }
    }

    @Test(
        "Editing the location moves the search point: a point wins over the zip code, removing it goes back",
        arguments: StoreKind.allCases
    )
    func zipOnlyUpdate(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await zipCatalogue(store)
            var campus = ListingFilter()
            campus.near = GeoCircle(center: Self.campus, radiusKm: 5)
            var sanDiego = ListingFilter()
            sanDiego.near = GeoCircle(center: GeoPoint(latitude: 32.88, longitude: -117.24), radiusKm: 5)
            // The Nashville lamp gets a point in San Diego: it is searched there, not at 37232.
            var changes = ListingChanges()
            changes.location = ListingLocation(
                zipCode: "37232",
                point: GeoPoint(latitude: 32.8801, longitude: -117.2340)
            )
            _ = try await store.updateListing(id: c[1].id, sellerID: F.seller, changes: changes, now: F.t0)
            #expect(try await store.ids(ListingQuery(filter: campus)) == [c[2].id, c[0].id])
            #expect(try await store.ids(ListingQuery(filter: sanDiego)) == [c[5].id, c[1].id])
            // The unknown-zip sofa moves to 37212 (no point): now 1.16 km away to a guest.
            changes.location = ListingLocation(zipCode: "37212")
            let moved = try await store.updateListing(id: c[4].id, sellerID: F.seller, changes: changes, now: F.t0)
            #expect(moved.listing.location == ListingLocation(zipCode: "37212"))
            let hits = try await store.searchAll(ListingQuery(filter: campus, sort: .distance), pageSize: 5)
            #expect(hits.map(\.listing.id) == [c[4].id, c[2].id, c[0].id])
            #expect(hits.map(\.distanceKm) == [1.0, 1.5, 1.5])
            // The lamp's point removed: back at 37232.
            changes.location = ListingLocation(zipCode: "37232")
            _ = try await store.updateListing(id: c[1].id, sellerID: F.seller, changes: changes, now: F.t0)
            #expect(try await store.ids(ListingQuery(filter: sanDiego)) == [c[5].id])
            #expect(try await store.ids(ListingQuery(filter: campus, sort: .distance)).first == c[1].id)
        }
    }
}
