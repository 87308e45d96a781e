public import Foundation
import SkiffCore

/// A campus meeting point where buyer and seller can hand an item over, from the operator's list
/// (`--handoff-places FILE`). A sale keeps a copy of the place picked for it, so editing or removing a
/// place later does not change the sales that chose it.
public struct HandoffPlace: Hashable, Sendable, Codable {
    /// The place's id in the configuration, e.g. `library-steps`: 1–64 bytes of `a-z`, `0-9`, `-`
    /// and `_`.
    public var id: String
    /// What people call it, e.g. "Geisel Library, main entrance": 1–100 characters.
    public var name: String
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double
    /// When it is open or staffed, as text to show, e.g. "Mon–Fri 7:00–22:00": at most 200
    /// characters; may be empty.
    public var hours: String

    /// Creates a place (``HandoffPlaces/validate(_:)`` checks it).
    public init(id: String, name: String, latitude: Double, longitude: Double, hours: String = "") {
        self.id = id
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.hours = hours
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, latitude, longitude, hours
    }

    /// Decodes a place; `hours` may be left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        latitude = try container.decode(Double.self, forKey: .latitude)
        longitude = try container.decode(Double.self, forKey: .longitude)
        hours = try container.decodeIfPresent(String.self, forKey: .hours) ?? ""
    }
}

/// The operator's list of hand-off places: its limits, and reading it from JSON.
///
/// The file is a JSON object with one array, in the order the apps show them:
///
/// ```json
/// {"places": [{"id": "library-steps", "name": "Main library steps",
///              "latitude": 32.8811, "longitude": -117.2376, "hours": "Daily 7:00–24:00"}]}
/// ```
public enum HandoffPlaces {
    /// The most places a list may have (ListHandoffPlaces answers them all in one response).
    public static let maximumCount = 100
    /// The longest id, in bytes.
    public static let idMaximumBytes = 64
    /// The longest name, in characters.
    public static let nameMaximumLength = 100
    /// The longest opening hours text, in characters.
    public static let hoursMaximumLength = 200
    /// The largest file read, in bytes.
    public static let fileMaximumBytes = 256 * 1024

    /// Why a list of places was refused: which place and what to fix.
    public struct Invalid: Error, CustomStringConvertible, Equatable {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    private struct File: Decodable {
        var places: [HandoffPlace]
    }

    /// Reads and checks a list from its JSON text.
    public static func decode(_ data: Data) throws(Invalid) -> [HandoffPlace] {
        guard data.count <= fileMaximumBytes else {
            throw Invalid("the hand-off places file is over \(fileMaximumBytes) bytes")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw Invalid(
                "the hand-off places file is not a JSON object {\"places\": [{\"id\", \"name\", \"latitude\", "
                    + "\"longitude\", \"hours\"}, …]}: \(LogText.bounded(error))"
            )
        }
        try validate(file.places)
        return file.places
    }

    /// Reads and checks the list in the file at `path`.
    public static func load(path: String) throws(Invalid) -> [HandoffPlace] {
        let url = URL(fileURLWithPath: path)
        let size = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        guard size <= fileMaximumBytes else {
            throw Invalid("the hand-off places file \(path) is over \(fileMaximumBytes) bytes")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw Invalid("cannot read the hand-off places file \(path): \(LogText.bounded(error))")
        }
        return try decode(data)
    }

    /// Checks every place of a list and that their ids are distinct.
    public static func validate(_ places: [HandoffPlace]) throws(Invalid) {
        guard places.count <= maximumCount else {
            throw Invalid("at most \(maximumCount) hand-off places may be configured, not \(places.count)")
        }
        var seen: Set<String> = []
        for (index, place) in places.enumerated() {
            let which = "hand-off place \(index + 1)"
            let idCharacters = place.id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard (1...idMaximumBytes).contains(place.id.utf8.count), idCharacters else {
                throw Invalid("\(which): id must be 1–\(idMaximumBytes) characters of a-z, 0-9, - and _")
            }
            guard seen.insert(place.id).inserted else {
                throw Invalid("\(which): the id \(place.id) is used twice")
            }
            let name = place.name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, place.name.count <= nameMaximumLength else {
                throw Invalid("\(which) (\(place.id)): name must be 1–\(nameMaximumLength) characters")
            }
            guard place.latitude.isFinite, (-90...90).contains(place.latitude) else {
                throw Invalid("\(which) (\(place.id)): latitude must be -90…90 degrees")
            }
            guard place.longitude.isFinite, (-180...180).contains(place.longitude) else {
                throw Invalid("\(which) (\(place.id)): longitude must be -180…180 degrees")
            }
            guard place.hours.count <= hoursMaximumLength else {
                throw Invalid("\(which) (\(place.id)): hours must be at most \(hoursMaximumLength) characters")
            }
        }
    }
}
