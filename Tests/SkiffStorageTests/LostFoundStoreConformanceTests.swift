import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

/// The one conformance suite for ``LostFoundStore``: every test runs against every backend (``StoreKind``)
/// with exact expected values. Search is in `+Search`, with a differential test of both backends.
@Suite("LostFoundStore conformance")
struct LostFoundStoreConformanceTests {
    typealias F = LostFoundFixture

    @Test("Report an item and read it back; dates are rounded to milliseconds", arguments: StoreKind.allCases)
    func reportAndRead(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            var input = F.item(.found, "Silver keys", at: 0.000_4) {
                $0.description = "Three keys on a ring"
                $0.category = .keys
                $0.occurredAt = F.t0.addingTimeInterval(-3600.000_6)
                $0.imageID = "img_keys"
            }
            let report = try await store.reportItem(input, matcher: .standard)
            #expect(report.matches.isEmpty)
            input.createdAt = F.t0
            input.updatedAt = F.t0
            input.occurredAt = Date(millisecondsSince1970: F.t0.millisecondsSince1970 - 3_600_001)
            #expect(report.item == input)
            #expect(report.item.status == .found)
            #expect(try await store.item(id: input.id) == input)
            #expect(try await store.item(id: "lfi_missing") == nil)
            await #expect(throws: LostFoundStoreError.itemIDTaken) {
                _ = try await store.reportItem(F.item(.lost, "Copy", id: input.id), matcher: .standard)
            }
            // An item without a point or picture round-trips too.
            let bare = try await store.reportItem(F.item(.lost, "Scarf") { $0.point = nil }, matcher: .standard).item
            #expect(try await store.item(id: bare.id) == bare)
            #expect(bare.point == nil && bare.imageID == nil)
        }
    }

    @Test("Update changes fields of an open item of its reporter; errors in order", arguments: StoreKind.allCases)
    func update(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let item = try await store.reportItem(F.item(.lost, "Red umbrella"), matcher: .standard).item
            var changes = LostFoundItemChanges()
            changes.title = "Red folding umbrella"
            changes.point = .some(nil)
            changes.imageID = .some("img_1")
            changes.category = .other
            let later = F.t0.addingTimeInterval(60)
            let updated = try await store.updateItem(id: item.id, reporterID: F.owner, changes: changes, now: later)
            #expect(updated.title == "Red folding umbrella")
            #expect(updated.point == nil)
            #expect(updated.imageID == "img_1")
            #expect(updated.updatedAt == later)
            #expect(updated.createdAt == item.createdAt)
            #expect(try await store.item(id: item.id) == updated)

            // Nothing changes: the item comes back as it was, updatedAt included.
            let same = try await store.updateItem(
                id: item.id,
                reporterID: F.owner,
                changes: changes,
                now: later.addingTimeInterval(60)
            )
            #expect(same == updated)

            await #expect(throws: LostFoundStoreError.itemNotFound) {
                _ = try await store.updateItem(id: "lfi_missing", reporterID: F.owner, changes: changes, now: later)
            }
            await #expect(throws: LostFoundStoreError.notReporter) {
                _ = try await store.updateItem(id: item.id, reporterID: F.finder, changes: changes, now: later)
            }
            _ = try await store.markReturned(id: item.id, reporterID: F.owner, now: later)
            // Permission is checked before state.
            await #expect(throws: LostFoundStoreError.notReporter) {
                _ = try await store.updateItem(id: item.id, reporterID: F.finder, changes: changes, now: later)
            }
            await #expect(throws: LostFoundStoreError.returned) {
                _ = try await store.updateItem(id: item.id, reporterID: F.owner, changes: changes, now: later)
            }
        }
    }

    @Test("Mark returned: once, by the reporter; again is a no-op", arguments: StoreKind.allCases)
    func markReturned(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let item = try await store.reportItem(F.item(.found, "Blue backpack"), matcher: .standard).item
            await #expect(throws: LostFoundStoreError.itemNotFound) {
                _ = try await store.markReturned(id: "lfi_missing", reporterID: F.finder, now: F.t0)
            }
            await #expect(throws: LostFoundStoreError.notReporter) {
                _ = try await store.markReturned(id: item.id, reporterID: F.owner, now: F.t0)
            }
            let when = F.t0.addingTimeInterval(120.000_4)
            let returned = try await store.markReturned(id: item.id, reporterID: F.finder, now: when)
            #expect(returned.status == .returned)
            #expect(returned.returnedAt == F.t0.addingTimeInterval(120))
            #expect(returned.updatedAt == F.t0.addingTimeInterval(120))
            #expect(returned.kind == .found)
            let again = try await store.markReturned(
                id: item.id,
                reporterID: F.finder,
                now: when.addingTimeInterval(60)
            )
            #expect(again == returned)
            #expect(try await store.item(id: item.id) == returned)
        }
    }

    @Test(
        "A report scores at most maximumCandidates candidates: the latest to occur, ties by the greater id",
        arguments: StoreKind.allCases
    )
    func candidatesAreBounded(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            var matcher = LostFoundMatcher.standard
            matcher.maximumCandidates = 3
            // Six lost wallets, a day apart (two on the same day, ids ordering them); one too far away, one
            // of another category: neither counts towards the three.
            var lost: [LostFoundItem] = []
            for (day, id) in [(6, "lfi_a"), (5, "lfi_b"), (4, "lfi_c"), (4, "lfi_d"), (3, "lfi_e"), (2, "lfi_f")] {
                let item = F.item(.lost, "Black leather wallet", id: id) {
                    $0.occurredAt = F.t0.addingTimeInterval(-Double(day) * 86_400)
                }
                lost.append(try await store.reportItem(item, matcher: matcher).item)
            }
            _ = try await store.reportItem(
                F.item(.lost, "Black leather wallet", id: "lfi_z") {
                    $0.occurredAt = F.t0
                    $0.point = LostFoundPoint(latitude: F.library.latitude + 1, longitude: F.library.longitude)
                },
                matcher: matcher
            )
            _ = try await store.reportItem(
                F.item(.lost, "Black leather wallet", id: "lfi_y") { $0.category = .bags },
                matcher: matcher
            )
            let report = try await store.reportItem(F.item(.found, "Black leather wallet", at: 10), matcher: matcher)
            // The latest three: f (2 days), e (3 days), then d before c (same day, greater id).
            #expect(Set(report.matches.map(\.lostItemID)) == ["lfi_f", "lfi_e", "lfi_d"])
            // The bound only limits what one report scores: with the standard matcher all six match.
            let all = try await store.reportItem(
                F.item(.found, "Black leather wallet", reporter: "usr_other_finder", at: 20),
                matcher: .standard
            )
            #expect(Set(all.matches.map(\.lostItemID)) == Set(lost.map(\.id)))
        }
    }

    @Test("Reporting records matches in both directions, only with open candidates", arguments: StoreKind.allCases)
    func matching(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let wallet = try await store.reportItem(F.item(.lost, "Black leather wallet"), matcher: .standard).item
            let returnedLost = try await store.reportItem(
                F.item(.lost, "Black leather wallet", reporter: "usr_third"),
                matcher: .standard
            ).item
            _ = try await store.markReturned(id: returnedLost.id, reporterID: "usr_third", now: F.t0)
            let ownLost = try await store.reportItem(
                F.item(.lost, "Black leather wallet", reporter: F.finder),
                matcher: .standard
            ).item
            _ = try await store.reportItem(
                F.item(.lost, "Black leather wallet") { $0.category = .bags },
                matcher: .standard
            )
            _ = try await store.reportItem(
                F.item(.lost, "Black leather wallet", reporter: "usr_far") {
                    $0.occurredAt = F.t0.addingTimeInterval(-40 * 86_400)
                },
                matcher: .standard
            )

            let found = F.item(.found, "Black wallet", at: 10) { $0.point = F.north(metres: 100) }
            let report = try await store.reportItem(found, matcher: .standard)
            #expect(report.matches.map(\.lostItemID) == [wallet.id])
            let match = try #require(report.matches.first)
            #expect(match.foundItemID == found.id)
            #expect(match.matchedAt == F.t0.addingTimeInterval(10))
            #expect(match.score == LostFoundMatcher.standard.score(found, wallet)?.total)
            // Between the two points' grid cells (the same one here), never the exact points.
            #expect(match.distanceKm == 0)
            #expect(!report.matches.contains { $0.lostItemID == ownLost.id || $0.lostItemID == returnedLost.id })

            // Matches by time, for the feed relay.
            #expect(try await store.matches(recordedSince: F.t0, limit: 10) == [match])
            #expect(try await store.matches(recordedSince: F.t0.addingTimeInterval(10), limit: 10) == [match])
            #expect(try await store.matches(recordedSince: F.t0.addingTimeInterval(11), limit: 10).isEmpty)
            #expect(try await store.matches(recordedSince: F.t0, limit: 0).isEmpty)

            let fromLost = try await store.matches(itemID: wallet.id, page: .first)
            #expect(fromLost.items.map(\.candidate) == [report.item])
            #expect(fromLost.items.first?.score == match.score)
            #expect(fromLost.items.first?.distanceKm == match.distanceKm)
            #expect(fromLost.items.first?.matchedAt == match.matchedAt)
            #expect(fromLost.nextPageToken == nil)
            let fromFound = try await store.matches(itemID: found.id, page: .first)
            #expect(fromFound.items.map(\.candidate) == [wallet])
            #expect(try await store.matches(itemID: ownLost.id, page: .first).items.isEmpty)

            // Candidates are shown as they are now.
            let returned = try await store.markReturned(
                id: found.id,
                reporterID: F.finder,
                now: F.t0.addingTimeInterval(20)
            )
            #expect(try await store.matches(itemID: wallet.id, page: .first).items.map(\.candidate) == [returned])
            // A returned item is no longer a candidate for new reports.
            let second = try await store.reportItem(
                F.item(.lost, "Black leather wallet", reporter: "usr_late"),
                matcher: .standard
            )
            #expect(second.matches.isEmpty)
            await #expect(throws: LostFoundStoreError.itemNotFound) {
                _ = try await store.matches(itemID: "lfi_missing", page: .first)
            }
        }
    }

    @Test("Matches page best first, then newest, stably, with tokens tied to the item", arguments: StoreKind.allCases)
    func matchPaging(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            let found = try await store.reportItem(F.item(.found, "Black leather wallet"), matcher: .standard).item
            // Five lost wallets by different owners, with decreasing keyword overlap and two exact ties.
            let titles = [
                "Black leather wallet", "Black leather wallet", "Black wallet", "Leather wallet with cards",
                "Black leather wallet purse",
            ]
            var lost: [LostFoundItem] = []
            for (index, title) in titles.enumerated() {
                lost.append(
                    try await store.reportItem(
                        F.item(.lost, title, reporter: "usr_\(index)", at: Double(index)),
                        matcher: .standard
                    ).item
                )
            }
            let all = try await store.allMatches(itemID: found.id, pageSize: 100)
            #expect(all.count == 5)
            let sorted = all.sorted { a, b in
                if a.score != b.score { return a.score > b.score }
                if a.matchedAt != b.matchedAt { return a.matchedAt > b.matchedAt }
                return a.candidate.id > b.candidate.id
            }
            #expect(all == sorted)
            #expect(all.prefix(2).map(\.candidate.id) == [lost[1].id, lost[0].id])
            for size in 1...4 {
                #expect(try await store.allMatches(itemID: found.id, pageSize: size) == all)
            }
            let first = try await store.matches(itemID: found.id, page: PageRequest(size: 2))
            let token = try #require(first.nextPageToken)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.matches(itemID: lost[0].id, page: PageRequest(size: 2, token: token))
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.matches(itemID: found.id, page: PageRequest(size: 2, token: "garbage"))
            }
        }
    }
}
