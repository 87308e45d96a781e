import Foundation
import SkiffDomain
import SkiffListings
import Testing

extension ListingsStoreConformanceTests {
    @Test("An image is read piece by piece: its header, then any range of its bytes", arguments: StoreKind.allCases)
    func imageReadInPieces(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            var image = F.image(id: "img_big")
            image.bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try await store.putImage(image)
            #expect(try await store.imageHeader(id: "img_big") == image.header)
            #expect(try await store.imageHeader(id: "img_missing") == nil)
            // Read back in odd-sized pieces: the concatenation is the image.
            var read = Data()
            while let piece = try await store.imageBytes(id: "img_big", offset: read.count, length: 65_537),
                !piece.isEmpty
            {
                read.append(piece)
            }
            #expect(read == image.bytes)
            #expect(try await store.imageBytes(id: "img_big", offset: 299_990, length: 100)?.count == 10)
            #expect(try await store.imageBytes(id: "img_big", offset: 400_000, length: 100) == Data())
            #expect(try await store.imageBytes(id: "img_missing", offset: 0, length: 100) == nil)
        }
    }

    @Test(
        "Images no listing uses are deleted once older than the cutoff; attached and kept ones stay",
        arguments: StoreKind.allCases
    )
    func deleteUnattachedImages(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            func image(_ id: String, at seconds: Double) -> StoredImage {
                var image = F.image(id: id)
                image.createdAt = F.t0.addingTimeInterval(seconds)
                return image
            }
            // Uploaded at t0: one attached to an active listing, one to a listing later withdrawn, one taken
            // off its listing, one kept (a profile picture), one never attached. One more uploaded later.
            for stored in [
                image("img_active", at: 0), image("img_withdrawn", at: 0), image("img_removed", at: 0),
                image("img_avatar", at: 0), image("img_orphan", at: 0), image("img_recent", at: 7_200),
            ] {
                try await store.putImage(stored)
            }
            let active = try await store.createListing(
                F.listing("Lamp") { $0.imageIDs = ["img_active"] },
                requestID: nil
            )
            let withdrawn = try await store.createListing(
                F.listing("Desk") { $0.imageIDs = ["img_withdrawn", "img_removed"] },
                requestID: nil
            )
            var changes = ListingChanges()
            changes.imageIDs = ["img_withdrawn"]
            _ = try await store.updateListing(id: withdrawn.id, sellerID: F.seller, changes: changes, now: F.t0)
            _ = try await store.setStatus(id: withdrawn.id, to: .withdrawn, by: .seller(F.seller), now: F.t0)

            // The candidates, in id order, a page at a time.
            let cutoff = F.t0.addingTimeInterval(3_600)
            #expect(
                try await store.unattachedImageIDs(uploadedBefore: cutoff, after: nil, limit: 10)
                    == ["img_avatar", "img_orphan", "img_removed"]
            )
            #expect(
                try await store.unattachedImageIDs(uploadedBefore: cutoff, after: nil, limit: 2)
                    == ["img_avatar", "img_orphan"]
            )
            #expect(
                try await store.unattachedImageIDs(uploadedBefore: cutoff, after: "img_orphan", limit: 2)
                    == ["img_removed"]
            )
            #expect(try await store.unattachedImageIDs(uploadedBefore: F.t0, after: nil, limit: 10) == [])

            // Nothing is older than the cutoff yet.
            #expect(try await store.deleteUnattachedImages(uploadedBefore: F.t0, keeping: []) == 0)

            #expect(try await store.deleteUnattachedImages(uploadedBefore: cutoff, keeping: ["img_avatar"]) == 2)
            for id in ["img_active", "img_withdrawn", "img_avatar", "img_recent"] {
                #expect(try await store.image(id: id) != nil, "\(id) was deleted")
            }
            #expect(try await store.image(id: "img_orphan") == nil)
            #expect(try await store.image(id: "img_removed") == nil)
            #expect(try await store.listing(id: active.id)?.imageIDs == ["img_active"])
            // Running again deletes nothing more.
            #expect(try await store.deleteUnattachedImages(uploadedBefore: cutoff, keeping: ["img_avatar"]) == 0)
            // Without the keep list, the profile picture goes too.
            #expect(try await store.deleteUnattachedImages(uploadedBefore: cutoff, keeping: []) == 1)
        }
    }
}
