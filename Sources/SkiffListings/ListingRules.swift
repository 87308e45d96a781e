import Foundation
public import SkiffDomain

/// The validation rules for listings, with messages that name the field and say what to fix.
///
/// Each `validate…` function returns the normalized value to store (trimmed, lowercased tags) or throws
/// ``SkiffDomain/DomainError`` with code `invalidArgument`. Services validate before calling a store.
public enum ListingRules {
    /// Allowed title lengths, in characters, after trimming.
    public static let titleLength = 1...80
    /// The longest description, in characters.
    public static let descriptionMaximumLength = 2000
    /// The longest size, in characters.
    public static let sizeMaximumLength = 20
    /// The most tags a listing may have.
    public static let maximumTagCount = 10
    /// Allowed tag lengths, in characters, after trimming.
    public static let tagLength = 1...30
    /// The most images a listing may have.
    public static let maximumImageCount = 3
    /// The longest zip code, in characters.
    public static let zipCodeMaximumLength = 10
    /// The longest search query, in characters.
    public static let queryMaximumLength = 200
    /// The largest search radius, in kilometres.
    public static let maximumRadiusKm = 500.0
    /// The most listings one user may save.
    public static let maximumSavedListings = 500

    /// Validates every field of a new listing and returns them normalized.
    public static func validate(_ fields: ListingFields) throws(DomainError) -> ListingFields {
        var result = fields
        result.title = try validateTitle(fields.title)
        result.description = try validateDescription(fields.description)
        result.priceCents = try validatePrice(fields.priceCents)
        result.size = try validateSize(fields.size)
        result.tags = try validateTags(fields.tags)
        result.location = try validateLocation(fields.location)
        result.imageIDs = try validateImageIDs(fields.imageIDs)
        return result
    }

    /// Validates the fields an update sets and returns them normalized.
    public static func validate(_ changes: ListingChanges) throws(DomainError) -> ListingChanges {
        var result = changes
        if let title = changes.title { result.title = try validateTitle(title) }
        if let description = changes.description { result.description = try validateDescription(description) }
        if let price = changes.priceCents { result.priceCents = try validatePrice(price) }
        if let size = changes.size { result.size = try validateSize(size) }
        if let tags = changes.tags { result.tags = try validateTags(tags) }
        if let location = changes.location { result.location = try validateLocation(location) }
        if let imageIDs = changes.imageIDs { result.imageIDs = try validateImageIDs(imageIDs) }
        return result
    }

    /// A title of 1–80 characters after trimming.
    public static func validateTitle(_ title: String) throws(DomainError) -> String {
        try TextRules.trimmed(
            title,
            field: "title",
            length: titleLength,
            emptyHint: "give the item a title of 1 to 80 characters"
        )
    }

    /// A description of at most 2000 characters (trimmed).
    public static func validateDescription(_ description: String) throws(DomainError) -> String {
        try TextRules.trimmed(description, field: "description", length: 0...descriptionMaximumLength)
    }

    /// A price of 0 cents (free) or more.
    public static func validatePrice(_ cents: Int64) throws(DomainError) -> Int64 {
        guard cents >= 0 else {
            throw DomainError(.invalidArgument, "price_cents is negative: give a price of 0 (free) or more cents.")
        }
        return cents
    }

    /// A size of at most 20 characters (trimmed).
    public static func validateSize(_ size: String) throws(DomainError) -> String {
        let trimmed = size.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= sizeMaximumLength else {
            throw DomainError(.invalidArgument, "size is too long: use at most \(sizeMaximumLength) characters.")
        }
        return trimmed
    }

    /// Tags: at most 10 distinct ones, each 1–30 characters; returned trimmed, lowercase, without duplicates.
    public static func validateTags(_ tags: [String]) throws(DomainError) -> [String] {
        var result: [String] = []
        var seen: Set<String> = []
        for tag in tags {
            let normalized = normalizedTag(tag)
            guard !normalized.isEmpty else {
                throw DomainError(.invalidArgument, "tags contains an empty tag: remove it.")
            }
            guard normalized.count <= tagLength.upperBound else {
                throw DomainError(
                    .invalidArgument,
                    "tag \"\(normalized.prefix(30))…\" is too long: use at most \(tagLength.upperBound) characters."
                )
            }
            if seen.insert(normalized).inserted { result.append(normalized) }
        }
        guard result.count <= maximumTagCount else {
            throw DomainError(
                .invalidArgument,
                "tags has \(result.count) distinct tags: keep at most \(maximumTagCount)."
            )
        }
        return result
    }

    /// A tag as stored and compared: trimmed and lowercase.
    public static func normalizedTag(_ tag: String) -> String {
        tag.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// A location with a zip code (1–10 characters) and, optionally, a point within range.
    public static func validateLocation(_ location: ListingLocation) throws(DomainError) -> ListingLocation {
        let zip = location.zipCode.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !zip.isEmpty else {
            throw DomainError(.invalidArgument, "location.zip_code is empty: give the zip code of the pick-up place.")
        }
        guard zip.count <= zipCodeMaximumLength,
            zip.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == " ") })
        else {
            throw DomainError(
                .invalidArgument,
                "location.zip_code is not valid: use up to \(zipCodeMaximumLength) letters, digits, spaces or hyphens."
            )
        }
        if let point = location.point { try validatePoint(point, field: "location.point") }
        return ListingLocation(zipCode: zip, point: location.point)
    }

    /// Where a listing is for distance search — the `near` filter, distance order and `distance_km`: its
    /// exact point if it has one, else the centroid of its ZIP code (``ZipCentroids``), else nowhere (`nil`:
    /// it matches no `near` filter).
    ///
    /// Every backend places listings with this one function, so they all search alike. The search point is
    /// never shown as the listing's `location.point`: a ZIP-only listing keeps showing its ZIP code only
    /// (public already), and others measure to the search point's grid cell as to any listing's point
    /// (``SkiffDomain/ApproximateLocation``).
    ///
    /// - Parameters:
    ///   - location: A validated location (its ZIP code trimmed).
    ///   - centroids: The ZIP-code table; the bundled one unless a test gives another.
    public static func searchPoint(
        for location: ListingLocation,
        centroids: ZipCentroids = .shared
    ) -> GeoPoint? {
        location.point ?? centroids.centroid(of: location.zipCode)
    }

    /// The centre of a search given as a ZIP code (`filter.near.center_zip_code`): the ZIP's centroid.
    ///
    /// - Parameter zipCode: `12345` or `12345-6789`; surrounding spaces are ignored.
    /// - Throws: `invalidArgument` naming the field when the ZIP code is not in ``ZipCentroids``.
    public static func validateCenterZipCode(
        _ zipCode: String,
        centroids: ZipCentroids = .shared
    ) throws(DomainError) -> GeoPoint {
        let zip = zipCode.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let centroid = centroids.centroid(of: zip) else {
            throw DomainError(
                .invalidArgument,
                "filter.near.center_zip_code \(zip) is not a known US ZIP code: give a 5-digit ZIP code (or "
                    + "ZIP+4) of a Census ZIP Code Tabulation Area, or set filter.near.center instead."
            )
        }
        return centroid
    }

    /// A point with latitude in −90…90 and longitude in −180…180.
    public static func validatePoint(_ point: GeoPoint, field: String) throws(DomainError) {
        guard point.latitude.isFinite, (-90...90).contains(point.latitude) else {
            throw DomainError(.invalidArgument, "\(field).latitude must be between -90 and 90 degrees.")
        }
        guard point.longitude.isFinite, (-180...180).contains(point.longitude) else {
            throw DomainError(.invalidArgument, "\(field).longitude must be between -180 and 180 degrees.")
        }
    }

    /// At most 3 image ids, each non-empty, without duplicates.
    public static func validateImageIDs(_ ids: [String]) throws(DomainError) -> [String] {
        guard ids.count <= maximumImageCount else {
            throw DomainError(
                .invalidArgument,
                "image_ids has \(ids.count) images: keep at most \(maximumImageCount)."
            )
        }
        guard ids.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 128 }) else {
            throw DomainError(
                .invalidArgument,
                "image_ids contains an empty or malformed id: use ids from UploadImage."
            )
        }
        guard Set(ids).count == ids.count else {
            throw DomainError(.invalidArgument, "image_ids contains the same image twice: list each image once.")
        }
        return ids
    }

    /// A search query of at most 200 characters, trimmed.
    public static func validateQuery(_ query: String) throws(DomainError) -> String {
        guard query.count <= queryMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "query has \(query.count) characters: shorten it to at most \(queryMaximumLength)."
            )
        }
        return query.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A search circle: a valid centre and a radius above 0 and at most 500 km.
    public static func validateCircle(center: GeoPoint, radiusKm: Double) throws(DomainError) {
        try validatePoint(center, field: "filter.near.center")
        guard radiusKm.isFinite, radiusKm > 0, radiusKm <= maximumRadiusKm else {
            throw DomainError(
                .invalidArgument,
                "filter.near.radius_km must be above 0 and at most \(Int(maximumRadiusKm)) kilometres."
            )
        }
    }
}
