import Foundation
import PostgresNIO
import SkiffAccounts
import SkiffDomain

// How the Accounts values map to rows (see `PostgresSchema.accountsMigrations`). Internal: no
// PostgreSQL type crosses the `AccountsStore` protocol. Instants are bigint milliseconds since 1970.

enum AccountRows {
    /// The columns ``accounts(_:)`` decodes, in its order.
    static let columns = """
        id, email, display_name, bio, avatar_image_id, payment_handle, zip_code, password_hash, verified, \
        created_at, items_sold, deleted_at
        """

    static func accounts(_ rows: PostgresRowSequence) async throws -> [Account] {
        var accounts: [Account] = []
        let decoded = rows.decode(
            (String, String, String, String, String?, String?, String?, String, Bool, Int64, Int, Int64?).self
        )
        for try await (id, email, name, bio, avatar, payment, zip, passwordHash, verified, createdAt, sold, deletedAt)
            in decoded
        {
            accounts.append(
                Account(
                    id: id,
                    email: email,
                    displayName: name,
                    bio: bio,
                    avatarImageID: avatar,
                    paymentHandle: payment,
                    zipCode: zip,
                    passwordHash: passwordHash,
                    verified: verified,
                    createdAt: Date(millisecondsSince1970: createdAt),
                    itemsSold: sold,
                    deletedAt: deletedAt.map(Date.init(millisecondsSince1970:))
                )
            )
        }
        return accounts
    }

    static func insert(_ account: Account) -> PostgresQuery {
        """
        INSERT INTO account (id, email, display_name, display_name_key, bio, avatar_image_id, payment_handle,
            zip_code, password_hash, verified, created_at, items_sold, deleted_at)
        VALUES (\(account.id), \(Account.normalizedEmail(account.email)), \(account.displayName),
            \(account.storedSearchKey), \(account.bio), \(account.avatarImageID), \(account.paymentHandle),
            \(account.zipCode), \(account.passwordHash), \(account.verified),
            \(account.createdAt.millisecondsSince1970), \(account.itemsSold),
            \(account.deletedAt?.millisecondsSince1970))
        """
    }

    static func update(_ account: Account) -> PostgresQuery {
        """
        UPDATE account SET email = \(Account.normalizedEmail(account.email)), display_name = \(account.displayName),
            display_name_key = \(account.storedSearchKey), bio = \(account.bio),
            avatar_image_id = \(account.avatarImageID), payment_handle = \(account.paymentHandle),
            zip_code = \(account.zipCode), password_hash = \(account.passwordHash), verified = \(account.verified),
            created_at = \(account.createdAt.millisecondsSince1970), items_sold = \(account.itemsSold),
            deleted_at = \(account.deletedAt?.millisecondsSince1970)
        WHERE id = \(account.id)
        """
    }
}

enum TokenRows {
    static let columns =
        "token_hash, kind, account_id, expires_at, created_at, used_at, password_hash, display_name, new_email"

    static func tokens(_ rows: PostgresRowSequence) async throws -> [OneTimeToken] {
        var tokens: [OneTimeToken] = []
        let decoded = rows.decode((String, String, String, Int64, Int64, Int64?, String?, String?, String?).self)
        for try await (hash, kind, accountID, expiresAt, createdAt, usedAt, passwordHash, name, newEmail) in decoded {
            tokens.append(
                OneTimeToken(
                    tokenHash: TokenHash(rawValue: hash),
                    kind: OneTimeToken.Kind(rawValue: kind),
                    accountID: accountID,
                    expiresAt: Date(millisecondsSince1970: expiresAt),
                    createdAt: Date(millisecondsSince1970: createdAt),
                    usedAt: usedAt.map(Date.init(millisecondsSince1970:)),
                    passwordHash: passwordHash,
                    displayName: name,
                    newEmail: newEmail
                )
            )
        }
        return tokens
    }

    static func insert(_ token: OneTimeToken) -> PostgresQuery {
        """
        INSERT INTO one_time_token (token_hash, kind, account_id, expires_at, created_at, used_at, password_hash,
            display_name, new_email)
        VALUES (\(token.tokenHash.rawValue), \(token.kind.rawValue), \(token.accountID),
            \(token.expiresAt.millisecondsSince1970), \(token.createdAt.millisecondsSince1970),
            \(token.usedAt?.millisecondsSince1970), \(token.passwordHash), \(token.displayName), \(token.newEmail))
        """
    }
}

enum RatingRows {
    static let columns = "rating_id, sale_id, seller_id, buyer_id, stars, comment, created_at, anonymous"

    static func ratings(_ rows: PostgresRowSequence) async throws -> [Rating] {
        var ratings: [Rating] = []
        for try await (ratingID, saleID, sellerID, buyerID, stars, comment, createdAt, anonymous) in rows.decode(
            (String, String, String, String, Int, String, Int64, Bool).self
        ) {
            ratings.append(
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
            )
        }
        return ratings
    }
}
