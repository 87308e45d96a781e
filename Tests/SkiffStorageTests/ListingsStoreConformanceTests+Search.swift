import Foundation
import SkiffDomain
import SkiffListings
import Testing

extension ListingsStoreConformanceTests {
    /// Nashville (Vanderbilt) and points around it.
    static let campus = GeoPoint(latitude: 36.1447, longitude: -86.8027)

    /// A small catalogue with distinct attributes, created in order one second apart.
    private func catalogue(_ store: any ListingsStore) async throws -> [Listing] {
        try await store.create([
            F.listing("Red Bike", at: 0) {
                $0.description = "A red bicycle, barely ridden"
                $0.priceCents = 12_000
                $0.category = .other
                $0.tags = ["bike", "outdoor"]
                $0.location.point = GeoPoint(latitude: 36.15, longitude: -86.80)
            },
            F.listing("Calculus textbook", at: 1) {
                $0.description = "Stewart, 8th édition"
                $0.priceCents = 3_000
                $0.category = .books
                $0.condition = .heavilyUsed
                $0.tags = ["math"]
            },
            F.listing("Crème brûlée torch", at: 2) {
                $0.priceCents = 1_500
                $0.category = .other
                $0.condition = .new
                $0.madeOnCampus = true
                $0.location.point = GeoPoint(latitude: 36.60, longitude: -86.80)  // ~50 km north
            },
            F.listing("bike lock", seller: F.other, at: 3) {
                $0.priceCents = 1_500
                $0.tags = ["bike"]
                $0.anonymous = true
                $0.location.point = GeoPoint(latitude: 36.145, longitude: -86.81)
            },
            F.listing("Winter jacket", at: 4) {
                $0.priceCents = 0
                $0.category = .clothing
                $0.anonymous = true
                $0.tags = ["outdoor", "warm"]
            },
        ])
    }

    @Test(
        "Keywords: every word must match title, description or tags; the last one as a prefix",
        arguments: StoreKind.allCases
    )
    func keywords(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await catalogue(store)
            #expect(try await store.ids(ListingQuery(text: "bike")) == [c[3].id, c[0].id])
            #expect(try await store.ids(ListingQuery(text: "BIK")) == [c[3].id, c[0].id])
            #expect(try await store.ids(ListingQuery(text: "bike re")) == [c[0].id])
            #expect(try await store.ids(ListingQuery(text: "bike loc")) == [c[3].id])
            #expect(try await store.ids(ListingQuery(text: "creme brulee")) == [c[2].id])
            #expect(try await store.ids(ListingQuery(text: "EDITION stew")) == [c[1].id])
            #expect(try await store.ids(ListingQuery(text: "warm")) == [c[4].id])
            #expect(try await store.ids(ListingQuery(text: "bicycles")) == [])
            // Only the last word is a prefix.
            #expect(try await store.ids(ListingQuery(text: "bik lock")) == [])
            #expect(try await store.ids(ListingQuery(text: "!!!")).count == 5)
            #expect(try await store.ids(ListingQuery(text: "")) == c.reversed().map(\.id))
        }
    }

    @Test("Filters: category, condition, price, tags, made on campus, posted since", arguments: StoreKind.allCases)
    func filters(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await catalogue(store)
            var filter = ListingFilter()
            filter.categories = [.books, .clothing]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[4].id, c[1].id])
            filter = ListingFilter()
            filter.conditions = [.new, .heavilyUsed]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[2].id, c[1].id])
            filter = ListingFilter()
            filter.minPriceCents = 1_500
            filter.maxPriceCents = 3_000
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[3].id, c[2].id, c[1].id])
            filter = ListingFilter()
            filter.tags = ["Outdoor", "bike"]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[0].id])
            filter = ListingFilter()
            filter.madeOnCampus = true
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[2].id])
            filter.madeOnCampus = false
            #expect(try await store.ids(ListingQuery(filter: filter)).count == 4)
            filter = ListingFilter()
            filter.postedSince = F.t0.addingTimeInterval(3)
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[4].id, c[3].id])
        }
    }

    @Test("Seller filter never matches anonymous listings, except for their seller", arguments: StoreKind.allCases)
    func sellerFilter(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await catalogue(store)
            var filter = ListingFilter()
            filter.sellerID = F.seller
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[2].id, c[1].id, c[0].id])
            #expect(
                try await store.ids(ListingQuery(filter: filter, viewerID: F.other)) == [c[2].id, c[1].id, c[0].id]
            )
            #expect(
                try await store.ids(ListingQuery(filter: filter, viewerID: F.seller))
                    == [c[4].id, c[2].id, c[1].id, c[0].id]
            )
            filter.sellerID = F.other
            #expect(try await store.ids(ListingQuery(filter: filter)) == [])
            #expect(try await store.ids(ListingQuery(filter: filter, viewerID: F.other)) == [c[3].id])
        }
    }

    @Test("Statuses: active by default; sold on request; withdrawn never", arguments: StoreKind.allCases)
    func statuses(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await catalogue(store)
            _ = try await store.setStatus(id: c[0].id, to: .sold, by: .system, now: F.t0)
            _ = try await store.setStatus(id: c[1].id, to: .withdrawn, by: .system, now: F.t0)
            #expect(try await store.ids(ListingQuery()) == [c[4].id, c[3].id, c[2].id])
            var filter = ListingFilter()
            filter.statuses = [.sold]
            #expect(try await store.ids(ListingQuery(text: "bike", filter: filter)) == [c[0].id])
            filter.statuses = [.sold, .active]
            #expect(try await store.ids(ListingQuery(filter: filter)) == [c[4].id, c[3].id, c[2].id, c[0].id])
        }
    }

    @Test("Sorts: price, title, relevance and distance, ties newest first", arguments: StoreKind.allCases)
    func sorts(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let c = try await catalogue(store)
            #expect(
                try await store.ids(ListingQuery(sort: .priceAscending))
                    == [c[4].id, c[3].id, c[2].id, c[1].id, c[0].id]
            )
            #expect(
                try await store.ids(ListingQuery(sort: .priceDescending))
                    == [c[0].id, c[1].id, c[3].id, c[2].id, c[4].id]
            )
            #expect(
                try await store.ids(ListingQuery(sort: .title), pageSize: 2)
                    == [c[3].id, c[1].id, c[2].id, c[0].id, c[4].id]
            )
            // Equal scores (title 3 + tag 2): newest first.
            let relevance = try await store.ids(ListingQuery(text: "bike", sort: .relevance), pageSize: 1)
            #expect(relevance == [c[3].id, c[0].id])
            // "bi" also matches "bicycle" in c0's description: 6 beats 5.
            #expect(try await store.ids(ListingQuery(text: "bi", sort: .relevance), pageSize: 1) == [c[0].id, c[3].id])
            var filter = ListingFilter()
            filter.near = GeoCircle(center: Self.campus, radiusKm: 10)
            // A guest measures to each point's grid cell, rounded: c0 (0.64 km away) is in a cell 1.29 km
            // away, c3 (0.66 km) in one 0.48 km away.
            let near = try await store.searchAll(ListingQuery(filter: filter, sort: .distance), pageSize: 1)
            #expect(near.map(\.listing.id) == [c[3].id, c[0].id])
            #expect(near.map(\.distanceKm) == [0.5, 1.5])
            // The seller of c0 measures to its exact point, and to c3's cell.
            let seller = try await store.searchAll(
                ListingQuery(filter: filter, sort: .distance, viewerID: F.seller),
                pageSize: 1
            )
            #expect(seller.map(\.listing.id) == [c[3].id, c[0].id])
            #expect(seller.last.map { abs(($0.distanceKm ?? 0) - 0.637) < 0.001 } == true)
            filter.near?.radiusKm = 60
            let wide = try await store.searchAll(ListingQuery(filter: filter, sort: .newest), pageSize: 2)
            #expect(wide.map(\.listing.id) == [c[3].id, c[2].id, c[0].id])
            #expect(abs((wide[1].distanceKm ?? 0) - 50.7) < 1)
            #expect(try await store.search(ListingQuery(), page: .first).items.allSatisfy { $0.distanceKm == nil })
        }
    }

    @Test("Paging is stable while listings are inserted between pages", arguments: StoreKind.allCases)
    func pagingStability(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            var input: [Listing] = []
            for index in 0..<12 {
                input.append(
                    F.listing("Lamp \(index)", at: Double(index / 3)) { $0.priceCents = Int64(index % 4) * 100 }
                )
            }
            let created = try await store.create(input)
            for sort in [ListingSort.newest, .priceAscending, .priceDescending, .title, .relevance] {
                let query = ListingQuery(text: "lamp", sort: sort)
                let all = try await store.ids(query)
                #expect(all.filter { id in created.contains { $0.id == id } }.count == 12)
                var seen: [String] = []
                var page = try await store.search(query, page: PageRequest(size: 5))
                seen += page.items.map(\.listing.id)
                // Rows inserted between pages appear or not, but never cause duplicates or gaps.
                _ = try await store.createListing(F.listing("Lamp new \(sort)", at: 100), requestID: nil)
                while let token = page.nextPageToken {
                    page = try await store.search(query, page: PageRequest(size: 5, token: token))
                    seen += page.items.map(\.listing.id)
                }
                #expect(Set(seen).count == seen.count, "\(sort)")
                #expect(
                    seen.filter { id in created.contains { $0.id == id } }
                        == all.filter { id in
                            created.contains { $0.id == id }
                        },
                    "\(sort)"
                )
            }
            let first = try await store.search(ListingQuery(text: "lamp"), page: PageRequest(size: 2))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.search(
                    ListingQuery(text: "lamps"),
                    page: PageRequest(size: 2, token: first.nextPageToken)
                )
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.search(ListingQuery(text: "lamp"), page: PageRequest(size: 2, token: "garbage"))
            }
        }
    }
}
