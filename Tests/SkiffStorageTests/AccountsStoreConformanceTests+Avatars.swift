import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    @Test("Avatar image ids are the profile pictures in use", arguments: StoreKind.allCases)
    func avatarImageIDs(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let accounts = try await store.createAccounts(["Ann", "Bob", "Cat"])
            let all = ["img_ann", "img_bob", "img_cat", "img_none"]
            #expect(try await store.avatarImageIDs(among: all) == [])
            _ = try await store.updateProfile(id: accounts[0].id, changes: ProfileChanges(avatarImageID: "img_ann"))
            _ = try await store.updateProfile(id: accounts[1].id, changes: ProfileChanges(avatarImageID: "img_bob"))
            _ = try await store.updateProfile(id: accounts[1].id, changes: ProfileChanges(avatarImageID: ""))
            _ = try await store.updateProfile(id: accounts[2].id, changes: ProfileChanges(avatarImageID: "img_cat"))
            #expect(try await store.avatarImageIDs(among: all) == ["img_ann", "img_cat"])
            #expect(try await store.avatarImageIDs(among: ["img_cat", "img_cat", "img_bob"]) == ["img_cat"])
            #expect(try await store.avatarImageIDs(among: []) == [])
        }
    }
}
