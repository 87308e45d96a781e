public import SkiffAccounts

/// The ``SkiffAccounts/SaleDirectory`` over a ``BidsStore``: how Accounts checks a sale before accepting
/// a rating for it, when both services share a process.
public struct BidsSaleDirectory: SaleDirectory {
    let store: any BidsStore

    /// Creates the directory over a bids store.
    public init(store: any BidsStore) {
        self.store = store
    }

    public func sale(id: String) async throws -> SaleSummary? {
        guard let sale = try await store.sale(id: id) else { return nil }
        return SaleSummary(id: sale.id, buyerID: sale.buyerID, sellerID: sale.sellerID, completedAt: sale.completedAt)
    }
}
