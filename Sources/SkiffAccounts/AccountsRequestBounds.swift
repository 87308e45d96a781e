public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every Accounts request, checked first in each RPC — before any hashing, store access
/// or normalization — in time linear in the limits, not in the request (a Swift string's UTF-8 count is
/// constant time).
///
/// Each limit is in UTF-8 bytes and documented on the field in `accounts.proto`; the character limits of
/// ``AccountRules`` apply afterwards. Violations are INVALID_ARGUMENT naming the field and its limit.
public enum AccountsRequestBounds {
    /// The longest e-mail address (RFC 5321's path limit).
    public static let emailBytes = 254
    /// The longest password (bounds the cost of hashing it).
    public static let passwordBytes = AccountRules.passwordMaximumBytes
    /// The longest one-time token (issued tokens have 43 characters).
    public static let tokenBytes = 128
    /// The longest id (user, sale, listing, image).
    public static let idBytes = RequestBounds.idBytes
    /// The longest display name (50 characters of up to 4 bytes).
    public static let displayNameBytes = 200
    /// The longest bio.
    public static let bioBytes = 2_000
    /// The longest payment handle.
    public static let paymentHandleBytes = 400
    /// The longest ZIP code, surrounding spaces included.
    public static let zipCodeBytes = 32
    /// The longest user-search query.
    public static let searchQueryBytes = 400
    /// The longest page token.
    public static let pageTokenBytes = PageRequest.maximumTokenLength
    /// The longest rating comment.
    public static let ratingCommentBytes = 4_000
    /// The longest report details.
    public static let reportDetailsBytes = 8_000
    /// The most paths in an update mask (one per changeable field).
    public static let updateMaskPaths = 5
    /// The longest update-mask path.
    public static let updateMaskPathBytes = RequestBounds.updateMaskPathBytes
    /// The most image ids in one FilterProfilePictures call.
    public static let profilePictureIDs = 1_000

    /// Throws INVALID_ARGUMENT when `value` has more than `limit` UTF-8 bytes.
    public static func check(_ value: String, _ field: String, atMost limit: Int) throws(DomainError) {
        try RequestBounds.check(value, field, atMost: limit)
    }

    /// Throws INVALID_ARGUMENT when the required id `value` is empty or longer than ``idBytes``.
    public static func checkID(_ value: String, _ field: String) throws(DomainError) {
        try RequestBounds.checkID(value, field, atMost: idBytes)
    }

    // MARK: Requests

    /// SignUp: e-mail, password, display name.
    public static func check(_ request: Skiff_Accounts_V1_SignUpRequest) throws(DomainError) {
        try check(request.email, "email", atMost: emailBytes)
        try check(request.password, "password", atMost: passwordBytes)
        try check(request.displayName, "display_name", atMost: displayNameBytes)
    }

    /// VerifyEmail: the token.
    public static func check(_ request: Skiff_Accounts_V1_VerifyEmailRequest) throws(DomainError) {
        try check(request.token, "token", atMost: tokenBytes)
    }

    /// ResendVerification: the e-mail.
    public static func check(_ request: Skiff_Accounts_V1_ResendVerificationRequest) throws(DomainError) {
        try check(request.email, "email", atMost: emailBytes)
    }

    /// LogIn: e-mail and password.
    public static func check(_ request: Skiff_Accounts_V1_LogInRequest) throws(DomainError) {
        try check(request.email, "email", atMost: emailBytes)
        try check(request.password, "password", atMost: passwordBytes)
    }

    /// RequestPasswordReset: the e-mail.
    public static func check(_ request: Skiff_Accounts_V1_RequestPasswordResetRequest) throws(DomainError) {
        try check(request.email, "email", atMost: emailBytes)
    }

    /// ResetPassword: token and new password.
    public static func check(_ request: Skiff_Accounts_V1_ResetPasswordRequest) throws(DomainError) {
        try check(request.token, "token", atMost: tokenBytes)
        try check(request.newPassword, "new_password", atMost: passwordBytes)
    }

    /// ChangePassword: both passwords.
    public static func check(_ request: Skiff_Accounts_V1_ChangePasswordRequest) throws(DomainError) {
        try check(request.currentPassword, "current_password", atMost: passwordBytes)
        try check(request.newPassword, "new_password", atMost: passwordBytes)
    }

    /// RequestEmailChange: the new address and the password.
    public static func check(_ request: Skiff_Accounts_V1_RequestEmailChangeRequest) throws(DomainError) {
        try check(request.newEmail, "new_email", atMost: emailBytes)
        try check(request.currentPassword, "current_password", atMost: passwordBytes)
    }

    /// ConfirmEmailChange: the token.
    public static func check(_ request: Skiff_Accounts_V1_ConfirmEmailChangeRequest) throws(DomainError) {
        try check(request.token, "token", atMost: tokenBytes)
    }

    /// LogInWithIdToken: the token and the nonce.
    public static func check(_ request: Skiff_Accounts_V1_LogInWithIdTokenRequest) throws(DomainError) {
        try check(request.idToken, "id_token", atMost: AccountsService.idTokenMaximumBytes)
        try check(request.nonce, "nonce", atMost: tokenBytes)
    }

    /// DeleteAccount: the password.
    public static func check(_ request: Skiff_Accounts_V1_DeleteAccountRequest) throws(DomainError) {
        try check(request.currentPassword, "current_password", atMost: passwordBytes)
    }

    /// UpdateProfile: the mask and the fields it can name (the others are not read).
    public static func check(_ request: Skiff_Accounts_V1_UpdateProfileRequest) throws(DomainError) {
        try RequestBounds.checkUpdateMask(request.updateMask.paths, atMost: updateMaskPaths)
        let account = request.account
        try check(account.displayName, "account.display_name", atMost: displayNameBytes)
        try check(account.bio, "account.bio", atMost: bioBytes)
        try check(account.avatarImageID, "account.avatar_image_id", atMost: idBytes)
        try check(account.paymentHandle, "account.payment_handle", atMost: paymentHandleBytes)
        try check(account.zipCode, "account.zip_code", atMost: zipCodeBytes)
    }

    /// GetProfile: the user id.
    public static func check(_ request: Skiff_Accounts_V1_GetProfileRequest) throws(DomainError) {
        try checkID(request.userID, "user_id")
    }

    /// SearchUsers: query, page size and page token.
    public static func check(_ request: Skiff_Accounts_V1_SearchUsersRequest) throws(DomainError) {
        try check(request.query, "query", atMost: searchQueryBytes)
        try checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// RateSeller: sale id and comment.
    public static func check(_ request: Skiff_Accounts_V1_RateSellerRequest) throws(DomainError) {
        try checkID(request.saleID, "sale_id")
        try check(request.comment, "comment", atMost: ratingCommentBytes)
    }

    /// ListRatings: user id, page size and page token.
    public static func check(_ request: Skiff_Accounts_V1_ListRatingsRequest) throws(DomainError) {
        try checkID(request.userID, "user_id")
        try checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ReportUser: user id, details and listing id.
    public static func check(_ request: Skiff_Accounts_V1_ReportUserRequest) throws(DomainError) {
        try checkID(request.userID, "user_id")
        try check(request.details, "details", atMost: reportDetailsBytes)
        try check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// GetPaymentHandle: the user id.
    public static func check(_ request: Skiff_Accounts_V1_GetPaymentHandleRequest) throws(DomainError) {
        try checkID(request.userID, "user_id")
    }

    /// RecordCompletedSale: sale and seller ids.
    public static func check(_ request: Skiff_Accounts_V1_RecordCompletedSaleRequest) throws(DomainError) {
        try checkID(request.saleID, "sale_id")
        try checkID(request.sellerID, "seller_id")
    }

    /// FilterProfilePictures: the number of ids, then each id.
    public static func check(_ request: Skiff_Accounts_V1_FilterProfilePicturesRequest) throws(DomainError) {
        guard request.imageIds.count <= profilePictureIDs else {
            throw DomainError(
                .invalidArgument,
                "image_ids has \(request.imageIds.count) ids: send at most \(profilePictureIDs) per call."
            )
        }
        for id in request.imageIds {
            guard !id.isEmpty else { throw DomainError(.invalidArgument, "image_ids contains an empty id.") }
            try check(id, "each of image_ids", atMost: idBytes)
        }
    }

    private static func checkPage(size: Int32, token: String) throws(DomainError) {
        try RequestBounds.checkPage(size: size, token: token)
    }
}
