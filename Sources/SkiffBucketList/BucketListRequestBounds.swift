public import SkiffAPI
public import SkiffDomain
import SwiftProtobuf

/// The size limits of every BucketList request, checked first in each RPC — before authentication, any
/// store access, normalization or ``BucketListRules`` — in time linear in the limits, not in the request.
///
/// Each limit is in UTF-8 bytes (strings) or elements (repeated fields) and documented on the field in
/// `bucketlist.proto`; the character and count limits of ``BucketListRules`` apply afterwards. Violations
/// are INVALID_ARGUMENT naming the field and its limit.
public enum BucketListRequestBounds {
    /// The longest id (activity, comment, bucket list, user, image).
    public static let idBytes = RequestBounds.idBytes
    /// The longest activity title (100 characters of up to 4 bytes).
    public static let titleBytes = 400
    /// The longest activity description (2000 characters of up to 4 bytes).
    public static let descriptionBytes = 8_000
    /// The longest place name (120 characters of up to 4 bytes).
    public static let placeNameBytes = 480
    /// The most tags in an activity (the rules allow 10).
    public static let tags = BucketListRules.maximumTagCount
    /// The longest tag as sent, surrounding spaces included (30 characters once trimmed).
    public static let tagBytes = 128
    /// The longest comment (1000 characters of up to 4 bytes).
    public static let commentBytes = 4_000
    /// The longest bucket-list name (60 characters of up to 4 bytes).
    public static let listNameBytes = 240
    /// The longest bucket-list description and completion note (500 characters of up to 4 bytes).
    public static let listDescriptionBytes = 2_000
    /// The longest completion note (500 characters of up to 4 bytes).
    public static let noteBytes = 2_000
    /// The most paths in an update mask (one per changeable field).
    public static let updateMaskPaths = 8

    // MARK: Activities

    /// CreateActivity: every string and list of the activity.
    public static func check(_ request: Skiff_Bucketlist_V1_CreateActivityRequest) throws(DomainError) {
        try check(request.activity)
    }

    /// GetActivity: the activity id.
    public static func check(_ request: Skiff_Bucketlist_V1_GetActivityRequest) throws(DomainError) {
        try RequestBounds.check(request.activityID, "activity_id", atMost: idBytes)
    }

    /// UpdateActivity: the mask and every string and list of the activity (named by the mask or not).
    public static func check(_ request: Skiff_Bucketlist_V1_UpdateActivityRequest) throws(DomainError) {
        try RequestBounds.checkUpdateMask(request.updateMask.paths, atMost: updateMaskPaths)
        try check(request.activity)
    }

    /// DeleteActivity: the activity id.
    public static func check(_ request: Skiff_Bucketlist_V1_DeleteActivityRequest) throws(DomainError) {
        try RequestBounds.check(request.activityID, "activity_id", atMost: idBytes)
    }

    /// FindNearbyActivities: page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_FindNearbyActivitiesRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListTrendingActivities: numbers only, nothing to bound here (the rules check their ranges).
    public static func check(_ request: Skiff_Bucketlist_V1_ListTrendingActivitiesRequest) throws(DomainError) {}

    /// VoteActivity: the activity id.
    public static func check(_ request: Skiff_Bucketlist_V1_VoteActivityRequest) throws(DomainError) {
        try RequestBounds.check(request.activityID, "activity_id", atMost: idBytes)
    }

    /// AddComment: the activity id and the text.
    public static func check(_ request: Skiff_Bucketlist_V1_AddCommentRequest) throws(DomainError) {
        try RequestBounds.check(request.activityID, "activity_id", atMost: idBytes)
        try RequestBounds.check(request.text, "text", atMost: commentBytes)
    }

    /// ListComments: the activity id, page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListCommentsRequest) throws(DomainError) {
        try RequestBounds.check(request.activityID, "activity_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// DeleteComment: the comment id.
    public static func check(_ request: Skiff_Bucketlist_V1_DeleteCommentRequest) throws(DomainError) {
        try RequestBounds.check(request.commentID, "comment_id", atMost: idBytes)
    }

    // MARK: Bucket lists

    /// CreateBucketList: every string of the list.
    public static func check(_ request: Skiff_Bucketlist_V1_CreateBucketListRequest) throws(DomainError) {
        try check(request.bucketList)
    }

    /// GetBucketList: the list id.
    public static func check(_ request: Skiff_Bucketlist_V1_GetBucketListRequest) throws(DomainError) {
        try RequestBounds.check(request.bucketListID, "bucket_list_id", atMost: idBytes)
    }

    /// UpdateBucketList: the mask and every string of the list (named by the mask or not).
    public static func check(_ request: Skiff_Bucketlist_V1_UpdateBucketListRequest) throws(DomainError) {
        try RequestBounds.checkUpdateMask(request.updateMask.paths, atMost: updateMaskPaths)
        try check(request.bucketList)
    }

    /// DeleteBucketList: the list id.
    public static func check(_ request: Skiff_Bucketlist_V1_DeleteBucketListRequest) throws(DomainError) {
        try RequestBounds.check(request.bucketListID, "bucket_list_id", atMost: idBytes)
    }

    /// ListMyBucketLists: page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListMyBucketListsRequest) throws(DomainError) {
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListUserBucketLists: the user id, page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListUserBucketListsRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// AddBucketListEntry: the two ids.
    public static func check(_ request: Skiff_Bucketlist_V1_AddBucketListEntryRequest) throws(DomainError) {
        try checkEntry(request.bucketListID, request.activityID)
    }

    /// RemoveBucketListEntry: the two ids.
    public static func check(_ request: Skiff_Bucketlist_V1_RemoveBucketListEntryRequest) throws(DomainError) {
        try checkEntry(request.bucketListID, request.activityID)
    }

    /// CompleteBucketListEntry: the two ids and the note.
    public static func check(_ request: Skiff_Bucketlist_V1_CompleteBucketListEntryRequest) throws(DomainError) {
        try checkEntry(request.bucketListID, request.activityID)
        try RequestBounds.check(request.note, "note", atMost: noteBytes)
    }

    /// UncompleteBucketListEntry: the two ids.
    public static func check(
        _ request: Skiff_Bucketlist_V1_UncompleteBucketListEntryRequest
    ) throws(DomainError) {
        try checkEntry(request.bucketListID, request.activityID)
    }

    /// ListBucketListEntries: the list id, page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListBucketListEntriesRequest) throws(DomainError) {
        try RequestBounds.check(request.bucketListID, "bucket_list_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    // MARK: Social

    /// FollowUser: the user id.
    public static func check(_ request: Skiff_Bucketlist_V1_FollowUserRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
    }

    /// UnfollowUser: the user id.
    public static func check(_ request: Skiff_Bucketlist_V1_UnfollowUserRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
    }

    /// ListFollowers: the user id, page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListFollowersRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// ListFollowing: the user id, page size and page token.
    public static func check(_ request: Skiff_Bucketlist_V1_ListFollowingRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
        try RequestBounds.checkPage(size: request.pageSize, token: request.pageToken)
    }

    /// GetProfile: the user id.
    public static func check(_ request: Skiff_Bucketlist_V1_GetProfileRequest) throws(DomainError) {
        try RequestBounds.check(request.userID, "user_id", atMost: idBytes)
    }

    // MARK: Parts

    static func check(_ activity: Skiff_Bucketlist_V1_Activity) throws(DomainError) {
        try RequestBounds.check(activity.activityID, "activity.activity_id", atMost: idBytes)
        try RequestBounds.check(activity.ownerID, "activity.owner_id", atMost: idBytes)
        try RequestBounds.check(activity.title, "activity.title", atMost: titleBytes)
        try RequestBounds.check(activity.description_p, "activity.description", atMost: descriptionBytes)
        try RequestBounds.check(activity.place.name, "activity.place.name", atMost: placeNameBytes)
        try RequestBounds.check(activity.imageID, "activity.image_id", atMost: idBytes)
        try RequestBounds.checkEach(activity.tags, "activity.tags", count: tags, bytes: tagBytes, unit: "tags")
    }

    static func check(_ list: Skiff_Bucketlist_V1_BucketListInfo) throws(DomainError) {
        try RequestBounds.check(list.bucketListID, "bucket_list.bucket_list_id", atMost: idBytes)
        try RequestBounds.check(list.ownerID, "bucket_list.owner_id", atMost: idBytes)
        try RequestBounds.check(list.name, "bucket_list.name", atMost: listNameBytes)
        try RequestBounds.check(list.description_p, "bucket_list.description", atMost: listDescriptionBytes)
    }

    static func checkEntry(_ listID: String, _ activityID: String) throws(DomainError) {
        try RequestBounds.check(listID, "bucket_list_id", atMost: idBytes)
        try RequestBounds.check(activityID, "activity_id", atMost: idBytes)
    }
}
