import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

/// What only the in-memory backend has: a report scored under the shared lock keeps those matches only when
/// no change meanwhile touched an item that could be one of its candidates.
@Suite("In-memory lost-and-found store")
struct InMemoryLostFoundStoreTests {
    typealias F = LostFoundFixture

    @Test("A report is scored again when a change between scoring and recording touched a possible candidate")
    func reportScoredBeforeTheWrite() async throws {
        let store = InMemoryLostFoundStore()
        try await Self.changesBetweenScoringAndRecording(store) { item, change in
            try await store.reportItem(item, matcher: .standard, betweenReadAndWrite: change)
        }
    }

    /// Reports a found item with changes between its scoring and its recording (`report(item, change)` runs
    /// `change` there) and checks that its matches are those of the items as they are when it is recorded.
    static func changesBetweenScoringAndRecording(
        _ store: some LostFoundStore,
        report: (LostFoundItem, @escaping () async throws -> Void) async throws -> LostFoundReport
    ) async throws {
        let words = "Blue Hydro Flask bottle"
        let lost = try await store.reportItem(F.item(.lost, words), matcher: .standard).item
        func found(_ change: @escaping () async throws -> Void) async throws -> [String] {
            let item = F.item(.found, "Found a blue Hydro Flask bottle", reporter: "usr_\(UUID().uuidString)")
            return try await report(item, change).matches.map(\.lostItemID)
        }
        // Not a candidate (another category): the matches scored before stand.
        #expect(
            try await found {
                _ = try await store.reportItem(F.item(.lost, words) { $0.category = .bags }, matcher: .standard)
            } == [lost.id]
        )
        // A new candidate meanwhile: scored too.
        var second = LostFoundItem?.none
        let withSecond = try await found {
            second = try await store.reportItem(F.item(.lost, words, reporter: "usr_second"), matcher: .standard).item
        }
        #expect(Set(withSecond) == [lost.id, try #require(second).id])
        // A candidate whose words change: no longer a match.
        var changes = LostFoundItemChanges()
        changes.title = "Red umbrella"
        #expect(
            try await found {
                _ = try await store.updateItem(id: lost.id, reporterID: F.owner, changes: changes, now: F.t0)
            } == [try #require(second).id]
        )
        // A candidate returned: no longer a match.
        #expect(
            try await found {
                _ = try await store.markReturned(id: try #require(second).id, reporterID: "usr_second", now: F.t0)
            }.isEmpty
        )
        // Many changes (more than the in-memory store remembers), a new candidate first: scored again, found.
        var third = LostFoundItem?.none
        let afterMany = try await found {
            third = try await store.reportItem(F.item(.lost, words, reporter: "usr_third"), matcher: .standard).item
            for index in 0..<300 {
                _ = try await store.reportItem(
                    F.item(.lost, "Spare key \(index)") { $0.category = .keys },
                    matcher: .standard
                )
            }
        }
        #expect(afterMany == [try #require(third).id])
    }
}
