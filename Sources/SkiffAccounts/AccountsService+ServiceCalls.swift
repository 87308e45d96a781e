import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// The calls only other Skiff services make (with the service token): Bids reads a seller's payment
/// handle for a sale's buyer, and records completed sales.
extension AccountsService {
    public func getPaymentHandle(
        request: Skiff_Accounts_V1_GetPaymentHandleRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_GetPaymentHandleResponse {
        try context.requireService()
        try AccountsRequestBounds.check(request)
        guard let account = try await store.account(id: request.userID) else {
            throw AccountsStoreError.accountNotFound
        }
        return .with { $0.paymentHandle = account.paymentHandle ?? "" }
    }

    public func recordCompletedSale(
        request: Skiff_Accounts_V1_RecordCompletedSaleRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_RecordCompletedSaleResponse {
        try context.requireService()
        try AccountsRequestBounds.check(request)
        let recorded = try await store.recordCompletedSale(
            saleID: request.saleID,
            sellerID: request.sellerID,
            at: time.now()
        )
        return .with {
            $0.itemsSold = Int32(clamping: recorded.itemsSold)
            $0.newlyRecorded = recorded.newlyRecorded
        }
    }

    /// The most image ids one FilterProfilePictures call may check.
    public static let profilePictureFilterLimit = AccountsRequestBounds.profilePictureIDs

    public func filterProfilePictures(
        request: Skiff_Accounts_V1_FilterProfilePicturesRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_FilterProfilePicturesResponse {
        try context.requireService()
        try AccountsRequestBounds.check(request)
        let found = try await store.avatarImageIDs(among: request.imageIds)
        return .with { $0.profilePictureIds = found.sorted() }
    }
}
