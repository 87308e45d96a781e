public import Foundation

/// What Accounts needs to know about a sale to accept a rating for it.
public struct SaleSummary: Hashable, Sendable {
    public var id: String
    public var buyerID: String
    public var sellerID: String
    /// When both parties confirmed the hand-off; `nil` while the sale is not completed.
    public var completedAt: Date?

    public init(id: String, buyerID: String, sellerID: String, completedAt: Date?) {
        self.id = id
        self.buyerID = buyerID
        self.sellerID = sellerID
        self.completedAt = completedAt
    }
}

/// Looks sales up; the Bids service provides it (in process, or through its typed client).
public protocol SaleDirectory: Sendable {
    /// The sale, or `nil` when there is no sale with that id.
    func sale(id: String) async throws -> SaleSummary?
}

/// A directory with no sales, for a server that runs Accounts without Bids.
public struct NoSales: SaleDirectory {
    public init() {}
    public func sale(id: String) async throws -> SaleSummary? { nil }
}

/// The users someone blocked; the Chat service provides it. Accounts leaves them out of that
/// person's user search.
public protocol BlockedUserDirectory: Sendable {
    /// The ids of the users `userID` blocked. Called on behalf of `userID`.
    func blockedUserIDs(of userID: String) async throws -> Set<String>
}

/// No blocks, for a server that runs Accounts without Chat.
public struct NoBlockedUsers: BlockedUserDirectory {
    public init() {}
    public func blockedUserIDs(of userID: String) async throws -> Set<String> { [] }
}

/// Who uploaded images; the Listings service provides it (images are uploaded with
/// skiff.listings.v1.Listings.UploadImage). Accounts accepts only the caller's own images as a profile picture.
public protocol ImageDirectory: Sendable {
    /// The id of the user who uploaded the image, or `nil` when there is no image with that id.
    func ownerOfImage(id: String) async throws -> String?
}

/// A directory with no images, for a server that runs Accounts without Listings: every avatar image id is
/// unknown (NOT_FOUND), and a profile picture can only be cleared.
public struct NoImages: ImageDirectory {
    public init() {}
    public func ownerOfImage(id: String) async throws -> String? { nil }
}
