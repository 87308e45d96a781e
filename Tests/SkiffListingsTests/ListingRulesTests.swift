import Foundation
import SkiffDomain
import SkiffListings
import Testing

@Suite("Listing rules")
struct ListingRulesTests {
    static func fields(_ configure: (inout ListingFields) -> Void = { _ in }) -> ListingFields {
        var fields = ListingFields(
            title: "  Desk lamp ",
            description: " Warm light\n",
            priceCents: 1500,
            category: .furniture,
            condition: .new,
            size: " M ",
            tags: ["Lamp", " DESK", "lamp"],
            location: ListingLocation(zipCode: " 37235 ", point: GeoPoint(latitude: 36.14, longitude: -86.80))
        )
        configure(&fields)
        return fields
    }

    @Test("Valid fields come back normalized")
    func normalizes() throws {
        let valid = try ListingRules.validate(Self.fields())
        #expect(valid.title == "Desk lamp")
        #expect(valid.description == "Warm light")
        #expect(valid.size == "M")
        #expect(valid.tags == ["lamp", "desk"])
        #expect(valid.location.zipCode == "37235")
    }

    @Test(
        "Each limit is enforced with a message naming the field",
        arguments: [
            ("title", Self.fields { $0.title = "   " }),
            ("title", Self.fields { $0.title = String(repeating: "a", count: 81) }),
            ("description", Self.fields { $0.description = String(repeating: "a", count: 2001) }),
            ("price_cents", Self.fields { $0.priceCents = -1 }),
            ("size", Self.fields { $0.size = String(repeating: "x", count: 21) }),
            ("tags", Self.fields { $0.tags = (0..<11).map { "tag\($0)" } }),
            ("tag", Self.fields { $0.tags = [String(repeating: "t", count: 31)] }),
            ("tags", Self.fields { $0.tags = ["ok", "  "] }),
            ("location.zip_code", Self.fields { $0.location.zipCode = "" }),
            ("location.zip_code", Self.fields { $0.location.zipCode = "12345678901" }),
            ("location.point.latitude", Self.fields { $0.location.point = GeoPoint(latitude: 91, longitude: 0) }),
            ("location.point.longitude", Self.fields { $0.location.point = GeoPoint(latitude: 0, longitude: -181) }),
            ("image_ids", Self.fields { $0.imageIDs = ["a", "b", "c", "d"] }),
            ("image_ids", Self.fields { $0.imageIDs = ["a", "a"] }),
        ]
    )
    func limits(field: String, fields: ListingFields) {
        do {
            _ = try ListingRules.validate(fields)
            Issue.record("expected \(field) to be rejected")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(field), "\(error.message)")
        }
    }

    @Test("Boundary values are accepted")
    func boundaries() throws {
        let fields = Self.fields {
            $0.title = String(repeating: "é", count: 80)
            $0.description = String(repeating: "d", count: 2000)
            $0.priceCents = 0
            $0.tags = (0..<10).map { "t\($0)" } + ["T1"]
            $0.imageIDs = ["a", "b", "c"]
            $0.location.point = GeoPoint(latitude: -90, longitude: 180)
        }
        let valid = try ListingRules.validate(fields)
        #expect(valid.tags.count == 10)
    }

    @Test("Updates validate only the fields they set")
    func changes() throws {
        var changes = ListingChanges()
        changes.tags = ["A", "a", "B"]
        #expect(try ListingRules.validate(changes).tags == ["a", "b"])
        changes.title = ""
        #expect(throws: DomainError.self) { try ListingRules.validate(changes) }
        #expect(ListingChanges().isEmpty)
    }

    @Test("Search circle and query limits")
    func searchLimits() throws {
        #expect(throws: DomainError.self) { try ListingRules.validateQuery(String(repeating: "q", count: 201)) }
        #expect(try ListingRules.validateQuery("  bike ") == "bike")
        let center = GeoPoint(latitude: 0, longitude: 0)
        #expect(throws: DomainError.self) { try ListingRules.validateCircle(center: center, radiusKm: 0) }
        #expect(throws: DomainError.self) { try ListingRules.validateCircle(center: center, radiusKm: 500.1) }
        try ListingRules.validateCircle(center: center, radiusKm: 500)
    }
}
