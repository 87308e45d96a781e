public import Foundation
public import SkiffDomain

extension EntityID.Prefix {
    /// Lost-and-found items (`lfi_`).
    public static let lostFoundItem = EntityID.Prefix("lfi")
}

/// Whether an item was lost or found; fixed when it is reported.
public enum LostFoundKind: String, CaseIterable, Codable, Hashable, Sendable {
    case lost, found

    /// The other kind: the kind of an item's match candidates.
    public var opposite: LostFoundKind { self == .lost ? .found : .lost }

    /// The status of an open (not yet returned) item of this kind.
    public var openStatus: LostFoundStatus { self == .lost ? .lost : .found }
}

/// Where an item is in its life: `lost` or `found` (as its kind) until it is `returned`, which is final.
public enum LostFoundStatus: String, CaseIterable, Codable, Hashable, Sendable {
    case lost, found, returned
}

/// What kind of thing an item is. Matching only pairs items of the same category.
public enum LostFoundCategory: String, CaseIterable, Codable, Hashable, Sendable {
    case electronics, clothing
    case idCard = "id_card"
    case keys, bags, books, other
}

/// A point on Earth (WGS 84), in degrees.
public struct LostFoundPoint: Codable, Hashable, Sendable {
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The centre of this point's grid cell (``SkiffDomain/ApproximateLocation``): what is measured
    /// when someone other than the reporter is shown a distance to it.
    public var approximate: LostFoundPoint {
        let cell = ApproximateLocation.cellCenter(latitude: latitude, longitude: longitude)
        return LostFoundPoint(latitude: cell.latitude, longitude: cell.longitude)
    }

    /// The great-circle distance to another point, in kilometres.
    public func distanceKm(to other: LostFoundPoint) -> Double {
        GreatCircle.distanceKm(
            latitude1: latitude,
            longitude1: longitude,
            latitude2: other.latitude,
            longitude2: other.longitude
        )
    }
}

/// The fields of an item its reporter chooses (validated by ``LostFoundRules``).
public struct LostFoundItemFields: Codable, Hashable, Sendable {
    /// 1–80 characters, trimmed.
    public var title: String
    /// At most 2000 characters, trimmed.
    public var description: String
    public var category: LostFoundCategory
    /// The building where the item was lost or found: 1–100 characters, trimmed.
    public var building: String
    /// The exact place, if known; shown only to the reporter, used for distance search and matching.
    public var point: LostFoundPoint?
    /// When the item was lost or found.
    public var occurredAt: Date
    /// How to reach the reporter or collect the item: 1–500 characters; never shown to guests.
    public var contactInstructions: String
    /// A picture (an image id from Listings' UploadImage), if any.
    public var imageID: String?

    public init(
        title: String,
        description: String = "",
        category: LostFoundCategory,
        building: String,
        point: LostFoundPoint? = nil,
        occurredAt: Date,
        contactInstructions: String,
        imageID: String? = nil
    ) {
        self.title = title
        self.description = description
        self.category = category
        self.building = building
        self.point = point
        self.occurredAt = occurredAt
        self.contactInstructions = contactInstructions
        self.imageID = imageID
    }

    /// The building as compared by filters and matching: words folded (case, accents, width) and
    /// joined by single spaces, so "Main  Library" and "main library" are the same building.
    public var buildingKey: String { LostFoundRules.buildingKey(building) }
}

/// An item someone lost or found.
///
/// Not a wire type: the service converts it at its edge and decides what a caller may see (contact
/// instructions for signed-in users only, the exact point for the reporter only).
@dynamicMemberLookup
public struct LostFoundItem: Hashable, Sendable {
    /// The item id (`lfi_…`).
    public var id: String
    /// The reporter's account id.
    public var reporterID: String
    public var kind: LostFoundKind
    public var fields: LostFoundItemFields
    public var status: LostFoundStatus
    /// When it was reported (millisecond precision in stores).
    public var createdAt: Date
    /// When its fields or status last changed.
    public var updatedAt: Date
    /// When it was marked returned.
    public var returnedAt: Date?

    /// Creates an item; its status is the kind's open status unless given.
    public init(
        id: String,
        reporterID: String,
        kind: LostFoundKind,
        fields: LostFoundItemFields,
        status: LostFoundStatus? = nil,
        createdAt: Date,
        updatedAt: Date? = nil,
        returnedAt: Date? = nil
    ) {
        self.id = id
        self.reporterID = reporterID
        self.kind = kind
        self.fields = fields
        self.status = status ?? kind.openStatus
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.returnedAt = returnedAt
    }

    /// Reads a field of ``fields`` directly: `item.title`.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<LostFoundItemFields, T>) -> T {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    /// Whether the item is still lost or found (not returned).
    public var isOpen: Bool { status != .returned }

    /// This item with dates rounded to the millisecond precision stores keep.
    public var rounded: LostFoundItem {
        var copy = self
        copy.fields.occurredAt = fields.occurredAt.roundedToMilliseconds
        copy.createdAt = createdAt.roundedToMilliseconds
        copy.updatedAt = updatedAt.roundedToMilliseconds
        copy.returnedAt = returnedAt?.roundedToMilliseconds
        return copy
    }
}

/// Field changes for UpdateItem: `nil` keeps a field as it is. Validated by ``LostFoundRules``.
public struct LostFoundItemChanges: Hashable, Sendable {
    public var title: String?
    public var description: String?
    public var category: LostFoundCategory?
    public var building: String?
    /// `.some(nil)` clears the point.
    public var point: LostFoundPoint??
    public var occurredAt: Date?
    public var contactInstructions: String?
    /// `.some(nil)` clears the picture.
    public var imageID: String??

    public init() {}

    /// Whether no field is changed.
    public var isEmpty: Bool { self == LostFoundItemChanges() }

    /// The fields with these changes applied.
    public func applied(to fields: LostFoundItemFields) -> LostFoundItemFields {
        var result = fields
        if let title { result.title = title }
        if let description { result.description = description }
        if let category { result.category = category }
        if let building { result.building = building }
        if let point { result.point = point }
        if let occurredAt { result.occurredAt = occurredAt.roundedToMilliseconds }
        if let contactInstructions { result.contactInstructions = contactInstructions }
        if let imageID { result.imageID = imageID }
        return result
    }
}
