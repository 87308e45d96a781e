import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 11, "Items near a ZIP code" (Ketch), through the production server over a socket on both backends:
/// listings posted with only a zip code are found by a distance search from a point or from a zip code, at
/// their zip code's centroid (the 2023 Census Gazetteer's internal point), without ever showing a point.
@Suite("Zip-code distance search over a socket")
struct ZipCodeSearchSocketTests {
    /// Vanderbilt University, Nashville.
    static let campus = (latitude: 36.1447, longitude: -86.8027)

    /// A listing with only a zip code (or also a point).
    static func listing(
        _ title: String,
        zip: String,
        point: (latitude: Double, longitude: Double)? = nil
    ) -> Skiff_Listings_V1_Listing {
        var listing = ListingsServiceTests.newListing(title)
        listing.location = .with {
            $0.zipCode = zip
            if let point {
                $0.point = .with {
                    $0.latitude = point.latitude
                    $0.longitude = point.longitude
                }
            }
        }
        return listing
    }

    /// A search around `campus` or around a zip code, nearest first.
    static func near(
        zip: String? = nil,
        radiusKm: Double,
        pageSize: Int32 = 0,
        pageToken: String = ""
    ) -> Skiff_Listings_V1_SearchListingsRequest {
        .with {
            $0.filter.near = .with {
                if let zip {
                    $0.centerZipCode = zip
                } else {
                    $0.center = .with {
                        $0.latitude = campus.latitude
                        $0.longitude = campus.longitude
                    }
                }
                $0.radiusKm = radiusKm
            }
            $0.sortOrder = .distance
            $0.pageSize = pageSize
            $0.pageToken = pageToken
        }
    }

    @Test(
        "Zip-only listings in different cities: found from a point and from a zip code, in order, with distances",
        arguments: Backend.allCases
    )
    func zipOnlyListings(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let (seller, buyer) = try await ListingsServiceTests.users(app, connection)
            let client = ListingsClient(transport: connection)
            func post(_ listing: Skiff_Listings_V1_Listing) async throws -> Skiff_Listings_V1_Listing {
                try await client.createListing(.with { $0.listing = listing }, metadata: seller.auth).listing
            }
            // Nashville: Vanderbilt Medical Center (0.40 km from campus), downtown (1.34 km), West Nashville
            // (14 km); San Diego (UCSD, as ZIP+4); Manhattan; Vanderbilt's own 37235, which has no centroid;
            // and one listing with a point, 2.8 km north of campus.
            let medical = try await post(Self.listing("Lab coat", zip: "37232"))
            let downtown = try await post(Self.listing("Desk", zip: "37203"))
            let west = try await post(Self.listing("Armchair", zip: "37209"))
            let sanDiego = try await post(Self.listing("Surfboard", zip: "92093-0021"))
            let manhattan = try await post(Self.listing("Bike", zip: "10001"))
            let mailroom = try await post(Self.listing("Mini fridge", zip: "37235"))
            let pointed = try await post(Self.listing("Lamp", zip: "37208", point: (36.17, -86.80)))

            // The seller's own listings show no point unless they set one.
            for listing in [medical, downtown, west, sanDiego, manhattan, mailroom] {
                #expect(!listing.location.hasPoint)
            }
            #expect(pointed.location.hasPoint)
            let mine = try await client.listMyListings(.init(), metadata: seller.auth).listings
            #expect(mine.count == 7)
            #expect(mine.filter(\.location.hasPoint).map(\.listingID) == [pointed.listingID])
            let read = try await client.getListing(.with { $0.listingID = medical.listingID }, metadata: seller.auth)
            #expect(!read.listing.location.hasPoint)
            #expect(read.listing.location.zipCode == "37232")

            // From a point, 5 km: a guest and a buyer measure to each search point's cell, rounded.
            let others: [Metadata] = [[:], buyer.auth]
            for auth in others {
                let found = try await client.searchListings(Self.near(radiusKm: 5), metadata: auth).results
                #expect(found.map(\.listing.listingID) == [medical.listingID, downtown.listingID, pointed.listingID])
                #expect(found.map(\.distanceKm) == [0.5, 1.5, 3.5])
                #expect(found.allSatisfy { !$0.listing.location.hasPoint })
            }
            // The seller measures exactly: to the centroids and to their point (which only they see).
            let exact = try await client.searchListings(Self.near(radiusKm: 5), metadata: seller.auth).results
            #expect(exact.map(\.listing.listingID) == [medical.listingID, downtown.listingID, pointed.listingID])
            #expect(abs(exact[0].distanceKm - 0.399) < 0.001, "\(exact.map(\.distanceKm))")
            #expect(abs(exact[1].distanceKm - 1.342) < 0.001, "\(exact.map(\.distanceKm))")
            #expect(abs(exact[2].distanceKm - 2.824) < 0.001, "\(exact.map(\.distanceKm))")
            #expect(exact.map(\.listing.location.hasPoint) == [false, false, true])

            // From a zip code, 20 km, a page at a time: West Nashville too; never the mailroom's 37235.
            var pages: [Skiff_Listings_V1_ListingSearchResult] = []
            var token = ""
            repeat {
                let page = try await client.searchListings(
                    Self.near(zip: "37232", radiusKm: 20, pageSize: 1, pageToken: token)
                )
                pages += page.results
                token = page.nextPageToken
            } while !token.isEmpty
            #expect(
                pages.map(\.listing.listingID)
                    == [medical.listingID, downtown.listingID, pointed.listingID, west.listingID]
            )
            #expect(pages.map(\.distanceKm) == [0.5, 2.0, 4.0, 14.0])
            // Other cities, from their zip codes (ZIP+4 and spaces accepted).
            let coast = try await client.searchListings(Self.near(zip: "92093", radiusKm: 10)).results
            #expect(coast.map(\.listing.listingID) == [sanDiego.listingID])
            #expect(coast.map(\.distanceKm) == [0.5])
            let city = try await client.searchListings(Self.near(zip: " 10001-2345 ", radiusKm: 5)).results
            #expect(city.map(\.listing.listingID) == [manhattan.listingID])
            // A listing with an unknown zip code is still found without a circle.
            let all = try await client.searchListings(.with { $0.query = "fridge" }).results
            #expect(all.map(\.listing.listingID) == [mailroom.listingID])
        }
    }

    @Test(
        "center_zip_code errors: unknown zip, both centres, over 32 bytes (checked first)",
        arguments: Backend.allCases
    )
    func centerZipCodeErrors(_ backend: Backend) async throws {
        try await withApp(backend) { _, connection in
            let client = ListingsClient(transport: connection)
            for zip in ["99999", "37235", "ABCDE", "9209"] {
                let error = await expectStatus(.invalidArgument) {
                    _ = try await client.searchListings(Self.near(zip: zip, radiusKm: 5))
                }
                #expect(
                    error?.message.hasPrefix("filter.near.center_zip_code \(zip) is not a known US ZIP code") == true,
                    "\(String(describing: error))"
                )
            }
            var both = Self.near(zip: "37232", radiusKm: 5)
            both.filter.near.center = .with {
                $0.latitude = Self.campus.latitude
                $0.longitude = Self.campus.longitude
            }
            let twice = await expectStatus(.invalidArgument) { _ = try await client.searchListings(both) }
            #expect(twice?.message == "filter.near sets both center and center_zip_code: set only one of them.")
            // Over the byte limit: refused by the request bounds, before the (also invalid) radius.
            let long = await expectStatus(.invalidArgument) {
                _ = try await client.searchListings(Self.near(zip: String(repeating: "1", count: 33), radiusKm: -1))
            }
            #expect(long?.message == "filter.near.center_zip_code is too long: send at most 32 bytes (UTF-8).")
            // 32 bytes is within the bound, and simply not a zip code.
            let unknown = await expectStatus(.invalidArgument) {
                _ = try await client.searchListings(Self.near(zip: String(repeating: "1", count: 32), radiusKm: 5))
            }
            #expect(unknown?.message.hasPrefix("filter.near.center_zip_code 1111") == true)
            // The radius is still checked with a zip code.
            _ = await expectStatus(.invalidArgument) {
                _ = try await client.searchListings(Self.near(zip: "37232", radiusKm: 0))
            }
        }
    }
}
