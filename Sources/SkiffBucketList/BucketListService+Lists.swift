import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension BucketListService {
    static let listPaths = "name, description, visibility"

    public func createBucketList(
        request: Skiff_Bucketlist_V1_CreateBucketListRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_CreateBucketListResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        guard request.hasBucketList else {
            throw DomainError(.invalidArgument, "bucket_list is missing: send the name, description and visibility.")
        }
        let proto = request.bucketList
        let fields = try BucketListRules.validate(
            BucketListFields(
                name: proto.name,
                description: proto.description_p,
                visibility: try Visibility(proto: proto.visibility, field: "bucket_list.visibility")
            )
        )
        let list = BucketList(id: EntityID.make(.bucketList), ownerID: user.id, fields: fields, createdAt: time.now())
        let created = try await store.createList(list, limit: BucketListRules.maximumListsPerUser)
        return .with { $0.bucketList = created.proto }
    }

    public func getBucketList(
        request: Skiff_Bucketlist_V1_GetBucketListRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_GetBucketListResponse {
        try BucketListRequestBounds.check(request)
        let list = try await visibleList(request.bucketListID, field: "bucket_list_id", context: context)
        return .with { $0.bucketList = list.proto }
    }

    public func updateBucketList(
        request: Skiff_Bucketlist_V1_UpdateBucketListRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_UpdateBucketListResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        let id = request.bucketList.bucketListID
        guard !id.isEmpty else {
            throw DomainError(.invalidArgument, "bucket_list.bucket_list_id is empty: name the list to change.")
        }
        try BucketListRules.requireID(id, field: "bucket_list.bucket_list_id")
        let paths = request.updateMask.paths
        guard !paths.isEmpty else {
            throw DomainError(.invalidArgument, "update_mask is empty: name the fields to change (\(Self.listPaths)).")
        }
        var changes = BucketListChanges()
        for path in paths {
            switch path {
            case "name": changes.name = request.bucketList.name
            case "description": changes.description = request.bucketList.description_p
            case "visibility":
                changes.visibility = try Visibility(
                    proto: request.bucketList.visibility,
                    field: "bucket_list.visibility"
                )
            default:
                throw DomainError(
                    .invalidArgument,
                    "update_mask path \"\(path)\" cannot be changed; allowed: \(Self.listPaths)."
                )
            }
        }
        let updated = try await store.updateList(
            id: id,
            ownerID: user.id,
            changes: try BucketListRules.validate(changes),
            now: time.now()
        )
        return .with { $0.bucketList = updated.proto }
    }

    public func deleteBucketList(
        request: Skiff_Bucketlist_V1_DeleteBucketListRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_DeleteBucketListResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.requireID(request.bucketListID, field: "bucket_list_id")
        try await store.deleteList(id: request.bucketListID, ownerID: user.id)
        return .init()
    }

    public func listMyBucketLists(
        request: Skiff_Bucketlist_V1_ListMyBucketListsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListMyBucketListsResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.lists(ownerID: user.id, includePrivate: true, page: page)
        return .with {
            $0.bucketLists = result.items.map(\.proto)
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func listUserBucketLists(
        request: Skiff_Bucketlist_V1_ListUserBucketListsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListUserBucketListsResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.validateUserID(request.userID)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let isOwner = context.user?.id == request.userID
        let result = try await store.lists(ownerID: request.userID, includePrivate: isOwner, page: page)
        return .with {
            $0.bucketLists = result.items.map(\.proto)
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    // MARK: Entries

    public func addBucketListEntry(
        request: Skiff_Bucketlist_V1_AddBucketListEntryRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_AddBucketListEntryResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try Self.requireEntryIDs(request.bucketListID, request.activityID)
        let entry = try await store.addEntry(
            listID: request.bucketListID,
            ownerID: user.id,
            activityID: request.activityID,
            now: time.now(),
            limit: BucketListRules.maximumEntriesPerList
        )
        let proto = try await entryProto(entry, userID: user.id)
        return .with { $0.entry = proto }
    }

    public func removeBucketListEntry(
        request: Skiff_Bucketlist_V1_RemoveBucketListEntryRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_RemoveBucketListEntryResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try Self.requireEntryIDs(request.bucketListID, request.activityID)
        try await store.removeEntry(listID: request.bucketListID, ownerID: user.id, activityID: request.activityID)
        return .init()
    }

    public func completeBucketListEntry(
        request: Skiff_Bucketlist_V1_CompleteBucketListEntryRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_CompleteBucketListEntryResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try Self.requireEntryIDs(request.bucketListID, request.activityID)
        let now = time.now()
        let completion = try BucketListRules.validateCompletion(
            Completion(completedAt: request.hasCompletedAt ? request.completedAt.checkedDate : now, note: request.note),
            now: now
        )
        let entry = try await store.setCompletion(
            listID: request.bucketListID,
            ownerID: user.id,
            activityID: request.activityID,
            completion: completion
        )
        let proto = try await entryProto(entry, userID: user.id)
        return .with { $0.entry = proto }
    }

    public func uncompleteBucketListEntry(
        request: Skiff_Bucketlist_V1_UncompleteBucketListEntryRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_UncompleteBucketListEntryResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try Self.requireEntryIDs(request.bucketListID, request.activityID)
        let entry = try await store.setCompletion(
            listID: request.bucketListID,
            ownerID: user.id,
            activityID: request.activityID,
            completion: nil
        )
        let proto = try await entryProto(entry, userID: user.id)
        return .with { $0.entry = proto }
    }

    public func listBucketListEntries(
        request: Skiff_Bucketlist_V1_ListBucketListEntriesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListBucketListEntriesResponse {
        try BucketListRequestBounds.check(request)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let list = try await visibleList(request.bucketListID, field: "bucket_list_id", context: context)
        let result = try await store.entries(listID: list.id, page: page)
        let votes = try await myVotes(context, result.items.map(\.activity.id))
        return .with {
            $0.entries = result.items.map { $0.proto(myVote: votes[$0.activity.id] ?? .noVote) }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    // MARK: Helpers

    /// A list the caller may see; someone else's private list is NOT_FOUND, as if it did not exist.
    func visibleList(_ id: String, field: String, context: ServerContext) async throws -> BucketList {
        try BucketListRules.requireID(id, field: field)
        guard let list = try await store.list(id: id), list.isVisible(to: context.user?.id) else {
            throw BucketListStoreError.listNotFound
        }
        return list
    }

    /// An entry in wire form, with the caller's own vote on its activity.
    func entryProto(_ entry: BucketListEntry, userID: String) async throws -> Skiff_Bucketlist_V1_BucketListEntry {
        let votes = try await store.votes(userID: userID, activityIDs: [entry.activity.id])
        return entry.proto(myVote: votes[entry.activity.id] ?? .noVote)
    }

    static func requireEntryIDs(_ listID: String, _ activityID: String) throws(DomainError) {
        try BucketListRules.requireID(listID, field: "bucket_list_id")
        try BucketListRules.requireID(activityID, field: "activity_id")
    }
}
