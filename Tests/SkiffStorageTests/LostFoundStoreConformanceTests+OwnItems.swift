import Foundation
import SkiffDomain
import SkiffLostFound
import Testing

/// A reporter's own items ("my items", issue 11), on every backend.
extension LostFoundStoreConformanceTests {
    @Test(
        "A reporter's items: newest first in every status, filtered by status, paged, with match counts",
        arguments: StoreKind.allCases
    )
    func ownItems(kind: StoreKind) async throws {
        try await withLostFoundStore(kind) { store in
            // The owner's three lost items (two at the same instant: the greater id first), the finder's one.
            let umbrella = try await store.reportItem(
                F.item(.lost, "Red umbrella", id: "lfi_a", at: 1),
                matcher: .standard
            )
            let wallet = try await store.reportItem(
                F.item(.lost, "Black leather wallet", id: "lfi_b", at: 2),
                matcher: .standard
            )
            let scarf = try await store.reportItem(F.item(.lost, "Green scarf", id: "lfi_c", at: 2), matcher: .standard)
            let found = try await store.reportItem(
                F.item(.found, "Black wallet, leather", id: "lfi_d", at: 3),
                matcher: .standard
            )
            #expect(found.matches.map(\.lostItemID) == [wallet.item.id])
            _ = try await store.markReturned(id: umbrella.item.id, reporterID: F.owner, now: F.t0.addingTimeInterval(4))

            let all = try await store.items(reporterID: F.owner, statuses: [], page: PageRequest(size: 10))
            #expect(all.items.map(\.item.id) == ["lfi_c", "lfi_b", "lfi_a"])
            #expect(all.items.map(\.matchCount) == [0, 1, 0])
            #expect(all.items.map(\.item.status) == [.lost, .lost, .returned])
            #expect(all.items[1].item == wallet.item)
            #expect(all.nextPageToken == nil)
            #expect(
                try await store.items(reporterID: F.finder, statuses: [], page: PageRequest(size: 10)).items.map {
                    [$0.item.id, "\($0.matchCount)"]
                } == [["lfi_d", "1"]]
            )
            #expect(try await store.items(reporterID: "usr_nobody", statuses: [], page: PageRequest()).items.isEmpty)

            // Only some statuses.
            let open = try await store.items(reporterID: F.owner, statuses: [.lost], page: PageRequest(size: 10))
            #expect(open.items.map(\.item.id) == ["lfi_c", "lfi_b"])
            let returned = try await store.items(
                reporterID: F.owner,
                statuses: [.returned, .found],
                page: PageRequest()
            )
            #expect(returned.items.map(\.item.id) == ["lfi_a"])

            // Paging: one at a time, in order; a token belongs to its reporter and statuses.
            var ids: [String] = []
            var token: String?
            repeat {
                let page = try await store.items(
                    reporterID: F.owner,
                    statuses: [],
                    page: PageRequest(size: 1, token: token)
                )
                ids += page.items.map(\.item.id)
                token = page.nextPageToken
            } while token != nil
            #expect(ids == ["lfi_c", "lfi_b", "lfi_a"])
            let first = try await store.items(reporterID: F.owner, statuses: [], page: PageRequest(size: 1))
            let next = try #require(first.nextPageToken)
            await #expect(throws: DomainError.self) {
                _ = try await store.items(reporterID: F.finder, statuses: [], page: PageRequest(size: 1, token: next))
            }
            await #expect(throws: DomainError.self) {
                _ = try await store.items(
                    reporterID: F.owner,
                    statuses: [.lost],
                    page: PageRequest(size: 1, token: next)
                )
            }
            _ = scarf
        }
    }
}
