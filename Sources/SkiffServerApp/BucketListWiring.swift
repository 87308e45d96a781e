import SkiffAccounts
import SkiffBucketList

/// BucketList's view of Accounts: whether a user exists (to follow them). Accounts has no RPC that
/// answers it for any id, so the composition root reads the Accounts store, as for payment handles.
struct AccountsUserDirectory: UserDirectory {
    let store: any AccountsStore

    func userExists(id: String) async throws -> Bool {
        try await store.account(id: id) != nil
    }
}
