import Foundation
import SkiffDomain
import SkiffListings
import Testing

/// The one conformance suite for ``ListingsStore``: every test runs against every backend (``StoreKind``)
/// with exact expected values. Split by topic: `+Search`, `+Saved`, `+Concurrency`; the differential test
/// compares both backends on a random corpus.
@Suite("ListingsStore conformance")
struct ListingsStoreConformanceTests {
    typealias F = ListingFixture

    @Test("Create a listing and read it back; dates are rounded to milliseconds", arguments: StoreKind.allCases)
    func createAndRead(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let image = F.image()
            try await store.putImage(image)
            var input = F.listing("Desk lamp", at: 0.000_4) {
                $0.description = "Warm light"
                $0.tags = ["lamp", "desk"]
                $0.location.point = GeoPoint(latitude: 36.1447, longitude: -86.8027)
                $0.imageIDs = [image.id]
                $0.anonymous = true
                $0.biddingEnabled = true
            }
            let created = try await store.createListing(input, requestID: nil)
            input.createdAt = F.t0
            input.updatedAt = F.t0
            #expect(created == input)
            #expect(try await store.listing(id: input.id) == input)
            #expect(try await store.listing(id: "lst_missing") == nil)
            await #expect(throws: ListingsStoreError.listingIDTaken) {
                _ = try await store.createListing(F.listing("Copy", id: input.id), requestID: nil)
            }
        }
    }

    @Test("request_id makes a retry return the first listing; other fields are refused", arguments: StoreKind.allCases)
    func idempotentCreate(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let first = try await store.createListing(F.listing("Bike"), requestID: "req-1")
            let retry = try await store.createListing(F.listing("Bike"), requestID: "req-1")
            #expect(retry == first)
            await #expect(throws: ListingsStoreError.requestIDReused) {
                _ = try await store.createListing(F.listing("Bike", at: 5) { $0.priceCents = 1 }, requestID: "req-1")
            }
            // Another seller may use the same request id.
            let other = try await store.createListing(F.listing("Bike", seller: F.other), requestID: "req-1")
            #expect(other.id != first.id)
            #expect(try await store.sellerListings(sellerID: F.seller, statuses: [], page: .first).items == [first])
        }
    }

    @Test("Images must exist and belong to the seller, checked in order", arguments: StoreKind.allCases)
    func imageChecks(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let mine = F.image()
            let theirs = F.image(owner: F.other)
            try await store.putImage(mine)
            try await store.putImage(theirs)
            await #expect(throws: ListingsStoreError.imageIDTaken) { try await store.putImage(mine) }
            #expect(try await store.image(id: mine.id) == mine)
            #expect(try await store.image(id: "img_missing") == nil)
            await #expect(throws: ListingsStoreError.imageNotFound("img_missing")) {
                _ = try await store.createListing(
                    F.listing("A") { $0.imageIDs = [mine.id, "img_missing"] },
                    requestID: nil
                )
            }
            await #expect(throws: ListingsStoreError.imageNotOwned(theirs.id)) {
                _ = try await store.createListing(
                    F.listing("A") { $0.imageIDs = [theirs.id, "img_missing"] },
                    requestID: nil
                )
            }
            let listing = try await store.createListing(F.listing("A"), requestID: nil)
            var changes = ListingChanges()
            changes.imageIDs = [theirs.id]
            await #expect(throws: ListingsStoreError.imageNotOwned(theirs.id)) {
                _ = try await store.updateListing(id: listing.id, sellerID: F.seller, changes: changes, now: F.t0)
            }
            #expect(try await store.listing(id: listing.id) == listing)
        }
    }

    @Test(
        "Update: seller only, active only, change events by kind, none without a change",
        arguments: StoreKind.allCases
    )
    func update(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let listing = try await store.createListing(F.listing("Chair"), requestID: nil)
            var price = ListingChanges()
            price.priceCents = 500
            price.title = "Comfy chair"
            let later = F.t0.addingTimeInterval(60)
            await #expect(throws: ListingsStoreError.listingNotFound) {
                _ = try await store.updateListing(id: "lst_missing", sellerID: F.seller, changes: price, now: later)
            }
            await #expect(throws: ListingsStoreError.notSeller) {
                _ = try await store.updateListing(id: listing.id, sellerID: F.other, changes: price, now: later)
            }
            let updated = try await store.updateListing(id: listing.id, sellerID: F.seller, changes: price, now: later)
            #expect(updated.listing.title == "Comfy chair")
            #expect(updated.listing.priceCents == 500)
            #expect(updated.listing.updatedAt == later)
            #expect(updated.listing.createdAt == F.t0)
            #expect(
                updated.event
                    == ListingChangeEvent(
                        sequence: 1,
                        listingID: listing.id,
                        title: "Comfy chair",
                        kind: .priceChanged,
                        newPriceCents: 500,
                        oldPriceCents: 1000,
                        changedAt: later
                    )
            )
            var title = ListingChanges()
            title.title = "Chair"
            let second = try await store.updateListing(id: listing.id, sellerID: F.seller, changes: title, now: later)
            #expect(second.event?.kind == .updated)
            #expect(second.event?.sequence == 2)
            #expect(second.event?.oldPriceCents == 500)
            let none = try await store.updateListing(id: listing.id, sellerID: F.seller, changes: title, now: later)
            #expect(none.event == nil)
            #expect(none.listing == second.listing)
            #expect(try await store.change(sequence: 2) == second.event)
            _ = try await store.setStatus(id: listing.id, to: .sold, by: .seller(F.seller), now: later)
            await #expect(throws: ListingsStoreError.notActive) {
                _ = try await store.updateListing(id: listing.id, sellerID: F.seller, changes: price, now: later)
            }
        }
    }

    @Test("Status: sold and withdrawn are final, repeats succeed without an event", arguments: StoreKind.allCases)
    func status(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let listings = try await store.create([F.listing("A"), F.listing("B", at: 1)])
            let (a, b) = (listings[0], listings[1])
            let now = F.t0.addingTimeInterval(10)
            await #expect(throws: ListingsStoreError.listingNotFound) {
                _ = try await store.setStatus(id: "lst_missing", to: .sold, by: .system, now: now)
            }
            await #expect(throws: ListingsStoreError.notSeller) {
                _ = try await store.setStatus(id: a.id, to: .sold, by: .seller(F.other), now: now)
            }
            let sold = try await store.setStatus(id: a.id, to: .sold, by: .seller(F.seller), now: now)
            #expect(sold.transitioned)
            #expect(sold.listing.status == .sold)
            #expect(sold.listing.updatedAt == now)
            #expect(sold.event?.kind == .sold)
            let again = try await store.setStatus(id: a.id, to: .sold, by: .system, now: now)
            #expect(!again.transitioned)
            #expect(again.listing == sold.listing)
            await #expect(throws: ListingsStoreError.alreadySold) {
                _ = try await store.setStatus(id: a.id, to: .withdrawn, by: .seller(F.seller), now: now)
            }
            let withdrawn = try await store.setStatus(id: b.id, to: .withdrawn, by: .system, now: now)
            #expect(withdrawn.event?.kind == .withdrawn)
            #expect(withdrawn.event?.sequence == 2)
            #expect(try await store.setStatus(id: b.id, to: .withdrawn, by: .seller(F.seller), now: now).event == nil)
            await #expect(throws: ListingsStoreError.alreadyWithdrawn) {
                _ = try await store.setStatus(id: b.id, to: .sold, by: .seller(F.seller), now: now)
            }
            // Closed listings stay readable by id.
            #expect(try await store.listing(id: b.id)?.status == .withdrawn)
        }
    }

    @Test("A seller's listings: newest first, status filter, keyset paging", arguments: StoreKind.allCases)
    func sellerListings(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            var input: [Listing] = []
            for index in 0..<7 { input.append(F.listing("Item \(index)", at: Double(index / 2))) }
            input.append(F.listing("Not mine", seller: F.other, at: 3))
            let created = try await store.create(input)
            _ = try await store.setStatus(id: created[2].id, to: .sold, by: .system, now: F.t0)
            let expected = created.prefix(7).sorted { a, b in
                a.createdAt == b.createdAt ? a.id > b.id : a.createdAt > b.createdAt
            }.map(\.id)
            var ids: [String] = []
            var token: String?
            repeat {
                let page = try await store.sellerListings(
                    sellerID: F.seller,
                    statuses: [],
                    page: PageRequest(size: 3, token: token)
                )
                ids += page.items.map(\.id)
                token = page.nextPageToken
            } while token != nil
            #expect(ids == expected)
            let sold = try await store.sellerListings(sellerID: F.seller, statuses: [.sold], page: .first)
            #expect(sold.items.map(\.id) == [created[2].id])
            let first = try await store.sellerListings(sellerID: F.seller, statuses: [], page: PageRequest(size: 2))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.sellerListings(
                    sellerID: F.seller,
                    statuses: [.active],
                    page: PageRequest(size: 2, token: first.nextPageToken)
                )
            }
        }
    }
}
