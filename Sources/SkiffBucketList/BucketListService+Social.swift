import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension BucketListService {
    public func followUser(
        request: Skiff_Bucketlist_V1_FollowUserRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_FollowUserResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.validateUserID(request.userID)
        guard request.userID != user.id else {
            throw DomainError(.invalidArgument, "user_id is your own id: you cannot follow yourself.")
        }
        guard try await users.userExists(id: request.userID) else {
            throw DomainError(.notFound, "No user has the id \"\(request.userID)\".")
        }
        let follow = try await store.follow(followerID: user.id, followeeID: request.userID, now: time.now())
        return .with { $0.follow = follow.proto }
    }

    public func unfollowUser(
        request: Skiff_Bucketlist_V1_UnfollowUserRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_UnfollowUserResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.validateUserID(request.userID)
        try await store.unfollow(followerID: user.id, followeeID: request.userID)
        return .init()
    }

    public func listFollowers(
        request: Skiff_Bucketlist_V1_ListFollowersRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListFollowersResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.validateUserID(request.userID)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.followers(userID: request.userID, page: page)
        return .with {
            $0.followers = result.items.map(\.proto)
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func listFollowing(
        request: Skiff_Bucketlist_V1_ListFollowingRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListFollowingResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.validateUserID(request.userID)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.following(userID: request.userID, page: page)
        return .with {
            $0.following = result.items.map(\.proto)
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func getProfile(
        request: Skiff_Bucketlist_V1_GetProfileRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_GetProfileResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.validateUserID(request.userID)
        let viewer = context.user.flatMap { $0.isService ? nil : $0.id }
        let counts = try await store.profile(userID: request.userID, viewerID: viewer)
        return .with {
            $0.profile = .with {
                $0.userID = request.userID
                $0.activityCount = Int64(counts.activityCount)
                $0.bucketListCount = Int64(counts.listCount)
                $0.completedActivityCount = Int64(counts.completedActivityCount)
                $0.followerCount = Int64(counts.followerCount)
                $0.followingCount = Int64(counts.followingCount)
                $0.followedByMe = counts.followedByViewer
            }
        }
    }
}
