import Foundation
import SkiffAPI
import SkiffDomain
import SwiftProtobuf

// Conversions between domain types and wire types, at the service edge only.

extension ListingCategory {
    init(proto: Skiff_Listings_V1_Category, field: String) throws(DomainError) {
        switch proto {
        case .clothing: self = .clothing
        case .shoes: self = .shoes
        case .accessories: self = .accessories
        case .electronics: self = .electronics
        case .books: self = .books
        case .furniture: self = .furniture
        case .tickets: self = .tickets
        case .other: self = .other
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "\(field) is unspecified or unknown: choose one of the Category values."
            )
        }
    }

    var proto: Skiff_Listings_V1_Category {
        switch self {
        case .clothing: .clothing
        case .shoes: .shoes
        case .accessories: .accessories
        case .electronics: .electronics
        case .books: .books
        case .furniture: .furniture
        case .tickets: .tickets
        case .other: .other
        }
    }
}

extension ListingCondition {
    init(proto: Skiff_Listings_V1_Condition, field: String) throws(DomainError) {
        switch proto {
        case .new: self = .new
        case .lightlyUsed: self = .lightlyUsed
        case .heavilyUsed: self = .heavilyUsed
        case .unspecified, .UNRECOGNIZED:
            throw DomainError(
                .invalidArgument,
                "\(field) is unspecified or unknown: choose new, lightly used or heavily used."
            )
        }
    }

    var proto: Skiff_Listings_V1_Condition {
        switch self {
        case .new: .new
        case .lightlyUsed: .lightlyUsed
        case .heavilyUsed: .heavilyUsed
        }
    }
}

extension ListingStatus {
    var proto: Skiff_Listings_V1_ListingStatus {
        switch self {
        case .active: .active
        case .sold: .sold
        case .withdrawn: .withdrawn
        }
    }
}

extension ListingChangeKind {
    var proto: Skiff_Listings_V1_ListingChangeKind {
        switch self {
        case .priceChanged: .priceChanged
        case .sold: .sold
        case .withdrawn: .withdrawn
        case .updated: .updated
        }
    }
}

extension ListingLocation {
    init(proto: Skiff_Listings_V1_Location) {
        self.init(
            zipCode: proto.zipCode,
            point: proto.hasPoint
                ? GeoPoint(latitude: proto.point.latitude, longitude: proto.point.longitude) : nil
        )
    }
}

extension ListingFields {
    /// The fields of a wire listing, not yet validated (see ``ListingRules``).
    init(proto: Skiff_Listings_V1_Listing) throws(DomainError) {
        self.init(
            title: proto.title,
            description: proto.description_p,
            priceCents: proto.priceCents,
            category: try ListingCategory(proto: proto.category, field: "listing.category"),
            condition: try ListingCondition(proto: proto.condition, field: "listing.condition"),
            size: proto.size,
            tags: proto.tags,
            madeOnCampus: proto.madeOnCampus,
            biddingEnabled: proto.biddingEnabled,
            anonymous: proto.anonymous,
            location: ListingLocation(proto: proto.location),
            imageIDs: proto.imageIds
        )
    }
}

extension Listing {
    /// The listing as `viewerID` may see it: the seller of an anonymous listing and the exact point are
    /// shown to the seller only.
    func proto(viewerID: String?) -> Skiff_Listings_V1_Listing {
        let isSeller = viewerID == sellerID
        let f = fields
        return .with {
            $0.listingID = id
            $0.sellerID = f.anonymous && !isSeller ? "" : sellerID
            $0.title = f.title
            $0.description_p = fields.description
            $0.priceCents = f.priceCents
            $0.category = f.category.proto
            $0.condition = f.condition.proto
            $0.size = f.size
            $0.tags = f.tags
            $0.madeOnCampus = f.madeOnCampus
            $0.biddingEnabled = f.biddingEnabled
            $0.anonymous = f.anonymous
            $0.location.zipCode = f.location.zipCode
            if isSeller, let point = f.location.point {
                $0.location.point = .with {
                    $0.latitude = point.latitude
                    $0.longitude = point.longitude
                }
            }
            $0.imageIds = f.imageIDs
            $0.status = status.proto
            $0.createdAt = Google_Protobuf_Timestamp(date: createdAt)
            $0.updatedAt = Google_Protobuf_Timestamp(date: updatedAt)
        }
    }
}

extension SavedListing {
    func proto(viewerID: String) -> Skiff_Listings_V1_SavedListing {
        .with {
            $0.listing = listing.proto(viewerID: viewerID)
            $0.savedAt = Google_Protobuf_Timestamp(date: savedAt)
        }
    }
}

extension ImageHeader {
    var info: Skiff_Listings_V1_ImageInfo {
        .with {
            $0.imageID = id
            $0.contentType = contentType.rawValue
            $0.sizeBytes = Int64(sizeBytes)
        }
    }
}

extension ListingsService {
    /// What buying `listing` second-hand saves, by its category (``SkiffDomain/SustainabilityFigures``).
    static func sustainabilityImpact(_ listing: Listing) -> Skiff_Listings_V1_SustainabilityImpact {
        let figures = SustainabilityFigures.estimate(category: listing.fields.category.rawValue)
        return .with {
            $0.co2EGramsSaved = figures.co2eGramsSaved
            $0.waterLitersSaved = figures.waterLitersSaved
            $0.category = listing.fields.category.proto
            $0.explanation = figures.explanation(title: listing.fields.title)
        }
    }
}
