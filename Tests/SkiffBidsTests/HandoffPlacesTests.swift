import Foundation
import SkiffBids
import SkiffDomain
import Testing

@Suite("Hand-off places")
struct HandoffPlacesTests {
    static let steps = HandoffPlace(id: "steps", name: "Library steps", latitude: 10, longitude: 20, hours: "Daily")

    @Test("The shipped example list is valid; hours may be left out")
    func decode() throws {
        let example = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dev/handoff-places.example.json")
        #expect(try HandoffPlaces.load(path: example.path).count == 3)
        let places = try HandoffPlaces.decode(
            Data(#"{"places": [{"id": "a-1_b", "name": "A", "latitude": -90, "longitude": 180}]}"#.utf8)
        )
        #expect(places == [HandoffPlace(id: "a-1_b", name: "A", latitude: -90, longitude: 180, hours: "")])
        #expect(try HandoffPlaces.decode(Data(#"{"places": []}"#.utf8)).isEmpty)
    }

    @Test("Limits: count, id, name, coordinates, hours, file size")
    func limits() {
        func refused(_ places: [HandoffPlace], _ expected: String) {
            do {
                try HandoffPlaces.validate(places)
                Issue.record("accepted \(places)")
            } catch {
                #expect(error.description.contains(expected), "\(error)")
            }
        }
        var place = Self.steps
        let many = (0...HandoffPlaces.maximumCount).map { index in
            HandoffPlace(id: "p\(index)", name: "P", latitude: 0, longitude: 0)
        }
        refused(many, "at most 100")
        #expect(throws: Never.self) { try HandoffPlaces.validate(Array(many.dropLast())) }
        for id in ["", "UPPER", "sp ace", String(repeating: "a", count: 65), "é"] {
            place.id = id
            refused([place], "id must be")
        }
        place = Self.steps
        place.name = String(repeating: "n", count: 101)
        refused([place], "name must be")
        place = Self.steps
        place.longitude = -180.5
        refused([place], "longitude")
        place = Self.steps
        place.latitude = .nan
        refused([place], "latitude")
        place = Self.steps
        place.hours = String(repeating: "h", count: 201)
        refused([place], "hours")
        #expect(throws: HandoffPlaces.Invalid.self) {
            _ = try HandoffPlaces.decode(Data(count: HandoffPlaces.fileMaximumBytes + 1))
        }
    }

    @Test(
        "ConfirmHandoff rules: a pick while pending replaces the place and tells the other party; final once completed"
    )
    func lifecycle() throws {
        let desk = HandoffPlace(id: "desk", name: "Desk", latitude: 0, longitude: 0)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var sale = Sale(
            id: "sale_1",
            listingID: "lst_1",
            listingTitle: "Lamp",
            category: .furniture,
            bidID: "bid_1",
            buyerID: "usr_b",
            sellerID: "usr_s",
            amountCents: 100,
            createdAt: now
        )
        // The seller picks first; the buyer, confirming without a place, keeps it and completes.
        let picked = try BidLifecycle.confirmHandoff(sale, userID: "usr_s", place: Self.steps, now: now)
        #expect(picked.confirmation.sale.handoffPlace == Self.steps)
        #expect(picked.events.map(\.userID) == ["usr_b"])
        let repick = try BidLifecycle.confirmHandoff(picked.confirmation.sale, userID: "usr_s", place: desk, now: now)
        #expect(repick.confirmation.sale.handoffPlace == desk && repick.events.map(\.userID) == ["usr_b"])
        sale = repick.confirmation.sale
        let done = try BidLifecycle.confirmHandoff(sale, userID: "usr_b", place: nil, now: now)
        #expect(done.confirmation.completedNow && done.confirmation.sale.handoffPlace == desk)
        #expect(throws: BidsStoreError.handoffPlaceFinal) {
            _ = try BidLifecycle.confirmHandoff(done.confirmation.sale, userID: "usr_b", place: Self.steps, now: now)
        }
        // The same place by id, edited by the operator since, changes nothing (even once completed).
        var renamed = desk
        renamed.name = "Desk (renamed)"
        let same = try BidLifecycle.confirmHandoff(done.confirmation.sale, userID: "usr_b", place: renamed, now: now)
        #expect(same.confirmation.sale.handoffPlace == desk && same.events.isEmpty)
        #expect(throws: BidsStoreError.notAParty) {
            _ = try BidLifecycle.confirmHandoff(sale, userID: "usr_x", place: Self.steps, now: now)
        }
    }
}
