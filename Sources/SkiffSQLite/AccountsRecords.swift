import Foundation
import GRDB
import SkiffAccounts
import SkiffDomain

// GRDB records for the Accounts tables (see `SQLiteSchema`, migration "accounts-v1").
// Internal: they never cross the `AccountsStore` protocol. Dates are INTEGER milliseconds since 1970.

struct AccountRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "account"

    var id: String
    var email: String
    var displayName: String
    var displayNameKey: String
    var bio: String
    var avatarImageID: String?
    var paymentHandle: String?
    var zipCode: String?
    var passwordHash: String
    var verified: Bool
    var createdAt: Int64
    var itemsSold: Int
    /// Added by accounts-v6.
    var deletedAt: Int64?

    init(_ account: Account) {
        id = account.id
        email = Account.normalizedEmail(account.email)
        displayName = account.displayName
        displayNameKey = account.storedSearchKey
        bio = account.bio
        avatarImageID = account.avatarImageID
        paymentHandle = account.paymentHandle
        zipCode = account.zipCode
        passwordHash = account.passwordHash
        verified = account.verified
        createdAt = account.createdAt.millisecondsSince1970
        itemsSold = account.itemsSold
        deletedAt = account.deletedAt?.millisecondsSince1970
    }

    /// The account with this address (normalized here), or `nil`.
    static func account(_ db: Database, email: String) throws -> Account? {
        try AccountRecord.filter(Column("email") == Account.normalizedEmail(email)).fetchOne(db)?.account
    }

    var account: Account {
        Account(
            id: id,
            email: email,
            displayName: displayName,
            bio: bio,
            avatarImageID: avatarImageID,
            paymentHandle: paymentHandle,
            zipCode: zipCode,
            passwordHash: passwordHash,
            verified: verified,
            createdAt: Date(millisecondsSince1970: createdAt),
            itemsSold: itemsSold,
            deletedAt: deletedAt.map(Date.init(millisecondsSince1970:))
        )
    }
}

struct SessionRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "session"

    var tokenHash: String
    var accountID: String
    var expiresAt: Int64
    var createdAt: Int64

    init(_ session: Session) {
        tokenHash = session.tokenHash.rawValue
        accountID = session.accountID
        expiresAt = session.expiresAt.millisecondsSince1970
        createdAt = session.createdAt.millisecondsSince1970
    }

    var session: Session {
        Session(
            tokenHash: TokenHash(rawValue: tokenHash),
            accountID: accountID,
            expiresAt: Date(millisecondsSince1970: expiresAt),
            createdAt: Date(millisecondsSince1970: createdAt)
        )
    }
}

struct OneTimeTokenRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "oneTimeToken"

    var tokenHash: String
    var kind: String
    var accountID: String
    var expiresAt: Int64
    var createdAt: Int64
    var usedAt: Int64?
    /// Added by accounts-v3.
    var passwordHash: String?
    /// Added by accounts-v3.
    var displayName: String?
    /// Added by accounts-v6.
    var newEmail: String?

    init(_ token: OneTimeToken) {
        tokenHash = token.tokenHash.rawValue
        kind = token.kind.rawValue
        accountID = token.accountID
        expiresAt = token.expiresAt.millisecondsSince1970
        createdAt = token.createdAt.millisecondsSince1970
        usedAt = token.usedAt?.millisecondsSince1970
        passwordHash = token.passwordHash
        displayName = token.displayName
        newEmail = token.newEmail
    }

    var token: OneTimeToken {
        OneTimeToken(
            tokenHash: TokenHash(rawValue: tokenHash),
            kind: OneTimeToken.Kind(rawValue: kind),
            accountID: accountID,
            expiresAt: Date(millisecondsSince1970: expiresAt),
            createdAt: Date(millisecondsSince1970: createdAt),
            usedAt: usedAt.map(Date.init(millisecondsSince1970:)),
            passwordHash: passwordHash,
            displayName: displayName,
            newEmail: newEmail
        )
    }
}

struct RatingRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "rating"

    var saleID: String
    var sellerID: String
    var buyerID: String
    var stars: Int
    var comment: String
    var createdAt: Int64
    var ratingID: String
    var anonymous: Bool

    init(_ rating: Rating) {
        ratingID = rating.ratingID
        anonymous = rating.anonymous
        saleID = rating.saleID
        sellerID = rating.sellerID
        buyerID = rating.buyerID
        stars = rating.stars
        comment = rating.comment
        createdAt = rating.createdAt.millisecondsSince1970
    }

    var rating: Rating {
        Rating(
            ratingID: ratingID,
            saleID: saleID,
            sellerID: sellerID,
            buyerID: buyerID,
            stars: stars,
            comment: comment,
            createdAt: Date(millisecondsSince1970: createdAt),
            anonymous: anonymous
        )
    }
}

struct ReportRecord: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "report"

    var id: String
    var reporterID: String
    var reportedID: String
    var reason: String
    var details: String
    var createdAt: Int64

    init(_ report: Report) {
        id = report.id
        reporterID = report.reporterID
        reportedID = report.reportedID
        reason = report.reason
        details = report.details
        createdAt = report.createdAt.millisecondsSince1970
    }

    var report: Report {
        Report(
            id: id,
            reporterID: reporterID,
            reportedID: reportedID,
            reason: reason,
            details: details,
            createdAt: Date(millisecondsSince1970: createdAt)
        )
    }
}
