import Crypto
public import Foundation
public import SkiffDomain

extension EntityID.Prefix {
    /// Listings (`lst_`).
    public static let listing = EntityID.Prefix("lst")
    /// Images (`img_`).
    public static let image = EntityID.Prefix("img")
}

/// What kind of item a listing is.
public enum ListingCategory: String, CaseIterable, Codable, Hashable, Sendable {
    case clothing, shoes, accessories, electronics, books, furniture, tickets, other
}

/// The state of wear of an item.
public enum ListingCondition: String, CaseIterable, Codable, Hashable, Sendable {
    case new
    case lightlyUsed = "lightly_used"
    case heavilyUsed = "heavily_used"
}

/// Where a listing is in its life. `sold` and `withdrawn` are final.
public enum ListingStatus: String, CaseIterable, Codable, Hashable, Sendable {
    case active, sold, withdrawn
}

/// A point on Earth (WGS 84), in degrees.
public struct GeoPoint: Codable, Hashable, Sendable {
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Where an item can be picked up: a zip code, and optionally the exact place.
public struct ListingLocation: Codable, Hashable, Sendable {
    /// The zip code (required, trimmed).
    public var zipCode: String
    /// The exact place; shown only to the seller, used for distance search.
    public var point: GeoPoint?

    public init(zipCode: String, point: GeoPoint? = nil) {
        self.zipCode = zipCode
        self.point = point
    }
}

/// The fields of a listing its seller chooses (validated by ``ListingRules``).
public struct ListingFields: Codable, Hashable, Sendable {
    /// 1–80 characters, trimmed.
    public var title: String
    /// At most 2000 characters.
    public var description: String
    /// The asking price in cents, 0 or more.
    public var priceCents: Int64
    public var category: ListingCategory
    public var condition: ListingCondition
    /// At most 20 characters; empty when it does not apply.
    public var size: String
    /// At most 10, each 1–30 characters, lowercase, without duplicates, in the order first given.
    public var tags: [String]
    public var madeOnCampus: Bool
    public var biddingEnabled: Bool
    /// Whether the seller is hidden from everyone else.
    public var anonymous: Bool
    public var location: ListingLocation
    /// At most 3 image ids, in display order.
    public var imageIDs: [String]

    public init(
        title: String,
        description: String = "",
        priceCents: Int64,
        category: ListingCategory,
        condition: ListingCondition,
        size: String = "",
        tags: [String] = [],
        madeOnCampus: Bool = false,
        biddingEnabled: Bool = false,
        anonymous: Bool = false,
        location: ListingLocation,
        imageIDs: [String] = []
    ) {
        self.title = title
        self.description = description
        self.priceCents = priceCents
        self.category = category
        self.condition = condition
        self.size = size
        self.tags = tags
        self.madeOnCampus = madeOnCampus
        self.biddingEnabled = biddingEnabled
        self.anonymous = anonymous
        self.location = location
        self.imageIDs = imageIDs
    }

    /// A canonical text of the fields: their JSON with the keys sorted. What ``fingerprint`` hashes, and
    /// what stores kept as the fingerprint itself before fingerprints were hashed.
    public var canonicalText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// What a store keeps with a CreateListing's `request_id` to recognise a retry: ``fingerprintPrefix`` and
    /// the SHA-256 of ``canonicalText`` in hex, 71 characters whatever the fields (the text itself was about
    /// 600 bytes a listing, the largest table of a SQLite file).
    public var fingerprint: String {
        Self.fingerprintPrefix + SHA256.hash(data: Data(canonicalText.utf8)).lowercaseHex
    }

    /// How a hashed ``fingerprint`` begins. An older fingerprint, the ``canonicalText`` itself, begins with `{`.
    public static let fingerprintPrefix = "sha256:"
}

/// An item for sale.
///
/// Not a wire type: the service converts it at its edge and decides what a caller may see (the seller of an
/// anonymous listing and exact coordinates are private to the seller).
@dynamicMemberLookup
public struct Listing: Hashable, Sendable {
    /// The listing id (`lst_…`).
    public var id: String
    /// The seller's account id.
    public var sellerID: String
    /// What the seller chose.
    public var fields: ListingFields
    public var status: ListingStatus
    /// When it was posted (millisecond precision in stores).
    public var createdAt: Date
    /// When its fields or status last changed.
    public var updatedAt: Date

    public init(
        id: String,
        sellerID: String,
        fields: ListingFields,
        status: ListingStatus = .active,
        createdAt: Date,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.sellerID = sellerID
        self.fields = fields
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    /// Reads a field of ``fields`` directly: `listing.title`.
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<ListingFields, T>) -> T {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    /// This listing with dates rounded to the millisecond precision stores keep.
    public var rounded: Listing {
        var copy = self
        copy.createdAt = createdAt.roundedToMilliseconds
        copy.updatedAt = updatedAt.roundedToMilliseconds
        return copy
    }
}

/// Field changes for UpdateListing: `nil` keeps a field as it is. Validated by ``ListingRules``.
public struct ListingChanges: Hashable, Sendable {
    public var title: String?
    public var description: String?
    public var priceCents: Int64?
    public var category: ListingCategory?
    public var condition: ListingCondition?
    public var size: String?
    public var tags: [String]?
    public var madeOnCampus: Bool?
    public var biddingEnabled: Bool?
    public var anonymous: Bool?
    public var location: ListingLocation?
    public var imageIDs: [String]?

    public init() {}

    /// Whether no field is changed.
    public var isEmpty: Bool { self == ListingChanges() }

    /// The fields with these changes applied.
    public func applied(to fields: ListingFields) -> ListingFields {
        var result = fields
        if let title { result.title = title }
        if let description { result.description = description }
        if let priceCents { result.priceCents = priceCents }
        if let category { result.category = category }
        if let condition { result.condition = condition }
        if let size { result.size = size }
        if let tags { result.tags = tags }
        if let madeOnCampus { result.madeOnCampus = madeOnCampus }
        if let biddingEnabled { result.biddingEnabled = biddingEnabled }
        if let anonymous { result.anonymous = anonymous }
        if let location { result.location = location }
        if let imageIDs { result.imageIDs = imageIDs }
        return result
    }
}
