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
        guard !request.userID.isEmpty else { throw DomainError(.invalidArgument, "user_id is empty.") }
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
        guard !request.saleID.isEmpty else { throw DomainError(.invalidArgument, "sale_id is empty.") }
        guard !request.sellerID.isEmpty else { throw DomainError(.invalidArgument, "seller_id is empty.") }
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
    public static let profilePictureFilterLimit = 1000

    public func filterProfilePictures(
        request: Skiff_Accounts_V1_FilterProfilePicturesRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_FilterProfilePicturesResponse {
        try context.requireService()
        guard request.imageIds.count <= Self.profilePictureFilterLimit else {
            throw DomainError(
                .invalidArgument,
                "image_ids has \(request.imageIds.count) ids: send at most \(Self.profilePictureFilterLimit) per call."
            )
        }
        guard !request.imageIds.contains(where: \.isEmpty) else {
            throw DomainError(.invalidArgument, "image_ids contains an empty id.")
        }
        let found = try await store.avatarImageIDs(among: request.imageIds)
        return .with { $0.profilePictureIds = found.sorted() }
    }
}
