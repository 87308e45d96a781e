import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

@Suite("Lost-and-found lifecycle")
struct LostFoundLifecycleTests {
    /// A time with sub-millisecond digits, to see the decisions round it.
    static let now = Items.t0.addingTimeInterval(3_600.123_456)

    static func lost(id: String = "lfi_lost", status: LostFoundStatus? = nil) -> LostFoundItem {
        var item = Items.item(.lost, "Blue Hydro Flask bottle", id: id)
        if let status { item.status = status }
        return item
    }

    // MARK: Report

    @Test("A report is stored rounded with the matches of the eligible candidates only")
    func report() throws {
        var found = Items.item(.found, "Found a blue bottle", id: "lfi_found")
        found.createdAt = Self.now
        let candidates = [
            Self.lost(id: "lfi_match"),
            Self.lost(id: "lfi_returned", status: .returned),
            Items.item(.lost, "Blue Hydro Flask bottle", reporter: "usr_finder", id: "lfi_own"),
            Items.item(.lost, "Blue Hydro Flask bottle", category: .bags, id: "lfi_other_category"),
            Items.item(.found, "Blue Hydro Flask bottle", reporter: "usr_other", id: "lfi_same_kind"),
        ]
        let report = try LostFoundLifecycle.report(
            found,
            itemIDTaken: false,
            candidates: candidates,
            matcher: .standard
        )
        #expect(report.item == found.rounded)
        #expect(report.item.createdAt != Self.now)
        #expect(report.matches.map(\.lostItemID) == ["lfi_match"])
        #expect(report.matches.first?.foundItemID == "lfi_found")
        #expect(report.matches.first?.matchedAt == Self.now.roundedToMilliseconds)
    }

    @Test("Candidates are of the other kind, open, in the same category and from someone else")
    func candidates() {
        let found = Items.item(.found, "Found a blue bottle")
        #expect(LostFoundLifecycle.isCandidate(Self.lost(), for: found))
        #expect(!LostFoundLifecycle.isCandidate(Self.lost(status: .returned), for: found))
        #expect(!LostFoundLifecycle.isCandidate(Items.item(.found, "bottle", reporter: "usr_x"), for: found))
        #expect(!LostFoundLifecycle.isCandidate(Items.item(.lost, "bottle", category: .keys), for: found))
        #expect(!LostFoundLifecycle.isCandidate(Items.item(.lost, "bottle", reporter: "usr_finder"), for: found))
    }

    @Test("A taken item id is refused")
    func reportIDTaken() {
        #expect(throws: LostFoundStoreError.itemIDTaken) {
            try LostFoundLifecycle.report(Self.lost(), itemIDTaken: true, candidates: [], matcher: .standard)
        }
    }

    // MARK: Update

    static func changes(_ configure: (inout LostFoundItemChanges) -> Void) -> LostFoundItemChanges {
        var changes = LostFoundItemChanges()
        configure(&changes)
        return changes
    }

    @Test("An update applies the changes and moves updatedAt")
    func update() throws {
        let change = try LostFoundLifecycle.update(
            Self.lost(),
            reporterID: "usr_owner",
            changes: Self.changes { $0.title = "Green bottle" },
            now: Self.now
        )
        #expect(change.changed)
        #expect(change.item.title == "Green bottle")
        #expect(change.item.updatedAt == Self.now.roundedToMilliseconds)
    }

    @Test("An update that changes nothing keeps the item as stored")
    func updateNoOp() throws {
        let change = try LostFoundLifecycle.update(
            Self.lost(),
            reporterID: "usr_owner",
            changes: Self.changes { $0.title = "Blue Hydro Flask bottle" },
            now: Self.now
        )
        #expect(change == LostFoundLifecycle.Change(item: Self.lost(), changed: false))
    }

    @Test("An update checks existence, then reporter, then status")
    func updateErrors() {
        let changes = Self.changes { $0.title = "Green bottle" }
        #expect(throws: LostFoundStoreError.itemNotFound) {
            try LostFoundLifecycle.update(nil, reporterID: "usr_owner", changes: changes, now: Self.now)
        }
        #expect(throws: LostFoundStoreError.notReporter) {
            try LostFoundLifecycle.update(
                Self.lost(status: .returned),
                reporterID: "usr_x",
                changes: changes,
                now: Self.now
            )
        }
        #expect(throws: LostFoundStoreError.returned) {
            try LostFoundLifecycle.update(
                Self.lost(status: .returned),
                reporterID: "usr_owner",
                changes: changes,
                now: Self.now
            )
        }
    }

    // MARK: Returned

    @Test("Marking returned sets the status and both dates; again, nothing changes")
    func markReturned() throws {
        let change = try LostFoundLifecycle.markReturned(Self.lost(), reporterID: "usr_owner", now: Self.now)
        #expect(change.changed)
        #expect(change.item.status == .returned)
        #expect(change.item.returnedAt == Self.now.roundedToMilliseconds)
        #expect(change.item.updatedAt == Self.now.roundedToMilliseconds)
        let again = try LostFoundLifecycle.markReturned(change.item, reporterID: "usr_owner", now: Items.t0)
        #expect(again == LostFoundLifecycle.Change(item: change.item, changed: false))
    }

    @Test("Marking returned checks existence, then reporter")
    func markReturnedErrors() {
        #expect(throws: LostFoundStoreError.itemNotFound) {
            try LostFoundLifecycle.markReturned(nil, reporterID: "usr_owner", now: Self.now)
        }
        #expect(throws: LostFoundStoreError.notReporter) {
            try LostFoundLifecycle.markReturned(Self.lost(status: .returned), reporterID: "usr_x", now: Self.now)
        }
    }
}
