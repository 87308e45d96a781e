import Foundation
import SkiffAPI
import SkiffCore
import SkiffDomain
import SwiftProtobuf

// Conversions between domain types and wire types, at the service edge only.

extension LostFoundKind {
    init(proto: Skiff_Lostfound_V1_ItemKind, field: String) throws(DomainError) {
        switch proto {
        case .lost: self = .lost
        case .found: self = .found
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(.invalidArgument, "\(field) is unspecified or unknown: choose LOST or FOUND.")
        }
    }

    var proto: Skiff_Lostfound_V1_ItemKind {
        switch self {
        case .lost: .lost
        case .found: .found
        }
    }
}

extension LostFoundStatus {
    init(proto: Skiff_Lostfound_V1_ItemStatus, field: String) throws(DomainError) {
        switch proto {
        case .lost: self = .lost
        case .found: self = .found
        case .returned: self = .returned
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "\(field) contains an unspecified or unknown status: use LOST, FOUND or RETURNED."
            )
        }
    }

    var proto: Skiff_Lostfound_V1_ItemStatus {
        switch self {
        case .lost: .lost
        case .found: .found
        case .returned: .returned
        }
    }
}

extension LostFoundCategory {
    init(proto: Skiff_Lostfound_V1_ItemCategory, field: String) throws(DomainError) {
        switch proto {
        case .electronics: self = .electronics
        case .clothing: self = .clothing
        case .idCard: self = .idCard
        case .keys: self = .keys
        case .bags: self = .bags
        case .books: self = .books
        case .other: self = .other
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "\(field) is unspecified or unknown: choose one of the ItemCategory values."
            )
        }
    }

    var proto: Skiff_Lostfound_V1_ItemCategory {
        switch self {
        case .electronics: .electronics
        case .clothing: .clothing
        case .idCard: .idCard
        case .keys: .keys
        case .bags: .bags
        case .books: .books
        case .other: .other
        }
    }
}

extension LostFoundPoint {
    init(proto: Skiff_Lostfound_V1_GeoPoint) {
        self.init(latitude: proto.latitude, longitude: proto.longitude)
    }

    var proto: Skiff_Lostfound_V1_GeoPoint {
        .with {
            $0.latitude = latitude
            $0.longitude = longitude
        }
    }
}

extension LostFoundItemFields {
    /// The fields of a wire item, not yet validated (see ``LostFoundRules``).
    init(proto: Skiff_Lostfound_V1_Item) throws(DomainError) {
        guard proto.hasOccurredAt else {
            throw DomainError(.invalidArgument, "item.occurred_at is missing: give the time it was lost or found.")
        }
        self.init(
            title: proto.title,
            description: proto.description_p,
            category: try LostFoundCategory(proto: proto.category, field: "item.category"),
            building: proto.building,
            point: proto.hasPoint ? LostFoundPoint(proto: proto.point) : nil,
            occurredAt: proto.occurredAt.checkedDate,
            contactInstructions: proto.contactInstructions,
            imageID: proto.imageID.isEmpty ? nil : proto.imageID
        )
    }
}

/// Who is looking at an item: decides the private fields shown.
struct LostFoundViewer {
    /// The signed-in user's id, or `nil` for a guest.
    var userID: String?

    /// Contact instructions are for signed-in users; the exact point is for the reporter.
    func proto(_ item: LostFoundItem) -> Skiff_Lostfound_V1_Item {
        let signedIn = userID != nil
        let isReporter = userID == item.reporterID
        let f = item.fields
        return .with {
            $0.itemID = item.id
            $0.reporterID = item.reporterID
            $0.kind = item.kind.proto
            $0.status = item.status.proto
            $0.title = f.title
            $0.description_p = f.description
            $0.category = f.category.proto
            $0.building = f.building
            if isReporter, let point = f.point { $0.point = point.proto }
            $0.occurredAt = Google_Protobuf_Timestamp(date: f.occurredAt)
            $0.contactInstructions = signedIn ? f.contactInstructions : ""
            $0.imageID = f.imageID ?? ""
            $0.createdAt = Google_Protobuf_Timestamp(date: item.createdAt)
            $0.updatedAt = Google_Protobuf_Timestamp(date: item.updatedAt)
            if let returnedAt = item.returnedAt { $0.returnedAt = Google_Protobuf_Timestamp(date: returnedAt) }
        }
    }
}
