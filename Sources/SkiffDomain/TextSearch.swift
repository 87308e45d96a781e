import Foundation

/// The keyword-search tokenizer shared by every service that searches text (Listings, LostFound), so
/// that every backend of every service splits and folds words identically.
///
/// A token is a maximal run of letters and numbers (Unicode general categories L*, N* and Co, the
/// categories SQLite FTS5's `unicode61` tokenizer keeps) after folding case, diacritics and width:
/// "Crème-Brûlée x2" → `["creme", "brulee", "x2"]`. SQLite stores indexes over the tokens this produces
/// (joined by spaces, ``indexText(_:)``), so FTS5 sees text it cannot split further; the candidates it
/// returns are checked again in Swift with ``matches(_:terms:)``, so in-memory and SQLite stores return
/// exactly the same rows.
package enum TextSearch {
    /// The tokens of a text, in order, with repeats.
    package static func tokens(_ text: String) -> [String] {
        text.utf8.allSatisfy { $0 < 0x80 } ? asciiTokens(text) : foldedTokens(text)
    }

    /// ``tokens(_:)`` of an ASCII text, without Foundation: in ASCII, folding is lowercasing, and the
    /// letters and numbers are exactly `A–Z`, `a–z` and `0–9` (a test compares it with
    /// ``foldedTokens(_:)`` on every ASCII character).
    package static func asciiTokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): current.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): current.append(byte + 32)
            default:
                if !current.isEmpty {
                    tokens.append(String(decoding: current, as: UTF8.self))
                    current.removeAll(keepingCapacity: true)
                }
            }
        }
        if !current.isEmpty { tokens.append(String(decoding: current, as: UTF8.self)) }
        return tokens
    }

    /// ``tokens(_:)`` of any text: folded for case, diacritics and width, then split at every scalar that
    /// is not a letter or number.
    package static func foldedTokens(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
            .precomposedStringWithCanonicalMapping
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            if isTokenScalar(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                tokens.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { tokens.append(String(current)) }
        return tokens
    }

    private static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            true
        default:
            false
        }
    }

    /// The text SQLite indexes for a field: its tokens joined by single spaces.
    package static func indexText(_ text: String) -> String {
        tokens(text).joined(separator: " ")
    }

    /// A query's terms, one part per distinct (term, whole or prefix) in the order they first appear, with
    /// how many times the query holds it; the last term is the one prefix part. Matching needs each part
    /// once (AND is idempotent); the relevance score counts each part's tokens times its repeats, so a store
    /// reads each part's tokens once and multiplies their points rather than reading them once per repeat.
    package static func queryParts(_ terms: [String]) -> [(term: String, prefix: Bool, times: Int)] {
        var parts: [(term: String, prefix: Bool, times: Int)] = []
        for (index, term) in terms.enumerated() {
            let prefix = index == terms.count - 1
            if let seen = parts.firstIndex(where: { $0.term == term && $0.prefix == prefix }) {
                parts[seen].times += 1
            } else {
                parts.append((term, prefix, 1))
            }
        }
        return parts
    }

    /// The FTS5 MATCH expression for query terms: every term, the last one as a prefix; each of
    /// ``queryParts(_:)`` once (FTS5 would look a repeat up again for the same answer).
    package static func ftsExpression(_ terms: [String]) -> String {
        queryParts(terms).map { "\"\($0.term)\"" + ($0.prefix ? "*" : "") }.joined(separator: " ")
    }

    /// Whether every term equals some token (the last term: is a prefix of some token), as FTS5's
    /// ``ftsExpression(_:)`` matches.
    package static func matches(_ tokens: [String], terms: [String]) -> Bool {
        for (index, term) in terms.enumerated() {
            let prefix = index == terms.count - 1
            let found = tokens.contains { prefix ? $0.utf8.starts(with: term.utf8) : $0 == term }
            if !found { return false }
        }
        return true
    }
}

/// Distances on Earth, shared by the services that search around a point.
package enum GreatCircle {
    /// The Earth's mean radius, in kilometres.
    package static let earthRadiusKm = 6371.0088

    /// The great-circle distance between two points given in degrees (haversine), in kilometres.
    package static func distanceKm(
        latitude1: Double,
        longitude1: Double,
        latitude2: Double,
        longitude2: Double
    ) -> Double {
        let radians = Double.pi / 180
        let dLat = (latitude2 - latitude1) * radians
        let dLng = (longitude2 - longitude1) * radians
        let h =
            sin(dLat / 2) * sin(dLat / 2)
            + cos(latitude1 * radians) * cos(latitude2 * radians) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * earthRadiusKm * asin(min(1, sqrt(h)))
    }

    /// A latitude/longitude box containing the circle (with a margin), for prefiltering in SQL.
    /// `longitude` is `nil` when the box would wrap around the antimeridian or reach a pole.
    package static func boundingBox(
        latitude: Double,
        longitude: Double,
        radiusKm: Double
    ) -> (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) {
        let degrees = radiusKm / (earthRadiusKm * Double.pi / 180) * 1.01 + 1e-6
        let minLat = latitude - degrees
        let maxLat = latitude + degrees
        let latitudeRange = max(-90, minLat)...min(90, maxLat)
        guard minLat > -89, maxLat < 89 else { return (latitudeRange, nil) }
        let lngDegrees = degrees / cos(max(abs(minLat), abs(maxLat)) * Double.pi / 180)
        let minLng = longitude - lngDegrees
        let maxLng = longitude + lngDegrees
        guard minLng >= -180, maxLng <= 180 else { return (latitudeRange, nil) }
        return (latitudeRange, minLng...maxLng)
    }
}
