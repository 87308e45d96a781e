import Foundation
import SkiffDomain
import SkiffListings
import Testing

/// The bundled ZIP-code centroid table (2023 Census Gazetteer ZCTAs) and the search point it gives
/// listings posted with only a zip code.
@Suite("ZIP-code centroids")
struct ZipCentroidsTests {
    static let table = ZipCentroids.shared

    /// Whether `point` is within `degrees` of the expected latitude and longitude.
    static func near(_ point: GeoPoint?, _ latitude: Double, _ longitude: Double, within degrees: Double = 0.1) -> Bool
    {
        guard let point else { return false }
        return abs(point.latitude - latitude) <= degrees && abs(point.longitude - longitude) <= degrees
    }

    @Test("The bundled table loads once, with every ZCTA of the 2023 Gazetteer")
    func bundled() throws {
        let table = try ZipCentroids.bundled()
        #expect(table.count > 33_000)
        #expect(table.count == 33_791)
        #expect(table.version.hasPrefix(ZipCentroids.bundledVintage + "/"))
        #expect(table.version == Self.table.version)
    }

    @Test("Campus zip codes are where their campuses are")
    func knownZipCodes() {
        // Vanderbilt University Medical Center, Nashville (Vanderbilt's own 37235 has no ZCTA; see below).
        #expect(Self.near(Self.table.centroid(of: "37232"), 36.14, -86.80))
        // UC San Diego, La Jolla.
        #expect(Self.near(Self.table.centroid(of: "92093"), 32.88, -117.24))
        // Midtown Manhattan.
        #expect(Self.near(Self.table.centroid(of: "10001"), 40.75, -74.00))
        // The first and last lines of the table: Puerto Rico and Alaska.
        #expect(Self.near(Self.table.centroid(of: "00601"), 18.18, -66.75))
        #expect(Self.near(Self.table.centroid(of: "99929"), 56.22, -131.92))
        // Exactly the Census internal point.
        #expect(Self.table.centroid(of: "92093") == GeoPoint(latitude: 32.882118, longitude: -117.237083))
    }

    @Test("ZIP+4 is looked up by its first five digits")
    func zipPlusFour() {
        #expect(Self.table.centroid(of: "92093-0021") == Self.table.centroid(of: "92093"))
        #expect(Self.table.centroid(of: "10001-0000") == Self.table.centroid(of: "10001"))
    }

    @Test(
        "Anything but 12345 or 12345-6789 of a ZCTA is unknown",
        arguments: [
            "", "99999", "00000", "37235", "1234", "123456", "9209", "92093-", "92093-12", "92093-12345",
            "92093 0021", "92093_0021", " 92093", "92093 ", "ABCDE", "９２０９３", "92O93", "-9209", "+9209",
        ]
    )
    func unknown(zipCode: String) {
        #expect(Self.table.centroid(of: zipCode) == nil)
    }

    @Test("A table is parsed strictly: header, 5-digit zips, coordinates in range, no duplicates")
    func parsing() throws {
        let good = "zip,latitude,longitude\r\n00501,40.8,-73.0\n12345,42.8,-73.9\n"
        let table = try ZipCentroids(csv: Data(good.utf8), vintage: "test")
        #expect(table.count == 2)
        #expect(table.centroid(of: "12345") == GeoPoint(latitude: 42.8, longitude: -73.9))
        #expect(table.centroid(of: "00501-1234") == GeoPoint(latitude: 40.8, longitude: -73.0))
        #expect(table.version.hasPrefix("test/"))
        // The version follows the bytes.
        let other = try ZipCentroids(csv: Data((good + "54321,1,2\n").utf8), vintage: "test")
        #expect(other.version != table.version)
        for bad in [
            "",
            "GEOID,LAT,LONG\n12345,1,2\n",
            "zip,latitude,longitude\n1234,1,2\n",
            "zip,latitude,longitude\n12345-6789,1,2\n",
            "zip,latitude,longitude\n12345,91,2\n",
            "zip,latitude,longitude\n12345,1,181\n",
            "zip,latitude,longitude\n12345,1\n",
            "zip,latitude,longitude\n12345,1,2\n12345,3,4\n",
            "zip,latitude,longitude\n12345,nan,2\n",
        ] {
            #expect(throws: ZipCentroidsError.self, "\(bad)") {
                _ = try ZipCentroids(csv: Data(bad.utf8), vintage: "t")
            }
        }
    }

    @Test("Search point: the listing's point if set, else its zip code's centroid, else none")
    func searchPoint() {
        let point = GeoPoint(latitude: 36.1447, longitude: -86.8027)
        #expect(ListingRules.searchPoint(for: ListingLocation(zipCode: "92093", point: point)) == point)
        #expect(ListingRules.searchPoint(for: ListingLocation(zipCode: "92093")) == Self.table.centroid(of: "92093"))
        #expect(ListingRules.searchPoint(for: ListingLocation(zipCode: "92093-0021")) != nil)
        #expect(ListingRules.searchPoint(for: ListingLocation(zipCode: "37235")) == nil)
        #expect(ListingRules.searchPoint(for: ListingLocation(zipCode: "SW1A 1AA")) == nil)
    }

    @Test("A search centre given as a zip code: its centroid, or INVALID_ARGUMENT naming the field")
    func centerZipCode() throws {
        #expect(try ListingRules.validateCenterZipCode(" 10001 ") == Self.table.centroid(of: "10001"))
        #expect(try ListingRules.validateCenterZipCode("10001-2345") == Self.table.centroid(of: "10001"))
        for zip in ["99999", "abc", "1000"] {
            #expect(throws: DomainError.self) { _ = try ListingRules.validateCenterZipCode(zip) }
            do {
                _ = try ListingRules.validateCenterZipCode(zip)
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.hasPrefix("filter.near.center_zip_code \(zip) is not a known US ZIP code"))
            }
        }
    }
}
