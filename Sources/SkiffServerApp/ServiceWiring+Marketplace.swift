import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffBids
import SkiffCore
import SkiffDomain
import SkiffListings
import SwiftProtobuf
import Synchronization

/// Listings' view of Bids, through the generated Bids client with the service token: in process
/// here, over Skiff/TCP when the services are deployed apart.
struct BidsClientListingBids: ListingBids {
    let client: Skiff_Bids_V1_Bids.Client

    func hasPendingBids(listingID: String) async throws -> Bool {
        try await client.countPendingBids(.with { $0.listingID = listingID }).count > 0
    }

    func listingClosed(listingID: String, status: SkiffListings.ListingStatus) async throws {
        let closure: Skiff_Bids_V1_ListingClosure
        switch status {
        case .sold: closure = .sold
        case .withdrawn: closure = .withdrawn
        case .active: return
        }
        _ = try await client.closeListing(
            .with {
                $0.listingID = listingID
                $0.closure = closure
            }
        )
    }
}

/// What other services ask of Accounts, through the generated Accounts client with the service
/// token: Bids the sellers' payment handles shown on sales and completed sales; Listings' image
/// clean-up which images are profile pictures.
struct AccountsClientDirectory: PaymentHandleDirectory {
    let client: Skiff_Accounts_V1_Accounts.Client

    func paymentHandle(userID: String) async throws -> String? {
        do {
            let handle = try await client.getPaymentHandle(.with { $0.userID = userID }).paymentHandle
            return handle.isEmpty ? nil : handle
        } catch let error as RPCError where error.code == .notFound {
            return nil
        }
    }

    /// Records a completed sale in Accounts (the seller's items sold). Idempotent per sale, so a
    /// retry after a lost answer does not count the sale twice.
    func recordCompletedSale(_ sale: Sale) async throws {
        _ = try await client.recordCompletedSale(
            .with {
                $0.saleID = sale.id
                $0.sellerID = sale.sellerID
            }
        )
    }
}

extension AccountsClientDirectory {
    /// Those of `imageIDs` that are users' profile pictures (any number: asked in batches).
    func profilePictures(among imageIDs: [String]) async throws -> Set<String> {
        var found: Set<String> = []
        var start = imageIDs.startIndex
        while start < imageIDs.endIndex {
            let end = min(start + AccountsService.profilePictureFilterLimit, imageIDs.endIndex)
            let batch = Array(imageIDs[start..<end])
            found.formUnion(try await client.filterProfilePictures(.with { $0.imageIds = batch }).profilePictureIds)
            start = end
        }
        return found
    }
}

/// Housekeeping: deletes uploaded images that no listing uses, a while after the upload (24 hours by
/// default), keeping the ones Accounts says are profile pictures.
struct UnusedImageCleanup: Sendable {
    let store: any ListingsStore
    let accounts: AccountsClientDirectory
    let lifetime: Duration
    /// How many candidate ids are read (and checked with Accounts) at a time.
    var pageSize = 500

    /// Deletes the images uploaded before `now - lifetime` that no listing uses and that are not
    /// profile pictures.
    ///
    /// - Returns: How many images were deleted.
    func run(now: Date) async throws -> Int {
        let cutoff = now.addingTimeInterval(-lifetime.timeInterval)
        var kept: Set<String> = []
        var after: String?
        while true {
            let page = try await store.unattachedImageIDs(uploadedBefore: cutoff, after: after, limit: pageSize)
            kept.formUnion(try await accounts.profilePictures(among: page))
            guard page.count == pageSize, let last = page.last else { break }
            after = last
        }
        return try await store.deleteUnattachedImages(uploadedBefore: cutoff, keeping: kept)
    }
}

/// Accounts' view of Bids' sales (to accept a rating), through the generated Bids client with the
/// service token, which may read any sale.
struct BidsClientSaleDirectory: SaleDirectory {
    let client: Skiff_Bids_V1_Bids.Client

    func sale(id: String) async throws -> SaleSummary? {
        let sale: Skiff_Bids_V1_Sale
        do {
            sale = try await client.getSale(.with { $0.saleID = id }).sale
        } catch let error as RPCError where error.code == .notFound || error.code == .invalidArgument {
            return nil
        }
        let completed = sale.state == .completed && sale.hasReceipt
        return SaleSummary(
            id: sale.saleID,
            buyerID: sale.buyerID,
            sellerID: sale.sellerID,
            completedAt: completed ? sale.receipt.completedAt.checkedDate : nil
        )
    }
}
