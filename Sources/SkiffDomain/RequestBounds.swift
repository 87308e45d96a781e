/// Size checks every service runs first in each RPC, before any store access, normalization or rule: each
/// costs time bounded by its limit, never by the request (a Swift string's UTF-8 count is constant time
/// for native strings, and a count of a repeated field is read before its elements).
///
/// A service keeps its limits in a `…RequestBounds` enum (`AccountsRequestBounds`, `ListingsRequestBounds`…) and
/// documents each on its proto field; violations are INVALID_ARGUMENT naming the field and the limit.
public enum RequestBounds {
    /// The longest id (user, listing, image, item, sale, conversation, message…), in UTF-8 bytes.
    public static let idBytes = 128
    /// The longest page token, in UTF-8 bytes.
    public static let pageTokenBytes = PageRequest.maximumTokenLength
    /// The longest update-mask path, in UTF-8 bytes.
    public static let updateMaskPathBytes = 64

    /// Throws INVALID_ARGUMENT when `value` has more than `limit` UTF-8 bytes.
    public static func check(_ value: String, _ field: String, atMost limit: Int) throws(DomainError) {
        guard value.utf8.count <= limit else {
            throw DomainError(.invalidArgument, "\(field) is too long: send at most \(limit) bytes (UTF-8).")
        }
    }

    /// Throws INVALID_ARGUMENT when the required id `value` is empty or longer than `limit` bytes.
    public static func checkID(_ value: String, _ field: String, atMost limit: Int = idBytes) throws(DomainError) {
        guard !value.isEmpty else { throw DomainError(.invalidArgument, "\(field) is empty.") }
        try check(value, field, atMost: limit)
    }

    /// Throws INVALID_ARGUMENT when the optional id `value` is longer than `limit` bytes (empty is fine).
    public static func checkOptionalID(
        _ value: String,
        _ field: String,
        atMost limit: Int = idBytes
    ) throws(DomainError) {
        try check(value, field, atMost: limit)
    }

    /// Throws INVALID_ARGUMENT when the repeated field `field` has more than `limit` elements.
    ///
    /// - Parameter unit: what one element is, for the message ("tags", "ids"…).
    public static func checkCount(
        _ count: Int,
        _ field: String,
        atMost limit: Int,
        unit: String = "values"
    ) throws(DomainError) {
        guard count <= limit else {
            throw DomainError(.invalidArgument, "\(field) has \(count) \(unit): send at most \(limit).")
        }
    }

    /// Checks the number of `values`, then each one's size: at most `count` values of at most `bytes` bytes.
    /// The work is O(`count`), whatever the request holds.
    public static func checkEach(
        _ values: [String],
        _ field: String,
        count: Int,
        bytes: Int,
        unit: String = "values",
        allowEmpty: Bool = true
    ) throws(DomainError) {
        try checkCount(values.count, field, atMost: count, unit: unit)
        for value in values {
            if !allowEmpty, value.isEmpty {
                throw DomainError(.invalidArgument, "\(field) contains an empty value: remove it.")
            }
            try check(value, "each of \(field)", atMost: bytes)
        }
    }

    /// Checks a page request: a page size that is not negative and a page token of at most
    /// ``pageTokenBytes`` bytes.
    public static func checkPage(size: Int32, token: String, tokenField: String = "page_token") throws(DomainError) {
        guard size >= 0 else {
            throw DomainError(.invalidArgument, "page_size must not be negative: send 0 for the default (20).")
        }
        try check(token, tokenField, atMost: pageTokenBytes)
    }

    /// Checks an update mask: at most `paths` paths of at most ``updateMaskPathBytes`` bytes each.
    public static func checkUpdateMask(_ maskPaths: [String], atMost paths: Int) throws(DomainError) {
        guard maskPaths.count <= paths else {
            throw DomainError(
                .invalidArgument,
                "update_mask has \(maskPaths.count) paths: name each changeable field at most once (at most "
                    + "\(paths))."
            )
        }
        for path in maskPaths { try check(path, "update_mask path", atMost: updateMaskPathBytes) }
    }
}
