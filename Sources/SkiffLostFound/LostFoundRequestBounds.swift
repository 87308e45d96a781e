public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every LostFound request, checked first in each RPC — before authentication, any
/// store access, normalization or ``LostFoundRules`` — in time linear in the limits, not in the request.
///
/// Each limit is in UTF-8 bytes (strings) or elements (repeated fields) and documented on the field in
/// `lostfound.proto`; the character limits of ``LostFoundRules`` apply afterwards. Violations are
/// INVALID_ARGUMENT naming the field and its limit.
public enum LostFoundRequestBounds {
    /// The longest id (item, reporter).
    public static let idBytes = RequestBounds.idBytes
    /// The longest title (80 characters of up to 4 bytes).
    public static let titleBytes = 320
    /// The longest description (2000 characters of up to 4 bytes).
    public static let descriptionBytes = 8_000
    /// The longest building, in an item or a filter (100 characters of up to 4 bytes).
    public static let buildingBytes = 400
    /// The longest contact instructions (500 characters of up to 4 bytes).
    public static let contactInstructionsBytes = 2_000
    /// The longest image id (128 characters of up to 4 bytes; the rules then check its shape).
    public static let imageIDBytes = 512
    /// The longest search query (200 characters of up to 4 bytes).
    public static let queryBytes = 800
    /// The most values in a repeated enum field of a filter (statuses, categories), duplicates included.
    public static let enumValues = 16
    /// The most paths in UpdateItem's mask (one per changeable field).
    public static let updateMaskPaths = 8
    /// The longest page token.
    public static let pageTokenBytes = RequestBounds.pageTokenBytes

    /// ReportItem: every string of the item.
    public static func check(_ request: Skiff_Lostfound_V1_ReportItemRequest) throws(DomainError) {
        try check(request.item)
    }

    /// GetItem: the item id.
    public static func check(_ request: Skiff_Lostfound_V1_GetItemRequest) throws(DomainError) {
        try RequestBounds.check(request.itemID, "item_id", atMost: idBytes)
    }

    /// UpdateItem: the mask and every string of the item (named by the mask or not).
    public static func check(_ request: Skiff_Lostfound_V1_UpdateItemRequest) throws(DomainError) {
        try RequestBounds.checkUpdateMask(request.updateMask.paths, atMost: updateMaskPaths)
        try check(request.item)
    }

    /// MarkReturned: the item id.
    public static func check(_ request: Skiff_Lostfound_V1_MarkReturnedRequest) throws(DomainError) {
        try RequestBounds.check(request.itemID, "item_id", atMost: idBytes)
    }

    /// SearchItems: query, filter lists and building, page size and page token.
    public static func check(_ request: Skiff_Lostfound_V1_SearchItemsRequest) throws(DomainError) {
        try RequestBounds.check(request.query, "query", atMost: queryBytes)
        let filter = request.filter
        try RequestBounds.checkCount(filter.statuses.count, "filter.statuses", atMost: enumValues)
        try RequestBounds.checkCount(filter.categories.count, "filter.categories", atMost: enumValues)
        try RequestBounds.check(filter.building, "filter.building", atMost: buildingBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMatches: the item id, page size and page token.
    public static func check(_ request: Skiff_Lostfound_V1_ListMatchesRequest) throws(DomainError) {
        try RequestBounds.check(request.itemID, "item_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListMyItems: the statuses, page size and page token.
    public static func check(_ request: Skiff_Lostfound_V1_ListMyItemsRequest) throws(DomainError) {
        try RequestBounds.checkCount(request.statuses.count, "statuses", atMost: enumValues)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// Every string of an item as sent in ReportItem or UpdateItem.
    static func check(_ item: Skiff_Lostfound_V1_Item) throws(DomainError) {
        try RequestBounds.check(item.itemID, "item.item_id", atMost: idBytes)
        try RequestBounds.check(item.reporterID, "item.reporter_id", atMost: idBytes)
        try RequestBounds.check(item.title, "item.title", atMost: titleBytes)
        try RequestBounds.check(item.description_p, "item.description", atMost: descriptionBytes)
        try RequestBounds.check(item.building, "item.building", atMost: buildingBytes)
        try RequestBounds.check(
            item.contactInstructions,
            "item.contact_instructions",
            atMost: contactInstructionsBytes
        )
        try RequestBounds.check(item.imageID, "item.image_id", atMost: imageIDBytes)
    }
}
