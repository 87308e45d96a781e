public import Foundation
public import SkiffDomain

/// The validation rules of BucketList, with messages that name the field and say what to fix.
///
/// Each `validate…` function returns the normalized value to store (trimmed text, lowercased tags) or
/// throws ``SkiffDomain/DomainError`` with code `invalidArgument`. The service validates before calling
/// a store; stores enforce existence, ownership, uniqueness and the per-user and per-list limits.
public enum BucketListRules {
    /// Allowed activity title lengths, in characters, after trimming.
    public static let titleLength = 1...100
    /// The longest activity description, in characters.
    public static let descriptionMaximumLength = 2000
    /// Allowed place name lengths, in characters, after trimming.
    public static let placeNameLength = 1...120
    /// The most tags an activity may have.
    public static let maximumTagCount = 10
    /// Allowed tag lengths, in characters, after trimming.
    public static let tagLength = 1...30
    /// Allowed comment lengths, in characters, after trimming.
    public static let commentLength = 1...1000
    /// Allowed bucket-list name lengths, in characters, after trimming.
    public static let listNameLength = 1...60
    /// The longest bucket-list description, in characters.
    public static let listDescriptionMaximumLength = 500
    /// The longest completion note, in characters.
    public static let noteMaximumLength = 500
    /// The most bucket lists one user may have.
    public static let maximumListsPerUser = 50
    /// The most activities one bucket list may hold.
    public static let maximumEntriesPerList = 200
    /// The largest search radius, in kilometres.
    public static let maximumRadiusKm = 100.0
    /// The trending radius used when a center is given without one, in kilometres.
    public static let defaultTrendingRadiusKm = 25.0
    /// Allowed trending windows, in hours.
    public static let trendingWindowHours = 1...720
    /// The trending window used when none is given (one week), in hours.
    public static let defaultTrendingWindowHours = 168
    /// The earliest completion date accepted (2000-01-01T00:00:00Z).
    public static let earliestCompletion = Date(timeIntervalSince1970: 946_684_800)
    /// How far in the future a completion date may be (one day, for time zones).
    public static let completionFutureTolerance: TimeInterval = 86_400

    // MARK: Activities

    /// Validates every field of a new activity and returns them normalized.
    public static func validate(_ fields: ActivityFields) throws(DomainError) -> ActivityFields {
        var result = fields
        result.title = try validateTitle(fields.title)
        result.description = try validateDescription(fields.description)
        result.place = try validatePlace(fields.place)
        result.imageID = try validateImageID(fields.imageID)
        result.tags = try validateTags(fields.tags)
        try validateStartsAt(fields.startsAt)
        return result
    }

    /// The earliest and latest `starts_at`: the range `google.protobuf.Timestamp` allows (years 1 to 9999).
    public static let startsAtRange =
        Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    /// A start time, if any, within ``startsAtRange``.
    public static func validateStartsAt(_ startsAt: Date?) throws(DomainError) {
        guard let startsAt else { return }
        guard startsAtRange.contains(startsAt) else {
            throw DomainError(.invalidArgument, "activity.starts_at must be within the years 1 to 9999.")
        }
    }

    /// Validates the fields an update sets and returns them normalized.
    public static func validate(_ changes: ActivityChanges) throws(DomainError) -> ActivityChanges {
        var result = changes
        if let title = changes.title { result.title = try validateTitle(title) }
        if let description = changes.description { result.description = try validateDescription(description) }
        if let place = changes.place { result.place = try validatePlace(place) }
        if let imageID = changes.imageID { result.imageID = .some(try validateImageID(imageID)) }
        if let tags = changes.tags { result.tags = try validateTags(tags) }
        if let startsAt = changes.startsAt { try validateStartsAt(startsAt) }
        return result
    }

    /// A title of 1–100 characters after trimming.
    public static func validateTitle(_ title: String) throws(DomainError) -> String {
        try text(title, field: "activity.title", length: titleLength, what: "give the activity a title")
    }

    /// A description of at most 2000 characters (kept as written, trimmed).
    public static func validateDescription(_ description: String) throws(DomainError) -> String {
        let trimmed = description.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= descriptionMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "activity.description has \(trimmed.count) characters: shorten it to at most \(descriptionMaximumLength)."
            )
        }
        return trimmed
    }

    /// A place with a name of 1–120 characters and valid coordinates.
    public static func validatePlace(_ place: Place) throws(DomainError) -> Place {
        let name = try text(
            place.name,
            field: "activity.place.name",
            length: placeNameLength,
            what: "name the place"
        )
        try validateCoordinate(place.point, field: "activity.place.point")
        return Place(name: name, point: place.point)
    }

    /// Latitude in −90…90 and longitude in −180…180, both finite.
    public static func validateCoordinate(_ point: Coordinate, field: String) throws(DomainError) {
        guard point.latitude.isFinite, (-90.0...90.0).contains(point.latitude) else {
            throw DomainError(
                .invalidArgument,
                "\(field).latitude is \(point.latitude): use degrees north from -90 to 90."
            )
        }
        guard point.longitude.isFinite, (-180.0...180.0).contains(point.longitude) else {
            throw DomainError(
                .invalidArgument,
                "\(field).longitude is \(point.longitude): use degrees east from -180 to 180."
            )
        }
    }

    /// An image id from Listings' UploadImage (`img_…`), or `nil`/empty for none.
    public static func validateImageID(_ imageID: String?) throws(DomainError) -> String? {
        guard let imageID, !imageID.isEmpty else { return nil }
        guard EntityID.isWellFormed(imageID, prefix: .activityImage) else {
            throw DomainError(
                .invalidArgument,
                "activity.image_id is not an image id: upload the picture with Listings.UploadImage and use its id."
            )
        }
        return imageID
    }

    /// At most 10 tags of 1–30 characters; lowercased, trimmed, duplicates dropped, order kept.
    public static func validateTags(_ tags: [String]) throws(DomainError) -> [String] {
        guard tags.count <= maximumTagCount else {
            throw DomainError(
                .invalidArgument,
                "activity.tags has \(tags.count) tags: use at most \(maximumTagCount)."
            )
        }
        var result: [String] = []
        var seen: Set<String> = []
        for tag in tags {
            let normalized = tag.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            guard tagLength.contains(normalized.count) else {
                throw DomainError(
                    .invalidArgument,
                    "activity.tags has a tag of \(normalized.count) characters: each tag must have 1 to \(tagLength.upperBound)."
                )
            }
            if seen.insert(normalized).inserted { result.append(normalized) }
        }
        return result
    }

    // MARK: Comments

    /// A comment of 1–1000 characters after trimming.
    public static func validateComment(_ text: String) throws(DomainError) -> String {
        try Self.text(text, field: "text", length: commentLength, what: "write the comment")
    }

    // MARK: Bucket lists

    /// Validates every field of a new bucket list and returns them normalized.
    public static func validate(_ fields: BucketListFields) throws(DomainError) -> BucketListFields {
        var result = fields
        result.name = try validateListName(fields.name)
        result.description = try validateListDescription(fields.description)
        return result
    }

    /// Validates the fields a bucket-list update sets and returns them normalized.
    public static func validate(_ changes: BucketListChanges) throws(DomainError) -> BucketListChanges {
        var result = changes
        if let name = changes.name { result.name = try validateListName(name) }
        if let description = changes.description { result.description = try validateListDescription(description) }
        return result
    }

    /// A list name of 1–60 characters after trimming.
    public static func validateListName(_ name: String) throws(DomainError) -> String {
        try text(name, field: "bucket_list.name", length: listNameLength, what: "name the list")
    }

    /// A list description of at most 500 characters.
    public static func validateListDescription(_ description: String) throws(DomainError) -> String {
        let trimmed = description.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= listDescriptionMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "bucket_list.description has \(trimmed.count) characters: shorten it to at most \(listDescriptionMaximumLength)."
            )
        }
        return trimmed
    }

    /// A completion on a date from 2000-01-01 to one day after `now`, with a note of at most 500 characters.
    public static func validateCompletion(_ completion: Completion, now: Date) throws(DomainError) -> Completion {
        guard completion.completedAt >= earliestCompletion else {
            throw DomainError(.invalidArgument, "completed_at is before 2000-01-01: give the day it was done.")
        }
        guard completion.completedAt <= now.addingTimeInterval(completionFutureTolerance) else {
            throw DomainError(
                .invalidArgument,
                "completed_at is in the future: an activity can only be marked done once it was done."
            )
        }
        let note = completion.note.trimmingCharacters(in: .whitespacesAndNewlines)
        guard note.count <= noteMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "note has \(note.count) characters: shorten it to at most \(noteMaximumLength)."
            )
        }
        return Completion(completedAt: completion.completedAt.roundedToMilliseconds, note: note)
    }

    // MARK: Searches

    /// A search circle: a valid center and a radius above 0 and at most 100 km.
    public static func validateCircle(center: Coordinate, radiusKm: Double) throws(DomainError) {
        try validateCoordinate(center, field: "center")
        guard radiusKm.isFinite, radiusKm > 0, radiusKm <= maximumRadiusKm else {
            throw DomainError(
                .invalidArgument,
                "radius_km is \(radiusKm): use more than 0 and at most \(Int(maximumRadiusKm)) kilometres."
            )
        }
    }

    /// The trending window: `0` means ``defaultTrendingWindowHours``, else 1…720 hours.
    public static func validateWindow(hours: Int) throws(DomainError) -> Int {
        if hours == 0 { return defaultTrendingWindowHours }
        guard trendingWindowHours.contains(hours) else {
            throw DomainError(
                .invalidArgument,
                "window_hours is \(hours): use 1 to \(trendingWindowHours.upperBound) hours, or 0 for one week."
            )
        }
        return hours
    }

    /// A user id of Accounts (`usr_…`).
    public static func validateUserID(_ id: String, field: String = "user_id") throws(DomainError) {
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "\(field) is empty: name a user.") }
        guard EntityID.isWellFormed(id, prefix: .account) else {
            throw DomainError(.invalidArgument, "\(field) is not a user id (usr_…).")
        }
    }

    /// A required id field that must not be empty.
    public static func requireID(_ id: String, field: String) throws(DomainError) {
        guard !id.isEmpty else { throw DomainError(.invalidArgument, "\(field) is empty.") }
        guard id.utf8.count <= 64 else { throw DomainError(.invalidArgument, "\(field) is too long to be an id.") }
    }

    private static func text(
        _ value: String,
        field: String,
        length: ClosedRange<Int>,
        what: String
    ) throws(DomainError) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw DomainError(
                .invalidArgument,
                "\(field) is empty: \(what) of \(length.lowerBound) to \(length.upperBound) characters."
            )
        }
        guard trimmed.count <= length.upperBound else {
            throw DomainError(
                .invalidArgument,
                "\(field) has \(trimmed.count) characters: shorten it to at most \(length.upperBound)."
            )
        }
        return trimmed
    }
}
