import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension AccountsService {
    public func getMyAccount(
        request: Skiff_Accounts_V1_GetMyAccountRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_GetMyAccountResponse {
        let user = try context.requireUser()
        guard let account = try await store.account(id: user.id) else {
            throw DomainError(.unauthenticated, "The account of this session no longer exists.")
        }
        return .with { $0.account = account.proto }
    }

    public func updateProfile(
        request: Skiff_Accounts_V1_UpdateProfileRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_UpdateProfileResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        let paths = request.updateMask.paths
        guard !paths.isEmpty else {
            throw DomainError(
                .invalidArgument,
                "update_mask is empty: name the fields to change (display_name, bio, avatar_image_id, "
                    + "payment_handle, zip_code)."
            )
        }
        var changes = ProfileChanges()
        for path in paths {
            switch path {
            case "display_name": changes.displayName = request.account.displayName
            case "bio": changes.bio = request.account.bio
            case "avatar_image_id": changes.avatarImageID = request.account.avatarImageID
            case "payment_handle": changes.paymentHandle = request.account.paymentHandle
            case "zip_code": changes.zipCode = request.account.zipCode
            default:
                throw DomainError(
                    .invalidArgument,
                    "update_mask path \"\(path)\" cannot be changed; allowed: display_name, bio, avatar_image_id, "
                        + "payment_handle, zip_code."
                )
            }
        }
        let validated = try AccountRules.validate(changes)
        // Only the caller's own upload may become their picture; keeping the current one needs no check.
        if let imageID = validated.avatarImageID, !imageID.isEmpty,
            try await store.account(id: user.id)?.avatarImageID != imageID
        {
            let found: String?
            do {
                found = try await images.ownerOfImage(id: imageID)
            } catch {
                // Listings could not be asked: nothing is saved, and the caller may retry.
                throw DomainError(
                    .unavailable,
                    "The picture could not be checked just now; nothing was changed. Try again."
                )
            }
            guard let owner = found else {
                throw DomainError(
                    .notFound,
                    "No image has the id \"\(imageID)\": upload the picture with Listings.UploadImage first."
                )
            }
            guard owner == user.id else {
                throw DomainError(.permissionDenied, "avatar_image_id must be an image you uploaded yourself.")
            }
        }
        let account = try await store.updateProfile(id: user.id, changes: validated)
        return .with { $0.account = account.proto }
    }

    public func getProfile(
        request: Skiff_Accounts_V1_GetProfileRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_GetProfileResponse {
        try AccountsRequestBounds.check(request)
        guard let account = try await store.account(id: request.userID) else {
            throw DomainError(.notFound, "No user has the id \"\(request.userID)\".")
        }
        let summary = try await store.ratingSummary(sellerID: account.id)
        return .with { $0.profile = account.profile(summary) }
    }

    public func searchUsers(
        request: Skiff_Accounts_V1_SearchUsersRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_SearchUsersResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        let query = try AccountRules.validateSearchQuery(request.query)
        guard !query.isEmpty else {
            throw DomainError(.invalidArgument, "query is empty: type 1 to 100 characters of a display name.")
        }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.searchUsers(nameQuery: query, page: page)
        // People the caller blocked are left out (so a page may hold fewer than page_size).
        let blocked = try await blockedUsers.blockedUserIDs(of: user.id)
        var profiles: [Skiff_Accounts_V1_Profile] = []
        for account in result.items where !blocked.contains(account.id) {
            profiles.append(account.profile(try await store.ratingSummary(sellerID: account.id)))
        }
        return .with {
            $0.profiles = profiles
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    // MARK: Ratings and reports

    public func rateSeller(
        request: Skiff_Accounts_V1_RateSellerRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_RateSellerResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        guard let sale = try await sales.sale(id: request.saleID) else {
            throw DomainError(.notFound, "No sale has the id \"\(request.saleID)\".")
        }
        guard sale.buyerID == user.id else {
            throw DomainError(.permissionDenied, "Only the buyer of a sale can rate its seller.")
        }
        let comment = try AccountRules.validateRating(
            stars: Int(request.stars),
            comment: request.comment,
            sellerID: sale.sellerID,
            buyerID: user.id
        )
        guard let completedAt = sale.completedAt else {
            throw DomainError(
                .failedPrecondition,
                "The sale is not completed yet: both parties must confirm the hand-off."
            )
        }
        let now = time.now()
        guard now.timeIntervalSince(completedAt) <= configuration.ratingWindow.timeInterval else {
            throw DomainError(.failedPrecondition, "Ratings are accepted for 14 days after a sale; this one is older.")
        }
        let rating = Rating(
            // An anonymous rating's id must not be the sale's: the seller knows who bought each sale.
            ratingID: request.anonymous ? EntityID.make(.rating) : nil,
            saleID: sale.id,
            sellerID: sale.sellerID,
            buyerID: user.id,
            stars: Int(request.stars),
            comment: comment,
            createdAt: now,
            anonymous: request.anonymous
        )
        try await store.addRating(rating)
        let rater = try await store.account(id: user.id)
        return .with { $0.rating = rating.proto(raterName: rater?.displayName ?? "", viewerID: user.id) }
    }

    public func listRatings(
        request: Skiff_Accounts_V1_ListRatingsRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ListRatingsResponse {
        try AccountsRequestBounds.check(request)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        guard try await store.account(id: request.userID) != nil else {
            throw DomainError(.notFound, "No user has the id \"\(request.userID)\".")
        }
        let result = try await store.ratings(sellerID: request.userID, page: page)
        let viewer = context.user?.isService == false ? context.user?.id : nil
        // The raters' names in one read; an anonymous rating's rater is looked up only for the rater themself.
        let shown = result.items.filter { !$0.anonymous || $0.buyerID == viewer }
        let raters = try await store.accounts(ids: Set(shown.map(\.buyerID)))
        let ratings = result.items.map { rating in
            let name = (!rating.anonymous || rating.buyerID == viewer) ? raters[rating.buyerID]?.displayName : nil
            return rating.proto(raterName: name ?? "", viewerID: viewer)
        }
        return .with {
            $0.ratings = ratings
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func reportUser(
        request: Skiff_Accounts_V1_ReportUserRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ReportUserResponse {
        let user = try context.requireUser()
        try AccountsRequestBounds.check(request)
        let reason: String
        switch request.reason {
        case .scam: reason = "scam"
        case .harassment: reason = "harassment"
        case .spam: reason = "spam"
        case .inappropriateContent: reason = "inappropriate_content"
        case .impersonation: reason = "impersonation"
        case .other:
            guard !request.details.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw DomainError(.invalidArgument, "details are required when the reason is REPORT_REASON_OTHER.")
            }
            reason = "other"
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(.invalidArgument, "reason is unspecified: choose one of the ReportReason values.")
        }
        let validated = try AccountRules.validateReport(
            reason: reason,
            details: request.details,
            reporterID: user.id,
            reportedID: request.userID
        )
        guard try await store.account(id: request.userID) != nil else {
            throw DomainError(.notFound, "No user has the id \"\(request.userID)\".")
        }
        var details = validated.details
        if !request.listingID.isEmpty { details += "\n[listing \(request.listingID)]" }
        let report = Report(
            id: EntityID.make(.report),
            reporterID: user.id,
            reportedID: request.userID,
            reason: validated.reason,
            details: details,
            createdAt: time.now()
        )
        try await store.addReport(report)
        return .with { $0.reportID = report.id }
    }
}

extension Account {
    /// The private view, for the account's owner.
    var proto: Skiff_Accounts_V1_Account {
        .with {
            $0.userID = id
            $0.email = email
            $0.displayName = displayName
            $0.bio = bio
            $0.avatarImageID = avatarImageID ?? ""
            $0.paymentHandle = paymentHandle ?? ""
            $0.zipCode = zipCode ?? ""
            $0.memberSince = Google_Protobuf_Timestamp(date: createdAt)
        }
    }

    /// The public view: never the e-mail, payment handle or zip code.
    func profile(_ summary: RatingSummary) -> Skiff_Accounts_V1_Profile {
        .with {
            $0.userID = id
            $0.displayName = displayName
            $0.avatarImageID = avatarImageID ?? ""
            $0.bio = bio
            $0.memberSince = Google_Protobuf_Timestamp(date: createdAt)
            $0.ratingAverage = summary.average ?? 0
            $0.ratingCount = Int32(clamping: summary.count)
            $0.itemsSold = Int32(clamping: itemsSold)
            $0.deleted = isDeleted
        }
    }
}

extension Rating {
    /// The wire rating as `viewerID` (nil for a guest) sees it: an anonymous one shows its rater only to them.
    func proto(raterName: String, viewerID: String?) -> Skiff_Accounts_V1_Rating {
        let showRater = !anonymous || buyerID == viewerID
        return .with {
            $0.ratingID = ratingID
            $0.sellerID = sellerID
            $0.raterID = showRater ? buyerID : ""
            $0.raterDisplayName = showRater ? raterName : ""
            $0.anonymous = anonymous
            $0.stars = Int32(stars)
            $0.comment = comment
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
        }
    }
}
