import Foundation
public import SkiffDomain

/// The validation rules for account data, with messages a person can act on.
///
/// Each `validate…` function returns the normalized value to store (trimmed, lowercased where that applies)
/// or throws ``SkiffDomain/DomainError`` with code `invalidArgument`. Services validate before calling a
/// store; stores do not validate again.
public struct AccountRules: Hashable, Sendable {
    /// Allowed password lengths, in characters.
    public static let passwordLength = 10...128
    /// The most UTF-8 bytes a password may have (bounds hashing cost for exotic characters).
    public static let passwordMaximumBytes = 1024
    /// Allowed display-name lengths, in characters, after trimming.
    public static let displayNameLength = 1...50
    /// The longest bio, in characters.
    public static let bioMaximumLength = 500
    /// The longest payment handle, in characters.
    public static let paymentHandleMaximumLength = 100
    /// The longest image id.
    public static let imageIDMaximumLength = 128
    /// The longest rating comment, in characters.
    public static let ratingCommentMaximumLength = 1000
    /// Allowed report-reason lengths, in characters, after trimming.
    public static let reportReasonLength = 1...100
    /// The longest report details, in characters.
    public static let reportDetailsMaximumLength = 2000
    /// The longest user-search query, in characters.
    public static let searchQueryMaximumLength = 100

    /// The e-mail domains accounts may sign up with (lowercase). Empty allows any domain.
    ///
    /// A domain also allows its subdomains: `school.edu` allows `cs.school.edu`.
    public var allowedEmailDomains: [String]

    /// Creates rules.
    ///
    /// - Parameter allowedEmailDomains: Campus domains, e.g. `["school.edu"]`; empty allows any domain.
    public init(allowedEmailDomains: [String] = []) {
        self.allowedEmailDomains = allowedEmailDomains.map { Account.normalizedEmail($0) }
    }

    // MARK: Accounts

    /// Validates an e-mail address and returns its normalized form (trimmed, lowercase).
    ///
    /// Accepts the common ASCII subset of RFC 5322: `local@domain.tld`, a local part of at most 64 characters
    /// without leading, trailing or doubled dots, and a domain of letters, digits and hyphens with a
    /// top-level domain of at least two letters.
    public func validateEmail(_ email: String) throws(DomainError) -> String {
        let normalized = Account.normalizedEmail(email)
        guard !normalized.isEmpty else {
            throw DomainError(.invalidArgument, "Enter your e-mail address.")
        }
        guard Self.isSyntacticallyValidEmail(normalized) else {
            throw DomainError(.invalidArgument, "Enter an e-mail address like name@school.edu.")
        }
        if !allowedEmailDomains.isEmpty {
            let domain = String(normalized[normalized.index(after: normalized.lastIndex(of: "@")!)...])
            let allowed = allowedEmailDomains.contains { domain == $0 || domain.hasSuffix("." + $0) }
            guard allowed else {
                let list = allowedEmailDomains.map { "@" + $0 }.joined(separator: ", ")
                throw DomainError(.invalidArgument, "Sign up with your campus e-mail address (\(list)).")
            }
        }
        return normalized
    }

    /// Validates a new password's length (10 to 128 characters).
    public static func validatePassword(_ password: String) throws(DomainError) {
        let count = password.count
        guard count >= passwordLength.lowerBound else {
            throw DomainError(
                .invalidArgument,
                "Choose a password of at least \(passwordLength.lowerBound) characters."
            )
        }
        guard count <= passwordLength.upperBound, password.utf8.count <= passwordMaximumBytes else {
            throw DomainError(
                .invalidArgument,
                "Choose a password of at most \(passwordLength.upperBound) characters."
            )
        }
    }

    /// Validates a display name and returns it trimmed.
    public static func validateDisplayName(_ name: String) throws(DomainError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw DomainError(.invalidArgument, "Enter a display name.")
        }
        guard trimmed.count <= displayNameLength.upperBound else {
            throw DomainError(
                .invalidArgument,
                "Shorten the display name to at most \(displayNameLength.upperBound) characters."
            )
        }
        guard !containsControlCharacters(trimmed, allowingNewlines: false) else {
            throw DomainError(.invalidArgument, "Remove line breaks and special characters from the display name.")
        }
        return trimmed
    }

    /// Validates a bio and returns it trimmed; empty is allowed.
    public static func validateBio(_ bio: String) throws(DomainError) -> String {
        let trimmed = bio.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= bioMaximumLength else {
            throw DomainError(.invalidArgument, "Shorten the bio to at most \(bioMaximumLength) characters.")
        }
        guard !containsControlCharacters(trimmed, allowingNewlines: true) else {
            throw DomainError(.invalidArgument, "Remove special characters from the bio.")
        }
        return trimmed
    }

    /// Validates a payment handle (e.g. `@venmo-name`) and returns it trimmed; empty clears it.
    public static func validatePaymentHandle(_ handle: String) throws(DomainError) -> String {
        let trimmed = handle.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= paymentHandleMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "Shorten the payment handle to at most \(paymentHandleMaximumLength) characters."
            )
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.isWhitespace || isControl($0) }) else {
            throw DomainError(.invalidArgument, "Remove spaces from the payment handle.")
        }
        return trimmed
    }

    /// Validates a US ZIP code (`12345` or `12345-6789`) and returns it trimmed; empty clears it.
    public static func validateZipCode(_ zip: String) throws(DomainError) -> String {
        let trimmed = zip.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.isEmpty || isZipCode(trimmed) else {
            throw DomainError(.invalidArgument, "Enter a ZIP code like 12345 or 12345-6789.")
        }
        return trimmed
    }

    /// Validates an image id (letters, digits, `-` and `_`); empty clears the picture.
    public static func validateImageID(_ id: String) throws(DomainError) -> String {
        guard id.utf8.count <= imageIDMaximumLength, id.utf8.allSatisfy(Base64URL.isAlphabet) else {
            throw DomainError(.invalidArgument, "The picture id is not valid; upload the picture again.")
        }
        return id
    }

    /// Validates profile changes and returns them normalized.
    ///
    /// - Throws: `invalidArgument` for the first field that breaks a rule, or when nothing would change.
    public static func validate(_ changes: ProfileChanges) throws(DomainError) -> ProfileChanges {
        guard !changes.isEmpty else {
            throw DomainError(.invalidArgument, "Change at least one profile field.")
        }
        var result = ProfileChanges()
        if let value = changes.displayName { result.displayName = try validateDisplayName(value) }
        if let value = changes.bio { result.bio = try validateBio(value) }
        if let value = changes.avatarImageID { result.avatarImageID = try validateImageID(value) }
        if let value = changes.paymentHandle { result.paymentHandle = try validatePaymentHandle(value) }
        if let value = changes.zipCode { result.zipCode = try validateZipCode(value) }
        return result
    }

    /// Validates a user-search query and returns it trimmed; empty matches everyone.
    public static func validateSearchQuery(_ query: String) throws(DomainError) -> String {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= searchQueryMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "Shorten the search to at most \(searchQueryMaximumLength) characters."
            )
        }
        return trimmed
    }

    // MARK: Ratings and reports

    /// Validates a rating's stars and comment; returns the comment trimmed.
    public static func validateRating(
        stars: Int,
        comment: String,
        sellerID: String,
        buyerID: String
    ) throws(DomainError) -> String {
        guard (1...5).contains(stars) else {
            throw DomainError(.invalidArgument, "Choose 1 to 5 stars.")
        }
        guard sellerID != buyerID else {
            throw DomainError(.invalidArgument, "You cannot rate yourself.")
        }
        let trimmed = comment.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= ratingCommentMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "Shorten the comment to at most \(ratingCommentMaximumLength) characters."
            )
        }
        return trimmed
    }

    /// Validates a report; returns the reason and details trimmed.
    public static func validateReport(
        reason: String,
        details: String,
        reporterID: String,
        reportedID: String
    ) throws(DomainError) -> (reason: String, details: String) {
        guard reporterID != reportedID else {
            throw DomainError(.invalidArgument, "You cannot report yourself.")
        }
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else {
            throw DomainError(.invalidArgument, "Choose a reason for the report.")
        }
        guard reason.count <= reportReasonLength.upperBound else {
            throw DomainError(
                .invalidArgument,
                "Shorten the reason to at most \(reportReasonLength.upperBound) characters."
            )
        }
        let details = details.trimmingCharacters(in: .whitespacesAndNewlines)
        guard details.count <= reportDetailsMaximumLength else {
            throw DomainError(
                .invalidArgument,
                "Shorten the details to at most \(reportDetailsMaximumLength) characters."
            )
        }
        return (reason, details)
    }
}

extension AccountRules {
    /// Whether a normalized (lowercase) address has valid syntax.
    static func isSyntacticallyValidEmail(_ email: String) -> Bool {
        let bytes = Array(email.utf8)
        guard bytes.count <= 254, let at = bytes.firstIndex(of: UInt8(ascii: "@")),
            bytes.lastIndex(of: UInt8(ascii: "@")) == at
        else { return false }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        let dot = UInt8(ascii: ".")
        let localSpecials = Set("!#$%&'*+/=?^_`{|}~-.".utf8)
        guard (1...64).contains(local.count), local.first != dot, local.last != dot,
            !zip(local, local.dropFirst()).contains(where: { $0 == dot && $1 == dot }),
            local.allSatisfy({ isASCIIAlphanumeric($0) || localSpecials.contains($0) })
        else { return false }
        let labels = domain.split(separator: dot, omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                label.allSatisfy({ isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") })
            else { return false }
        }
        let tld = labels.last!
        return tld.count >= 2 && tld.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isZipCode(_ zip: String) -> Bool {
        let bytes = Array(zip.utf8)
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        switch bytes.count {
        case 5: return bytes.allSatisfy(isDigit)
        case 10:
            return bytes[5] == UInt8(ascii: "-") && bytes[..<5].allSatisfy(isDigit) && bytes[6...].allSatisfy(isDigit)
        default: return false
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        // Zero-width (non-)joiners are format characters that emoji sequences and some scripts need.
        if scalar == "\u{200C}" || scalar == "\u{200D}" { return false }
        return switch scalar.properties.generalCategory {
        case .control, .format, .unassigned, .privateUse, .surrogate, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    private static func containsControlCharacters(_ text: String, allowingNewlines: Bool) -> Bool {
        text.unicodeScalars.contains { scalar in
            if allowingNewlines, scalar == "\n" || scalar == "\r" || scalar == "\t" { return false }
            return isControl(scalar)
        }
    }
}
