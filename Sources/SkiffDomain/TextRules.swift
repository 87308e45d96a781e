import Foundation

/// Checks shared by every service's free-text fields.
public enum TextRules {
    /// `value` with surrounding white space removed, checked to have a length in `length`
    /// (characters), or INVALID_ARGUMENT naming `field` and what to fix.
    ///
    /// - Parameter emptyHint: what to tell someone who left a required field empty, e.g. "give
    ///   the item a title of 1 to 80 characters".
    public static func trimmed(
        _ value: String,
        field: String,
        length: ClosedRange<Int>,
        emptyHint: String? = nil
    ) throws(DomainError) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty, length.lowerBound > 0 {
            let hint = emptyHint ?? "give it \(length.lowerBound) to \(length.upperBound) characters"
            throw DomainError(.invalidArgument, "\(field) is empty: \(hint).")
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
