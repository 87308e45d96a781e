import Foundation
import SkiffAPI
import SkiffCore
import SkiffDomain
import SwiftProtobuf

// Conversions between domain types and wire types, at the service edge only.

extension Coordinate {
    init(proto: Skiff_Bucketlist_V1_GeoPoint) {
        self.init(latitude: proto.latitude, longitude: proto.longitude)
    }

    var proto: Skiff_Bucketlist_V1_GeoPoint {
        .with {
            $0.latitude = latitude
            $0.longitude = longitude
        }
    }
}

extension Place {
    /// The place of a request; a missing point is an `invalidArgument` naming `field`.
    init(proto: Skiff_Bucketlist_V1_Place, field: String) throws(DomainError) {
        guard proto.hasPoint else {
            throw DomainError(.invalidArgument, "\(field).point is missing: give the place's coordinates.")
        }
        self.init(name: proto.name, point: Coordinate(proto: proto.point))
    }

    var proto: Skiff_Bucketlist_V1_Place {
        .with {
            $0.name = name
            $0.point = point.proto
        }
    }
}

extension Vote {
    /// The vote of a request; unspecified or unknown values are `invalidArgument`.
    init(proto: Skiff_Bucketlist_V1_Vote) throws(DomainError) {
        switch proto {
        case .up: self = .up
        case .down: self = .down
        case .none: self = .noVote
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "vote is unspecified or unknown: send VOTE_UP, VOTE_DOWN, or VOTE_NONE to clear your vote."
            )
        }
    }

    var proto: Skiff_Bucketlist_V1_Vote {
        switch self {
        case .up: .up
        case .down: .down
        case .noVote: .none
        }
    }
}

extension Visibility {
    init(proto: Skiff_Bucketlist_V1_Visibility, field: String) throws(DomainError) {
        switch proto {
        case .public: self = .public
        case .private: self = .private
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "\(field) is unspecified or unknown: choose VISIBILITY_PUBLIC or VISIBILITY_PRIVATE."
            )
        }
    }

    var proto: Skiff_Bucketlist_V1_Visibility {
        switch self {
        case .public: .public
        case .private: .private
        }
    }
}

extension ActivityFields {
    /// The fields of a new activity from the wire (not yet validated).
    init(proto: Skiff_Bucketlist_V1_Activity) throws(DomainError) {
        guard proto.hasPlace else {
            throw DomainError(.invalidArgument, "activity.place is missing: give the place's name and coordinates.")
        }
        self.init(
            title: proto.title,
            description: proto.description_p,
            place: try Place(proto: proto.place, field: "activity.place"),
            startsAt: proto.hasStartsAt ? proto.startsAt.checkedDate : nil,
            imageID: proto.imageID.isEmpty ? nil : proto.imageID,
            tags: proto.tags
        )
    }
}

extension Activity {
    /// The wire form, with the viewer's own vote.
    func proto(myVote: Vote = .noVote) -> Skiff_Bucketlist_V1_Activity {
        .with {
            $0.activityID = id
            $0.ownerID = ownerID
            $0.title = fields.title
            $0.description_p = fields.description
            $0.place = fields.place.proto
            if let startsAt = fields.startsAt { $0.startsAt = Google_Protobuf_Timestamp(date: startsAt) }
            $0.imageID = fields.imageID ?? ""
            $0.tags = fields.tags
            $0.upVotes = Int64(upVotes)
            $0.downVotes = Int64(downVotes)
            $0.commentCount = Int64(commentCount)
            $0.myVote = myVote.proto
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
            $0.updatedAt = Google_Protobuf_Timestamp(date: updatedAt)
        }
    }
}

extension Comment {
    var proto: Skiff_Bucketlist_V1_Comment {
        .with {
            $0.commentID = id
            $0.activityID = activityID
            $0.authorID = authorID
            $0.text = text
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
        }
    }
}

extension BucketList {
    var proto: Skiff_Bucketlist_V1_BucketListInfo {
        .with {
            $0.bucketListID = id
            $0.ownerID = ownerID
            $0.name = fields.name
            $0.description_p = fields.description
            $0.visibility = fields.visibility.proto
            $0.pendingCount = Int64(pendingCount)
            $0.completedCount = Int64(completedCount)
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
            $0.updatedAt = Google_Protobuf_Timestamp(date: updatedAt)
        }
    }
}

extension BucketListEntry {
    func proto(myVote: Vote = .noVote) -> Skiff_Bucketlist_V1_BucketListEntry {
        .with {
            $0.bucketListID = listID
            $0.activity = activity.proto(myVote: myVote)
            $0.addedAt = Google_Protobuf_Timestamp(date: addedAt)
            if let completion {
                $0.completed = true
                $0.completedAt = Google_Protobuf_Timestamp(date: completion.completedAt)
                $0.note = completion.note
            }
        }
    }
}

extension Follow {
    var proto: Skiff_Bucketlist_V1_Follow {
        .with {
            $0.userID = userID
            $0.followedAt = Google_Protobuf_Timestamp(date: followedAt)
        }
    }
}
