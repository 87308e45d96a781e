import Foundation
import HeapModule
import SkiffDomain

/// A session or one-time token as ``AccountSecrets`` keeps it: owned by an account, expiring at a time.
protocol AccountSecret {
    var accountID: String { get }
    var expiresAt: Date { get }
}

extension Session: AccountSecret {}
extension OneTimeToken: AccountSecret {}

/// Sessions or one-time tokens by token hash, as ``InMemoryAccountsStore`` keeps them, with each account's
/// hashes and an expiry order beside them: an account's secrets cost what that account holds, and the
/// expired ones what has expired, never a read of every secret of every account.
struct AccountSecrets<Secret: AccountSecret> {
    private var secrets: [TokenHash: Secret] = [:]
    private var byAccount: [String: Set<TokenHash>] = [:]
    /// Every expiry set and not yet checked, soonest first: at most one entry per secret stored (or given a
    /// new expiry) and not yet expired. The secret that had one may since have been replaced or removed
    /// (checked when it comes up, so removing a secret costs nothing here).
    private var expiries = Heap<Due<TokenHash, Date>>()

    /// How many secrets there are.
    var count: Int { secrets.count }

    /// The secret with `hash`; setting one indexes it by account and expiry, setting `nil` removes it.
    subscript(hash: TokenHash) -> Secret? {
        get { secrets[hash] }
        set {
            let old = secrets[hash]
            if let old, old.accountID != newValue?.accountID { unlink(hash, from: old.accountID) }
            secrets[hash] = newValue
            guard let newValue else { return }
            byAccount[newValue.accountID, default: []].insert(hash)
            if old?.expiresAt != newValue.expiresAt {
                expiries.insert(Due(at: newValue.expiresAt, key: hash))
            }
        }
    }

    /// The secrets of `accountID`, with their hashes.
    func of(_ accountID: String) -> [(hash: TokenHash, secret: Secret)] {
        (byAccount[accountID] ?? []).compactMap { hash in secrets[hash].map { (hash, $0) } }
    }

    /// Removes the secrets of `accountID` that `remove` picks (all by default); returns how many.
    @discardableResult
    mutating func removeAll(
        of accountID: String,
        where remove: (TokenHash, Secret) -> Bool = { _, _ in true }
    ) -> Int {
        var removed = 0
        for (hash, secret) in of(accountID) where remove(hash, secret) {
            self[hash] = nil
            removed += 1
        }
        return removed
    }

    /// Removes up to `limit` secrets that have expired by `now` (`expiresAt <= now`), soonest first, checking
    /// at most `limit` expiries; returns how many it removed and how many expiries it checked (fewer than
    /// `limit`: nothing else has expired).
    mutating func removeExpired(now: Date, limit: Int) -> (removed: Int, checked: Int) {
        var removed = 0
        var checked = 0
        while checked < limit, let soonest = expiries.min, soonest.at <= now {
            _ = expiries.popMin()
            checked += 1
            // Only if the secret still has that expiry: a replaced one has its own entry, a removed one none.
            if let secret = secrets[soonest.key], secret.expiresAt == soonest.at {
                self[soonest.key] = nil
                removed += 1
            }
        }
        return (removed, checked)
    }

    private mutating func unlink(_ hash: TokenHash, from accountID: String) {
        byAccount[accountID]?.remove(hash)
        if byAccount[accountID]?.isEmpty == true { byAccount[accountID] = nil }
    }
}
