import Foundation

/// What other services do when a person deletes their account, asked by Accounts before it erases the
/// account: Listings withdraws their active listings (Bids rejects the bids on them), Bids withdraws their
/// live bids. Implemented over the other services' typed clients with the service token; each step is
/// idempotent, so a failed deletion can be repeated.
public protocol AccountCleanup: Sendable {
    /// Withdraws every active listing of the seller.
    ///
    /// - Returns: How many listings this call withdrew.
    func withdrawListings(sellerID: String) async throws -> Int

    /// Withdraws every live bid of the bidder.
    ///
    /// - Returns: How many bids this call withdrew.
    func withdrawBids(bidderID: String) async throws -> Int

    /// Called once the account is erased (e.g. to forget that the user exists in look-up caches).
    func accountErased(userID: String) async
}

/// No other service: for a server that runs Accounts alone.
public struct NoAccountCleanup: AccountCleanup {
    public init() {}
    public func withdrawListings(sellerID: String) async throws -> Int { 0 }
    public func withdrawBids(bidderID: String) async throws -> Int { 0 }
    public func accountErased(userID: String) async {}
}
