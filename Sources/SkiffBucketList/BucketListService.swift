import Foundation
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
import SwiftProtobuf

/// The BucketList service: activities at places, votes, comments, trending, bucket lists with
/// completions, and follows.
///
/// Domain rules live in ``BucketListRules`` and ``TrendingScore``; storage goes through ``BucketListStore``;
/// the wire types are converted at this edge only. Guests may read (activities, comments, public lists,
/// follows, profiles); every write needs a signed-in user (`requireUser()`, UNAUTHENTICATED otherwise), and
/// writes on someone else's objects are PERMISSION_DENIED — except on a private bucket list, which does not
/// exist for anyone but its owner (NOT_FOUND).
public struct BucketListService: Skiff_Bucketlist_V1_BucketList.ServiceProtocol {
    let store: any BucketListStore
    let users: any UserDirectory
    let time: any TimeSource

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - store: Where activities, votes, comments, lists and follows live.
    ///   - users: Whether a user exists (FollowUser); ``AnyUserExists`` without Accounts.
    ///   - time: The clock.
    public init(
        store: any BucketListStore,
        users: any UserDirectory = AnyUserExists(),
        time: any TimeSource = SystemTimeSource()
    ) {
        self.store = store
        self.users = users
        self.time = time
    }

    // MARK: Activities

    public func createActivity(
        request: Skiff_Bucketlist_V1_CreateActivityRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_CreateActivityResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        guard request.hasActivity else {
            throw DomainError(.invalidArgument, "activity is missing: send the new activity's fields.")
        }
        let fields = try BucketListRules.validate(try ActivityFields(proto: request.activity))
        let activity = Activity(id: EntityID.make(.activity), ownerID: user.id, fields: fields, createdAt: time.now())
        let created = try await store.createActivity(activity)
        return .with { $0.activity = created.proto() }
    }

    public func getActivity(
        request: Skiff_Bucketlist_V1_GetActivityRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_GetActivityResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.requireID(request.activityID, field: "activity_id")
        guard let activity = try await store.activity(id: request.activityID) else {
            throw BucketListStoreError.activityNotFound
        }
        let votes = try await myVotes(context, [activity.id])
        return .with { $0.activity = activity.proto(myVote: votes[activity.id] ?? .noVote) }
    }

    static let activityPaths = "title, description, place, starts_at, image_id, tags"

    public func updateActivity(
        request: Skiff_Bucketlist_V1_UpdateActivityRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_UpdateActivityResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        let id = request.activity.activityID
        guard !id.isEmpty else {
            throw DomainError(.invalidArgument, "activity.activity_id is empty: name the activity to change.")
        }
        try BucketListRules.requireID(id, field: "activity.activity_id")
        let changes = try BucketListRules.validate(try Self.changes(request))
        let updated = try await store.updateActivity(id: id, ownerID: user.id, changes: changes, now: time.now())
        let votes = try await store.votes(userID: user.id, activityIDs: [id])
        return .with { $0.activity = updated.proto(myVote: votes[id] ?? .noVote) }
    }

    /// The changes named by the request's mask (not yet validated).
    static func changes(_ request: Skiff_Bucketlist_V1_UpdateActivityRequest) throws(DomainError) -> ActivityChanges {
        let paths = request.updateMask.paths
        guard !paths.isEmpty else {
            throw DomainError(.invalidArgument, "update_mask is empty: name the fields to change (\(activityPaths)).")
        }
        let proto = request.activity
        var changes = ActivityChanges()
        for path in paths {
            switch path {
            case "title": changes.title = proto.title
            case "description": changes.description = proto.description_p
            case "place":
                guard proto.hasPlace else {
                    throw DomainError(.invalidArgument, "activity.place is missing: give the new place.")
                }
                changes.place = try Place(proto: proto.place, field: "activity.place")
            case "starts_at": changes.startsAt = .some(proto.hasStartsAt ? proto.startsAt.checkedDate : nil)
            case "image_id": changes.imageID = .some(proto.imageID.isEmpty ? nil : proto.imageID)
            case "tags": changes.tags = proto.tags
            default:
                throw DomainError(
                    .invalidArgument,
                    "update_mask path \"\(path)\" cannot be changed; allowed: \(activityPaths)."
                )
            }
        }
        return changes
    }

    public func deleteActivity(
        request: Skiff_Bucketlist_V1_DeleteActivityRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_DeleteActivityResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.requireID(request.activityID, field: "activity_id")
        try await store.deleteActivity(id: request.activityID, ownerID: user.id)
        return .init()
    }

    public func findNearbyActivities(
        request: Skiff_Bucketlist_V1_FindNearbyActivitiesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_FindNearbyActivitiesResponse {
        try BucketListRequestBounds.check(request)
        guard request.hasCenter else {
            throw DomainError(.invalidArgument, "center is missing: give the point to search around.")
        }
        let center = Coordinate(proto: request.center)
        try BucketListRules.validateCircle(center: center, radiusKm: request.radiusKm)
        let sort: NearbySort
        switch request.sortOrder {
        case .unspecified, .distance: sort = .distance
        case .popularity: sort = .popularity
        case .UNRECOGNIZED:
            throw DomainError(.invalidArgument, "sort_order is unknown: use DISTANCE or POPULARITY.")
        }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let query = NearbyQuery(center: center, radiusKm: request.radiusKm, sort: sort)
        let result = try await store.nearbyActivities(query, page: page)
        let votes = try await myVotes(context, result.items.map(\.activity.id))
        return .with {
            $0.results = result.items.map { hit in
                .with {
                    $0.activity = hit.activity.proto(myVote: votes[hit.activity.id] ?? .noVote)
                    $0.distanceKm = hit.distanceKm
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func listTrendingActivities(
        request: Skiff_Bucketlist_V1_ListTrendingActivitiesRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListTrendingActivitiesResponse {
        try BucketListRequestBounds.check(request)
        var center: Coordinate?
        var radius = request.radiusKm
        if request.hasCenter {
            let point = Coordinate(proto: request.center)
            if radius == 0 { radius = BucketListRules.defaultTrendingRadiusKm }
            try BucketListRules.validateCircle(center: point, radiusKm: radius)
            center = point
        } else if radius != 0 {
            throw DomainError(.invalidArgument, "radius_km needs a center: give center, or leave radius_km at 0.")
        }
        let hours = try BucketListRules.validateWindow(hours: Int(request.windowHours))
        guard request.limit >= 0 else {
            throw DomainError(.invalidArgument, "limit must not be negative: use 0 for 20, or up to 100.")
        }
        let limit = try PageRequest(size: Int(request.limit)).size
        let now = time.now()
        let query = TrendingQuery(
            center: center,
            radiusKm: radius,
            since: now.addingTimeInterval(-Double(hours) * 3600),
            now: now,
            limit: limit
        )
        let hits = try await store.trendingActivities(query)
        let votes = try await myVotes(context, hits.map(\.activity.id))
        return .with {
            $0.results = hits.map { hit in
                .with {
                    $0.activity = hit.activity.proto(myVote: votes[hit.activity.id] ?? .noVote)
                    $0.score = hit.score
                    $0.distanceKm = hit.distanceKm
                }
            }
        }
    }

    // MARK: Votes

    public func voteActivity(
        request: Skiff_Bucketlist_V1_VoteActivityRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_VoteActivityResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.requireID(request.activityID, field: "activity_id")
        let vote = try Vote(proto: request.vote)
        let activity = try await store.setVote(
            activityID: request.activityID,
            userID: user.id,
            vote: vote,
            now: time.now()
        )
        return .with { $0.activity = activity.proto(myVote: vote) }
    }

    /// The caller's votes on these activities (none for guests).
    func myVotes(_ context: ServerContext, _ activityIDs: [String]) async throws -> [String: Vote] {
        guard let user = context.user, !user.isService, !activityIDs.isEmpty else { return [:] }
        return try await store.votes(userID: user.id, activityIDs: activityIDs)
    }

    // MARK: Comments

    public func addComment(
        request: Skiff_Bucketlist_V1_AddCommentRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_AddCommentResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.requireID(request.activityID, field: "activity_id")
        let text = try BucketListRules.validateComment(request.text)
        let comment = Comment(
            id: EntityID.make(.comment),
            activityID: request.activityID,
            authorID: user.id,
            text: text,
            createdAt: time.now()
        )
        let stored = try await store.addComment(comment)
        return .with { $0.comment = stored.proto }
    }

    public func listComments(
        request: Skiff_Bucketlist_V1_ListCommentsRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_ListCommentsResponse {
        try BucketListRequestBounds.check(request)
        try BucketListRules.requireID(request.activityID, field: "activity_id")
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.comments(activityID: request.activityID, page: page)
        return .with {
            $0.comments = result.items.map(\.proto)
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func deleteComment(
        request: Skiff_Bucketlist_V1_DeleteCommentRequest,
        context: ServerContext
    ) async throws -> Skiff_Bucketlist_V1_DeleteCommentResponse {
        try BucketListRequestBounds.check(request)
        let user = try context.requireUser()
        try BucketListRules.requireID(request.commentID, field: "comment_id")
        try await store.deleteComment(id: request.commentID, by: user.id)
        return .init()
    }
}
