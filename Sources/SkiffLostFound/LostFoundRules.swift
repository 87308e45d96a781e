public import Foundation
public import SkiffDomain

/// The validation rules for lost-and-found items, with messages that name the field and say what to fix.
///
/// Each `validate…` function returns the normalized value to store (trimmed) or throws
/// ``SkiffDomain/DomainError`` with code `invalidArgument`. Services validate before calling a store.
public enum LostFoundRules {
    /// Allowed title lengths, in characters, after trimming.
    public static let titleLength = 1...80
    /// The longest description, in characters.
    public static let descriptionMaximumLength = 2000
    /// Allowed building-name lengths, in characters, after trimming.
    public static let buildingLength = 1...100
    /// Allowed contact-instruction lengths, in characters, after trimming.
    public static let contactLength = 1...500
    /// The longest image id, in bytes.
    public static let imageIDMaximumLength = 128
    /// The longest search query, in characters.
    public static let queryMaximumLength = 200
    /// The largest search radius, in kilometres.
    public static let maximumRadiusKm = 500.0
    /// How far in the future `occurred_at` may be (clock skew, time zones): one day.
    public static let occurredAtFutureTolerance: TimeInterval = 86_400

    /// Validates every field of a new item and returns them normalized.
    public static func validate(_ fields: LostFoundItemFields, now: Date) throws(DomainError) -> LostFoundItemFields {
        var result = fields
        result.title = try validateTitle(fields.title)
        result.description = try validateDescription(fields.description)
        result.building = try validateBuilding(fields.building, field: "item.building")
        if let point = fields.point { try validatePoint(point, field: "item.point") }
        result.occurredAt = try validateOccurredAt(fields.occurredAt, now: now)
        result.contactInstructions = try validateContact(fields.contactInstructions)
        result.imageID = try validateImageID(fields.imageID)
        return result
    }

    /// Validates the fields an update sets and returns them normalized.
    public static func validate(_ changes: LostFoundItemChanges, now: Date) throws(DomainError) -> LostFoundItemChanges
    {
        var result = changes
        if let title = changes.title { result.title = try validateTitle(title) }
        if let description = changes.description { result.description = try validateDescription(description) }
        if let building = changes.building { result.building = try validateBuilding(building, field: "item.building") }
        if case .some(.some(let point)) = changes.point { try validatePoint(point, field: "item.point") }
        if let occurredAt = changes.occurredAt { result.occurredAt = try validateOccurredAt(occurredAt, now: now) }
        if let contact = changes.contactInstructions { result.contactInstructions = try validateContact(contact) }
        if let imageID = changes.imageID { result.imageID = .some(try validateImageID(imageID)) }
        return result
    }

    /// A title of 1–80 characters after trimming.
    public static func validateTitle(_ title: String) throws(DomainError) -> String {
        try TextRules.trimmed(
            title,
            field: "item.title",
            length: titleLength,
            emptyHint: "give the item a title of 1 to 80 characters"
        )
    }

    /// A description of at most 2000 characters (trimmed).
    public static func validateDescription(_ description: String) throws(DomainError) -> String {
        try TextRules.trimmed(description, field: "item.description", length: 0...descriptionMaximumLength)
    }

    /// A building name of 1–100 characters after trimming.
    public static func validateBuilding(_ building: String, field: String) throws(DomainError) -> String {
        let trimmed = building.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw DomainError(.invalidArgument, "\(field) is empty: name the building where it was lost or found.")
        }
        guard trimmed.count <= buildingLength.upperBound else {
            throw DomainError(
                .invalidArgument,
                "\(field) has \(trimmed.count) characters: shorten it to at most \(buildingLength.upperBound)."
            )
        }
        return trimmed
    }

    /// Contact instructions of 1–500 characters after trimming.
    public static func validateContact(_ contact: String) throws(DomainError) -> String {
        let trimmed = contact.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw DomainError(
                .invalidArgument,
                "item.contact_instructions is empty: say how to reach you or where to collect the item."
            )
        }
        guard trimmed.count <= contactLength.upperBound else {
            throw DomainError(
                .invalidArgument,
                "item.contact_instructions has \(trimmed.count) characters: shorten it to at most \(contactLength.upperBound)."
            )
        }
        return trimmed
    }

    /// A point with latitude in −90…90 and longitude in −180…180.
    public static func validatePoint(_ point: LostFoundPoint, field: String) throws(DomainError) {
        guard point.latitude.isFinite, (-90...90).contains(point.latitude) else {
            throw DomainError(.invalidArgument, "\(field).latitude must be between -90 and 90 degrees.")
        }
        guard point.longitude.isFinite, (-180...180).contains(point.longitude) else {
            throw DomainError(.invalidArgument, "\(field).longitude must be between -180 and 180 degrees.")
        }
    }

    /// The earliest `occurred_at`: 0001-01-01T00:00:00Z, the start of `google.protobuf.Timestamp`'s range.
    public static let earliestOccurredAt = Date(timeIntervalSince1970: -62_135_596_800)

    /// When the item was lost or found: not more than ``occurredAtFutureTolerance`` after `now`, and not
    /// before ``earliestOccurredAt``.
    public static func validateOccurredAt(_ date: Date, now: Date) throws(DomainError) -> Date {
        guard date.timeIntervalSince1970.isFinite, date.timeIntervalSince(now) <= occurredAtFutureTolerance else {
            throw DomainError(
                .invalidArgument,
                "item.occurred_at is in the future: give the time the item was lost or found."
            )
        }
        guard date >= earliestOccurredAt else {
            throw DomainError(
                .invalidArgument,
                "item.occurred_at is before the year 1: give the time the item was lost or found."
            )
        }
        return date.roundedToMilliseconds
    }

    /// An image id: `nil` or empty for none, else at most 128 characters without spaces.
    public static func validateImageID(_ id: String?) throws(DomainError) -> String? {
        guard let id, !id.isEmpty else { return nil }
        guard id.utf8.count <= imageIDMaximumLength, !id.contains(where: \.isWhitespace) else {
            throw DomainError(.invalidArgument, "item.image_id is malformed: use an id from UploadImage.")
        }
        return id
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
    public static func validateCircle(_ circle: LostFoundCircle) throws(DomainError) {
        try validatePoint(circle.center, field: "filter.near.center")
        guard circle.radiusKm.isFinite, circle.radiusKm > 0, circle.radiusKm <= maximumRadiusKm else {
            throw DomainError(
                .invalidArgument,
                "filter.near.radius_km must be above 0 and at most \(Int(maximumRadiusKm)) kilometres."
            )
        }
    }

    /// A building as filters and matching compare it: its words (``SkiffDomain/TextSearch``) joined by
    /// single spaces.
    public static func buildingKey(_ building: String) -> String {
        TextSearch.tokens(building).joined(separator: " ")
    }
}
