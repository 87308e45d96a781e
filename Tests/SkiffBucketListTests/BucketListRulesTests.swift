import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

@Suite("BucketList rules")
struct BucketListRulesTests {
    static let point = Coordinate(latitude: 36.1447, longitude: -86.8027)

    static func fields(
        title: String = "Sunrise hike",
        place: String = "Radnor Lake",
        point: Coordinate = point,
        tags: [String] = []
    ) -> ActivityFields {
        ActivityFields(title: title, place: Place(name: place, point: point), tags: tags)
    }

    static func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as DomainError {
            #expect(error.code == .invalidArgument)
            return error.message
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("Titles, descriptions and place names are trimmed and bounded")
    func texts() throws {
        #expect(try BucketListRules.validate(Self.fields(title: "  Hike  ", place: " Lake ")).title == "Hike")
        #expect(try BucketListRules.validate(Self.fields(place: " Lake ")).place.name == "Lake")
        #expect(
            Self.message { _ = try BucketListRules.validate(Self.fields(title: "   ")) }?.hasPrefix(
                "activity.title is empty"
            ) == true
        )
        _ = try BucketListRules.validate(Self.fields(title: String(repeating: "t", count: 100)))
        #expect(
            Self.message { _ = try BucketListRules.validate(Self.fields(title: String(repeating: "t", count: 101))) }
                == "activity.title has 101 characters: shorten it to at most 100."
        )
        #expect(
            Self.message { _ = try BucketListRules.validate(Self.fields(place: "")) }?.hasPrefix(
                "activity.place.name is empty"
            ) == true
        )
        #expect(
            Self.message { _ = try BucketListRules.validate(Self.fields(place: String(repeating: "p", count: 121))) }
                != nil
        )
        #expect(
            Self.message { _ = try BucketListRules.validateDescription(String(repeating: "d", count: 2001)) } != nil
        )
        #expect(try BucketListRules.validateDescription(String(repeating: "d", count: 2000)).count == 2000)
    }

    @Test(
        "Coordinates must be finite and within range",
        arguments: [
            (90.000_1, 0.0), (-90.000_1, 0.0), (0.0, 180.000_1), (0.0, -180.000_1), (Double.nan, 0.0),
            (0.0, Double.infinity),
        ]
    )
    func badCoordinates(latitude: Double, longitude: Double) {
        let point = Coordinate(latitude: latitude, longitude: longitude)
        #expect(Self.message { _ = try BucketListRules.validate(Self.fields(point: point)) } != nil)
    }

    @Test("Extreme but valid coordinates pass")
    func edgeCoordinates() throws {
        for point in [Coordinate(latitude: 90, longitude: 180), Coordinate(latitude: -90, longitude: -180)] {
            _ = try BucketListRules.validate(Self.fields(point: point))
        }
    }

    @Test("Tags: at most 10, 1–30 characters, lowercased without duplicates")
    func tags() throws {
        #expect(try BucketListRules.validateTags([" Outdoors", "outdoors", "Night "]) == ["outdoors", "night"])
        #expect(
            Self.message { _ = try BucketListRules.validateTags((0..<11).map { "t\($0)" }) }
                == "activity.tags has 11 tags: use at most 10."
        )
        #expect(Self.message { _ = try BucketListRules.validateTags([" "]) } != nil)
        #expect(Self.message { _ = try BucketListRules.validateTags([String(repeating: "x", count: 31)]) } != nil)
    }

    @Test("Image ids must look like Listings' image ids")
    func imageIDs() throws {
        #expect(try BucketListRules.validateImageID(nil) == nil)
        #expect(try BucketListRules.validateImageID("") == nil)
        let id = "img_" + String(repeating: "A", count: 22)
        #expect(try BucketListRules.validateImageID(id) == id)
        #expect(
            Self.message { _ = try BucketListRules.validateImageID("lst_" + String(repeating: "A", count: 22)) } != nil
        )
        #expect(Self.message { _ = try BucketListRules.validateImageID("img_short") } != nil)
    }

    @Test("Comments, list names, list descriptions and notes are bounded")
    func otherTexts() throws {
        #expect(try BucketListRules.validateComment("  nice  ") == "nice")
        #expect(Self.message { _ = try BucketListRules.validateComment(" ") } != nil)
        #expect(Self.message { _ = try BucketListRules.validateComment(String(repeating: "c", count: 1001)) } != nil)
        #expect(try BucketListRules.validateListName(" Summer ") == "Summer")
        #expect(Self.message { _ = try BucketListRules.validateListName(String(repeating: "n", count: 61)) } != nil)
        #expect(
            Self.message { _ = try BucketListRules.validateListDescription(String(repeating: "d", count: 501)) } != nil
        )
    }

    @Test("Completion dates: from 2000 to one day ahead; notes at most 500 characters")
    func completions() throws {
        let now = Date(millisecondsSince1970: 1_767_225_600_000)
        let done = try BucketListRules.validateCompletion(Completion(completedAt: now, note: "  great "), now: now)
        #expect(done == Completion(completedAt: now, note: "great"))
        _ = try BucketListRules.validateCompletion(Completion(completedAt: now.addingTimeInterval(86_400)), now: now)
        #expect(
            Self.message {
                _ = try BucketListRules.validateCompletion(
                    Completion(completedAt: now.addingTimeInterval(86_401)),
                    now: now
                )
            } != nil
        )
        #expect(
            Self.message {
                _ = try BucketListRules.validateCompletion(
                    Completion(completedAt: Date(timeIntervalSince1970: 946_684_799)),
                    now: now
                )
            } != nil
        )
        #expect(
            Self.message {
                _ = try BucketListRules.validateCompletion(
                    Completion(completedAt: now, note: String(repeating: "n", count: 501)),
                    now: now
                )
            } != nil
        )
    }

    @Test("Search circles: radius above 0 and at most 100 km; windows 1…720 hours, 0 meaning a week")
    func searches() throws {
        try BucketListRules.validateCircle(center: Self.point, radiusKm: 100)
        #expect(Self.message { try BucketListRules.validateCircle(center: Self.point, radiusKm: 0) } != nil)
        #expect(Self.message { try BucketListRules.validateCircle(center: Self.point, radiusKm: 100.01) } != nil)
        #expect(Self.message { try BucketListRules.validateCircle(center: Self.point, radiusKm: .nan) } != nil)
        #expect(try BucketListRules.validateWindow(hours: 0) == 168)
        #expect(try BucketListRules.validateWindow(hours: 720) == 720)
        #expect(Self.message { _ = try BucketListRules.validateWindow(hours: 721) } != nil)
        #expect(Self.message { _ = try BucketListRules.validateWindow(hours: -1) } != nil)
    }

    @Test("User ids must be Accounts ids")
    func userIDs() throws {
        try BucketListRules.validateUserID(EntityID.make(.account))
        #expect(Self.message { try BucketListRules.validateUserID("") } == "user_id is empty: name a user.")
        #expect(Self.message { try BucketListRules.validateUserID("bob") } != nil)
    }

    @Test("Haversine distances with known values")
    func distances() {
        let nashville = Coordinate(latitude: 36.1627, longitude: -86.7816)
        let memphis = Coordinate(latitude: 35.1495, longitude: -90.0490)
        // Computed independently with the same formula (R = 6371.0088 km): 315.9535 km.
        #expect(abs(Geo.distanceKm(nashville, memphis) - 315.9535) < 0.001)
        #expect(Geo.distanceKm(nashville, nashville) == 0)
        // One degree of latitude is about 111.2 km.
        #expect(
            abs(Geo.distanceKm(Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 0)) - 111.195)
                < 0.01
        )
    }
}
