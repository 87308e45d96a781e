import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

@Suite("LostFoundRules")
struct LostFoundRulesTests {
    static let now = Items.t0

    static func fields(_ configure: (inout LostFoundItemFields) -> Void = { _ in }) -> LostFoundItemFields {
        var fields = Items.item(.lost, "  Keys  ", description: " On a red ring ").fields
        fields.building = "  Main Library "
        fields.contactInstructions = " Text me "
        configure(&fields)
        return fields
    }

    @Test("Valid fields come back trimmed, with the date at millisecond precision")
    func normalizes() throws {
        let validated = try LostFoundRules.validate(
            Self.fields { $0.occurredAt = Self.now.addingTimeInterval(0.000_4) },
            now: Self.now
        )
        #expect(validated.title == "Keys")
        #expect(validated.description == "On a red ring")
        #expect(validated.building == "Main Library")
        #expect(validated.contactInstructions == "Text me")
        #expect(validated.occurredAt == Self.now)
        #expect(validated.imageID == nil)
    }

    @Test("Each limit is enforced with a message naming the field")
    func limits() {
        let cases: [(String, (inout LostFoundItemFields) -> Void)] = [
            ("item.title", { $0.title = "   " }),
            ("item.title", { $0.title = String(repeating: "a", count: 81) }),
            ("item.description", { $0.description = String(repeating: "a", count: 2001) }),
            ("item.building", { $0.building = "" }),
            ("item.building", { $0.building = String(repeating: "b", count: 101) }),
            ("item.contact_instructions", { $0.contactInstructions = " " }),
            ("item.contact_instructions", { $0.contactInstructions = String(repeating: "c", count: 501) }),
            ("item.point.latitude", { $0.point = LostFoundPoint(latitude: 91, longitude: 0) }),
            ("item.point.longitude", { $0.point = LostFoundPoint(latitude: 0, longitude: -180.5) }),
            ("item.point.latitude", { $0.point = LostFoundPoint(latitude: .nan, longitude: 0) }),
            ("item.occurred_at", { $0.occurredAt = Items.t0.addingTimeInterval(86_400.001) }),
            ("item.image_id", { $0.imageID = "img with spaces" }),
            ("item.image_id", { $0.imageID = String(repeating: "i", count: 129) }),
        ]
        for (field, breakIt) in cases {
            let error = #expect(throws: DomainError.self, "\(field)") {
                try LostFoundRules.validate(Self.fields(breakIt), now: Self.now)
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.hasPrefix(field) == true, "\(String(describing: error))")
        }
    }

    @Test("Limits are inclusive; occurred_at may be up to a day ahead")
    func boundaries() throws {
        let fields = Self.fields {
            $0.title = String(repeating: "a", count: 80)
            $0.description = String(repeating: "d", count: 2000)
            $0.building = String(repeating: "b", count: 100)
            $0.contactInstructions = String(repeating: "c", count: 500)
            $0.occurredAt = Self.now.addingTimeInterval(86_400)
            $0.point = LostFoundPoint(latitude: -90, longitude: 180)
            $0.imageID = "img_abc"
        }
        #expect(try LostFoundRules.validate(fields, now: Self.now).imageID == "img_abc")
    }

    @Test("Updates validate only what they set; an empty image id clears the picture")
    func changes() throws {
        var changes = LostFoundItemChanges()
        changes.title = " New title "
        changes.imageID = .some("")
        let validated = try LostFoundRules.validate(changes, now: Self.now)
        #expect(validated.title == "New title")
        #expect(validated.imageID == .some(nil))
        #expect(validated.building == nil)
        changes.building = " "
        #expect(throws: DomainError.self) { try LostFoundRules.validate(changes, now: Self.now) }
    }

    @Test("Search circle and query limits")
    func search() throws {
        #expect(try LostFoundRules.validateQuery("  keys ") == "keys")
        #expect(throws: DomainError.self) { try LostFoundRules.validateQuery(String(repeating: "q", count: 201)) }
        try LostFoundRules.validateCircle(LostFoundCircle(center: Items.library, radiusKm: 500))
        for radius in [0, -1, 500.1, .infinity] {
            #expect(throws: DomainError.self) {
                try LostFoundRules.validateCircle(LostFoundCircle(center: Items.library, radiusKm: radius))
            }
        }
    }

    @Test("Buildings compare by their folded words")
    func buildingKey() {
        #expect(LostFoundRules.buildingKey("  Café   Central-Hall ") == "cafe central hall")
        #expect(LostFoundRules.buildingKey("CAFE central hall") == LostFoundRules.buildingKey("Café Central Hall"))
    }
}
