import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

/// Builders for matcher and service tests.
enum Items {
    static let t0 = Date(millisecondsSince1970: 1_767_225_600_000)
    static let library = LostFoundPoint(latitude: 36.1447, longitude: -86.8027)

    /// A point `metres` north of the library.
    static func north(of point: LostFoundPoint = library, metres: Double) -> LostFoundPoint {
        LostFoundPoint(latitude: point.latitude + metres / 111_195, longitude: point.longitude)
    }

    static func item(
        _ kind: LostFoundKind,
        _ title: String,
        description: String = "",
        category: LostFoundCategory = .other,
        building: String = "Main Library",
        point: LostFoundPoint? = library,
        days: Double = 0,
        reporter: String? = nil,
        id: String = EntityID.make(.lostFoundItem)
    ) -> LostFoundItem {
        LostFoundItem(
            id: id,
            reporterID: reporter ?? (kind == .lost ? "usr_owner" : "usr_finder"),
            kind: kind,
            fields: LostFoundItemFields(
                title: title,
                description: description,
                category: category,
                building: building,
                point: point,
                occurredAt: t0.addingTimeInterval(days * 86_400),
                contactInstructions: "Message me"
            ),
            createdAt: t0.addingTimeInterval(max(days, 0) * 86_400)
        )
    }
}

@Suite("LostFoundMatcher: the scoring formula")
struct LostFoundMatcherTests {
    let matcher = LostFoundMatcher.standard

    @Test("Keywords: distinct folded tokens without stop words and one-letter words")
    func keywords() {
        let fields = Items.item(.lost, "Lost my BLUE Hydro-Flask", description: "A blue bottle, near the café").fields
        #expect(LostFoundMatcher.keywords(fields) == ["blue", "hydro", "flask", "bottle", "cafe"])
    }

    @Test("The documented example: 2 of 4 words, 200 m apart in one grid cell, one day apart scores 0.6734")
    func documentedExample() throws {
        let lost = Items.item(.lost, "Blue Hydro Flask bottle")
        let found = Items.item(.found, "Found a blue bottle", point: Items.north(metres: 200), days: 1)
        let score = try #require(matcher.score(found, lost))
        #expect(score.keyword == 0.5)
        #expect(score.closeness == 1)
        #expect(abs(score.time - exp(-1.0 / 7)) < 1e-9)
        #expect(score.total == 0.6734)
        #expect(score.distanceKm == 0)
        #expect(matcher.score(lost, found) == score)
        let matches = matcher.matches(for: found, among: [lost], at: Items.t0)
        #expect(matches.map(\.lostItemID) == [lost.id])
        #expect(matches.first?.foundItemID == found.id)
        #expect(matches.first?.score == 0.6734)
    }

    @Test("Distances are between grid cells: moving an item within its cell changes nothing anyone sees")
    func cellDistances() throws {
        let lost = Items.item(.lost, "Black leather wallet")
        var scores: Set<LostFoundMatchScore> = []
        // The library's cell spans 36.14°–36.15° of latitude: every point in it scores the same.
        for metres in stride(from: -400.0, through: 500, by: 100) {
            let found = Items.item(.found, "Black leather wallet", point: Items.north(metres: metres))
            scores.insert(try #require(matcher.score(found, lost)))
        }
        #expect(scores.count == 1)
        // The next cell north is one cell (0.01°, 1.11 km) away, wherever in it the item lies.
        let nextCell = try #require(
            matcher.score(Items.item(.found, "Black leather wallet", point: Items.north(metres: 700)), lost)
        )
        #expect(abs((nextCell.distanceKm ?? 0) - 1.112) < 0.001)
    }

    @Test("Identical description, same place, same day scores 1")
    func perfect() {
        let lost = Items.item(.lost, "Black leather wallet")
        let found = Items.item(.found, "black leather WALLET")
        #expect(matcher.score(found, lost)?.total == 1)
    }

    @Test("Different category never matches, whatever the words")
    func differentCategory() {
        let lost = Items.item(.lost, "Black leather wallet", category: .bags)
        let found = Items.item(.found, "Black leather wallet", category: .other)
        #expect(matcher.score(found, lost) == nil)
    }

    @Test("No shared word never matches")
    func noSharedWords() {
        let lost = Items.item(.lost, "Silver house keys")
        let found = Items.item(.found, "Red umbrella")
        #expect(matcher.score(found, lost) == nil)
        // Stop words do not count as shared.
        let a = Items.item(.lost, "lost my thing at the library")
        let b = Items.item(.found, "found this in the library")
        // {thing, library} against {library}: "lost", "my", "at", "the", "found", "this", "in" do not count.
        #expect(matcher.score(b, a)?.keyword == 0.5)
    }

    @Test("More than 5 km apart never matches; closeness decays with distance")
    func farAway() throws {
        let lost = Items.item(.lost, "Black leather wallet")
        #expect(
            matcher.score(Items.item(.found, "Black leather wallet", point: Items.north(metres: 6_000)), lost) == nil
        )
        let near = try #require(
            matcher.score(Items.item(.found, "Black leather wallet", point: Items.north(metres: 100)), lost)
        )
        let far = try #require(
            matcher.score(Items.item(.found, "Black leather wallet", point: Items.north(metres: 3_000)), lost)
        )
        #expect(near.closeness > far.closeness)
        #expect(far.total < matcher.threshold + 0.4)
    }

    @Test("Months apart never matches; time proximity decays with the gap")
    func monthsApart() throws {
        let lost = Items.item(.lost, "Black leather wallet")
        #expect(matcher.score(Items.item(.found, "Black leather wallet", days: 60), lost) == nil)
        #expect(matcher.score(Items.item(.found, "Black leather wallet", days: -31), lost) == nil)
        let soon = try #require(matcher.score(Items.item(.found, "Black leather wallet", days: 1), lost))
        let later = try #require(matcher.score(Items.item(.found, "Black leather wallet", days: 20), lost))
        #expect(soon.time > later.time)
    }

    @Test("Without points, the same building counts as close and different buildings as unknown")
    func buildings() throws {
        let lost = Items.item(.lost, "Black leather wallet", building: "Main  library", point: nil)
        let same = try #require(
            matcher.score(Items.item(.found, "Black leather wallet", building: "MAIN LIBRARY"), lost)
        )
        #expect(same.closeness == 1)
        #expect(same.distanceKm == nil)
        let other = try #require(matcher.score(Items.item(.found, "Black leather wallet", building: "Gym"), lost))
        #expect(other.closeness == 0.3)
        #expect(other.total == 0.86)
    }

    @Test("A weak keyword overlap stays under the threshold even when place and time are perfect")
    func weakOverlap() throws {
        let lost = Items.item(.lost, "Grey hoodie with university logo and torn left sleeve pocket zipper")
        let found = Items.item(.found, "Grey jacket")
        let score = try #require(matcher.score(found, lost))
        #expect(score.keyword < 0.2)
        #expect(score.total < matcher.threshold)
        #expect(matcher.matches(for: found, among: [lost], at: Items.t0).isEmpty)
    }

    @Test("Same kind, same reporter or a returned item never match")
    func hardFilters() {
        let lost = Items.item(.lost, "Black leather wallet")
        #expect(matcher.score(Items.item(.lost, "Black leather wallet", reporter: "usr_x"), lost) == nil)
        #expect(matcher.score(Items.item(.found, "Black leather wallet", reporter: "usr_owner"), lost) == nil)
        var returned = Items.item(.found, "Black leather wallet")
        returned.status = .returned
        #expect(matcher.score(returned, lost) == nil)
    }

    @Test("matches(for:among:) keeps candidates above the threshold, best first")
    func ranking() {
        let found = Items.item(.found, "Black leather wallet")
        let best = Items.item(.lost, "Black leather wallet")
        let good = Items.item(.lost, "Black wallet", days: -3)
        let weak = Items.item(.lost, "Black", description: "Something with many other words in it all different")
        let otherCategory = Items.item(.lost, "Black leather wallet", category: .bags)
        let matches = LostFoundMatcher.standard.matches(
            for: found,
            among: [weak, good, otherCategory, best],
            at: Items.t0
        )
        #expect(matches.map(\.lostItemID) == [best.id, good.id])
        #expect(matches.allSatisfy { $0.foundItemID == found.id && $0.score >= 0.5 })
    }
}
