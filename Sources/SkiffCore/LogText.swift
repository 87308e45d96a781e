/// Text for a log line, bounded whatever a client sent.
///
/// Errors may carry request-derived text: a domain error's cause, a GRDB `DatabaseError` whose
/// description holds the whole SQL statement, a client's path or value quoted in a reason. The server,
/// every service and the server app log such text through ``bounded(_:)``, so one log line stays small.
public enum LogText {
    /// The most characters of a value kept in a log line.
    public static let maximumCharacters = 300

    /// At most ``maximumCharacters`` characters of `value`'s description, with the full size in UTF-8
    /// bytes when it was cut. The work is bounded by the limit for native strings, plus the cost of
    /// describing `value`.
    public static func bounded(_ value: Any) -> String {
        let text = String(describing: value)
        var end = text.startIndex
        guard text.formIndex(&end, offsetBy: maximumCharacters, limitedBy: text.endIndex), end < text.endIndex else {
            return text
        }
        return "\(text[..<end])… (\(text.utf8.count) bytes)"
    }
}
