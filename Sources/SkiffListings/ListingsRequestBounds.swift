public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every Listings request, checked first in each RPC — before authentication, any store
/// access, normalization or ``ListingRules`` — in time linear in the limits, not in the request.
///
/// Each limit is in UTF-8 bytes (strings) or elements (repeated fields) and documented on the field in
/// `listings.proto`; the character and count limits of ``ListingRules`` apply afterwards. Violations are
/// INVALID_ARGUMENT naming the field and its limit.
public enum ListingsRequestBounds {
    /// The longest id (listing, seller, image), and the longest `request_id`.
    public static let idBytes = RequestBounds.idBytes
    /// The longest title (80 characters of up to 4 bytes).
    public static let titleBytes = 320
    /// The longest description (2000 characters of up to 4 bytes).
    public static let descriptionBytes = 8_000
    /// The longest size (20 characters of up to 4 bytes).
    public static let sizeBytes = 80
    /// The most tags in a listing as sent (duplicates included; at most 10 distinct ones are kept).
    public static let listingTags = 32
    /// The longest tag as sent, surrounding spaces included (30 characters once trimmed).
    public static let tagBytes = 128
    /// The longest zip code as sent (a listing's, or a search's `filter.near.center_zip_code`), surrounding
    /// spaces included.
    public static let zipCodeBytes = 32
    /// The most image ids in a listing.
    public static let imageIDs = ListingRules.maximumImageCount
    /// The longest search query (200 characters of up to 4 bytes).
    public static let queryBytes = 800
    /// The most tags in a search filter.
    public static let filterTags = 20
    /// The most values in a repeated enum field (categories, conditions, statuses), duplicates included.
    public static let enumValues = 16
    /// The most paths in UpdateListing's mask (one per changeable field).
    public static let updateMaskPaths = 12
    /// The longest upload file name (255 characters of up to 4 bytes).
    public static let filenameBytes = 1_020
    /// The longest declared content type of an upload.
    public static let contentTypeBytes = 255
    /// The most messages in one UploadImage stream (5 MiB in chunks of 512 bytes and more, and the metadata).
    public static let uploadMessages = 10_241
    /// The longest page token or resume token.
    public static let pageTokenBytes = RequestBounds.pageTokenBytes
    /// The longest comment text (1,000 characters of up to 4 bytes).
    public static let commentBytes = 4_000

    // MARK: Requests

    /// CreateListing: the listing's fields and the request id.
    public static func check(_ request: Skiff_Listings_V1_CreateListingRequest) throws(DomainError) {
        try check(request.listing)
        try RequestBounds.check(request.requestID, "request_id", atMost: idBytes)
    }

    /// GetListing: the listing id.
    public static func check(_ request: Skiff_Listings_V1_GetListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// UpdateListing: the mask and every field of the listing (named by the mask or not).
    public static func check(_ request: Skiff_Listings_V1_UpdateListingRequest) throws(DomainError) {
        try RequestBounds.checkUpdateMask(request.updateMask.paths, atMost: updateMaskPaths)
        try check(request.listing)
    }

    /// WithdrawListing: the listing id.
    public static func check(_ request: Skiff_Listings_V1_WithdrawListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// MarkSold: the listing id.
    public static func check(_ request: Skiff_Listings_V1_MarkSoldRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// SearchListings: query, filter lists and strings (the centre's ZIP code included), page size and page
    /// token.
    public static func check(_ request: Skiff_Listings_V1_SearchListingsRequest) throws(DomainError) {
        try RequestBounds.check(request.query, "query", atMost: queryBytes)
        let filter = request.filter
        try RequestBounds.checkCount(filter.categories.count, "filter.categories", atMost: enumValues)
        try RequestBounds.checkCount(filter.conditions.count, "filter.conditions", atMost: enumValues)
        try RequestBounds.checkCount(filter.statuses.count, "filter.statuses", atMost: enumValues)
        try RequestBounds.checkEach(filter.tags, "filter.tags", count: filterTags, bytes: tagBytes, unit: "tags")
        try RequestBounds.check(filter.sellerID, "filter.seller_id", atMost: idBytes)
        try RequestBounds.check(filter.near.centerZipCode, "filter.near.center_zip_code", atMost: zipCodeBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMyListings: statuses, page size and page token.
    public static func check(_ request: Skiff_Listings_V1_ListMyListingsRequest) throws(DomainError) {
        try RequestBounds.checkCount(request.statuses.count, "statuses", atMost: enumValues)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// UploadImage, one message: the metadata's strings (chunks are checked by ``ImageUpload``).
    public static func check(_ request: Skiff_Listings_V1_UploadImageRequest) throws(DomainError) {
        guard case .metadata(let metadata) = request.data else { return }
        try RequestBounds.check(metadata.filename, "metadata.filename", atMost: filenameBytes)
        try RequestBounds.check(
            metadata.declaredContentType,
            "metadata.declared_content_type",
            atMost: contentTypeBytes
        )
    }

    /// DownloadImage: the image id.
    public static func check(_ request: Skiff_Listings_V1_DownloadImageRequest) throws(DomainError) {
        try RequestBounds.check(request.imageID, "image_id", atMost: idBytes)
    }

    /// GetImageOwner: the image id.
    public static func check(_ request: Skiff_Listings_V1_GetImageOwnerRequest) throws(DomainError) {
        try RequestBounds.check(request.imageID, "image_id", atMost: idBytes)
    }

    /// SaveListing: the listing id.
    public static func check(_ request: Skiff_Listings_V1_SaveListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// UnsaveListing: the listing id.
    public static func check(_ request: Skiff_Listings_V1_UnsaveListingRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
    }

    /// ListSavedListings: page size and page token.
    public static func check(_ request: Skiff_Listings_V1_ListSavedListingsRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// WithdrawSellerListings: the seller id.
    public static func check(_ request: Skiff_Listings_V1_WithdrawSellerListingsRequest) throws(DomainError) {
        try RequestBounds.check(request.sellerID, "seller_id", atMost: idBytes)
    }

    /// AddComment: the listing id, the text and the comment replied to.
    public static func check(_ request: Skiff_Listings_V1_AddCommentRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
        try RequestBounds.check(request.text, "text", atMost: commentBytes)
        try RequestBounds.check(request.replyToCommentID, "reply_to_comment_id", atMost: idBytes)
    }

    /// ListComments: the listing id, page size and page token.
    public static func check(_ request: Skiff_Listings_V1_ListCommentsRequest) throws(DomainError) {
        try RequestBounds.check(request.listingID, "listing_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// DeleteComment: the comment id.
    public static func check(_ request: Skiff_Listings_V1_DeleteCommentRequest) throws(DomainError) {
        try RequestBounds.check(request.commentID, "comment_id", atMost: idBytes)
    }

    /// WatchSavedListings: the resume token.
    public static func check(_ request: Skiff_Listings_V1_WatchSavedListingsRequest) throws(DomainError) {
        try RequestBounds.check(request.resumeToken, "resume_token", atMost: pageTokenBytes)
    }

    /// Every string and repeated field of a listing as sent in CreateListing or UpdateListing.
    static func check(_ listing: Skiff_Listings_V1_Listing) throws(DomainError) {
        try RequestBounds.check(listing.listingID, "listing.listing_id", atMost: idBytes)
        try RequestBounds.check(listing.sellerID, "listing.seller_id", atMost: idBytes)
        try RequestBounds.check(listing.title, "listing.title", atMost: titleBytes)
        try RequestBounds.check(listing.description_p, "listing.description", atMost: descriptionBytes)
        try RequestBounds.check(listing.size, "listing.size", atMost: sizeBytes)
        try RequestBounds.checkEach(listing.tags, "listing.tags", count: listingTags, bytes: tagBytes, unit: "tags")
        try RequestBounds.check(listing.location.zipCode, "listing.location.zip_code", atMost: zipCodeBytes)
        try RequestBounds.checkEach(listing.imageIds, "listing.image_ids", count: imageIDs, bytes: idBytes, unit: "ids")
    }
}
