public import Foundation
import SkiffDomain

/// A person's account.
///
/// Not a wire type: the service converts it at its edge and decides which fields a caller may see
/// (the e-mail address, for one, is private to its owner).
public struct Account: Hashable, Sendable {
    /// The account id (`usr_…`, see `EntityID`).
    public var id: String
    /// The e-mail address, normalized (trimmed, lowercase). Unique across accounts.
    public var email: String
    /// The name shown to others (1–50 characters).
    public var displayName: String
    /// A short text about the person (at most 500 characters; may be empty).
    public var bio: String
    /// The id of the profile picture in image storage, if any.
    public var avatarImageID: String?
    /// How buyers pay this person (e.g. a Venmo handle), if given.
    public var paymentHandle: String?
    /// A US ZIP code, if given.
    public var zipCode: String?
    /// The encoded password hash (see ``PasswordHasher``), or ``noPasswordHash`` when no password is set
    /// (an unverified address several sign-ups competed for). Never leaves the server.
    public var passwordHash: String
    /// Whether the person proved they own ``email``.
    public var verified: Bool
    /// When the account was created (stores keep millisecond precision).
    public var createdAt: Date
    /// How many items this person sold through the marketplace.
    public var itemsSold: Int
    /// When the person deleted the account (``AccountLifecycle/deleteAccount(_:now:)``), or `nil`. A deleted
    /// account keeps its id, dates and counts under ``deletedDisplayName``; everything personal is erased.
    public var deletedAt: Date?

    /// Creates an account value.
    public init(
        id: String,
        email: String,
        displayName: String,
        bio: String = "",
        avatarImageID: String? = nil,
        paymentHandle: String? = nil,
        zipCode: String? = nil,
        passwordHash: String,
        verified: Bool = false,
        createdAt: Date,
        itemsSold: Int = 0,
        deletedAt: Date? = nil
    ) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.bio = bio
        self.avatarImageID = avatarImageID
        self.paymentHandle = paymentHandle
        self.zipCode = zipCode
        self.passwordHash = passwordHash
        self.verified = verified
        self.createdAt = createdAt
        self.itemsSold = itemsSold
        self.deletedAt = deletedAt
    }
}

extension Account {
    /// The ``passwordHash`` of an account without a usable password: no password verifies against it.
    public static let noPasswordHash = ""

    /// Whether the account has a password one can log in with.
    public var hasPassword: Bool { passwordHash != Self.noPasswordHash }

    /// The name a deleted account shows.
    public static let deletedDisplayName = "Deleted user"

    /// Whether the person deleted the account.
    public var isDeleted: Bool { deletedAt != nil }

    /// What a deleted account keeps in place of its e-mail address: unique (it spells the id in hex), and
    /// no address (no `@`), so no sign-up, log-in or reset can reach it, and the real address is free.
    public static func erasedEmail(id: String) -> String {
        "deleted:" + id.utf8.map { String($0, radix: 16) }.joined(separator: ".")
    }

    /// The key user search keeps for the account: ``searchKey(_:)`` of the name; empty for a deleted
    /// account, which no search finds.
    public var storedSearchKey: String { isDeleted ? "" : Self.searchKey(displayName) }
}

extension Account: CustomStringConvertible {
    /// A description that leaves out the password hash and the e-mail address, so accounts can be logged.
    public var description: String {
        "Account(id: \(id), displayName: \(displayName), verified: \(verified), itemsSold: \(itemsSold))"
    }
}

/// Changes to a profile. A `nil` field stays as it is.
///
/// For the optional profile fields (``avatarImageID``, ``paymentHandle``, ``zipCode``) an empty string
/// clears the value. Validate with ``AccountRules/validate(_:)`` before handing changes to a store.
public struct ProfileChanges: Hashable, Sendable {
    /// A new display name.
    public var displayName: String?
    /// A new bio; empty clears it.
    public var bio: String?
    /// A new profile picture id; empty removes the picture.
    public var avatarImageID: String?
    /// A new payment handle; empty removes it.
    public var paymentHandle: String?
    /// A new ZIP code; empty removes it.
    public var zipCode: String?

    /// Creates a set of changes.
    public init(
        displayName: String? = nil,
        bio: String? = nil,
        avatarImageID: String? = nil,
        paymentHandle: String? = nil,
        zipCode: String? = nil
    ) {
        self.displayName = displayName
        self.bio = bio
        self.avatarImageID = avatarImageID
        self.paymentHandle = paymentHandle
        self.zipCode = zipCode
    }

    /// Whether there is nothing to change.
    public var isEmpty: Bool {
        displayName == nil && bio == nil && avatarImageID == nil && paymentHandle == nil && zipCode == nil
    }
}

extension Account {
    /// This account with `changes` applied; every store applies changes through this one function.
    public func applying(_ changes: ProfileChanges) -> Account {
        var account = self
        if let displayName = changes.displayName { account.displayName = displayName }
        if let bio = changes.bio { account.bio = bio }
        if let value = changes.avatarImageID { account.avatarImageID = value.isEmpty ? nil : value }
        if let value = changes.paymentHandle { account.paymentHandle = value.isEmpty ? nil : value }
        if let value = changes.zipCode { account.zipCode = value.isEmpty ? nil : value }
        return account
    }

    /// The form of an e-mail address stores compare and keep: trimmed, lowercased, Unicode NFC.
    public static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().precomposedStringWithCanonicalMapping
    }

    /// The key that user search matches and sorts on: the display name folded for case, diacritics and
    /// width, in Unicode NFC. `"José Ñ"` and `"jose n"` have the same key.
    ///
    /// Stores compare keys by their UTF-8 bytes (SQLite's `BINARY` collation), and a query matches when its
    /// key is a byte substring of the name's key, so every backend orders and matches identically.
    public static func searchKey(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
            .precomposedStringWithCanonicalMapping
    }
}
