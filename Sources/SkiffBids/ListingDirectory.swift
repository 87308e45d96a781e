public import SkiffDomain

/// A listing's category, as Bids needs it (for the sustainability impact of a sale).
public enum ItemCategory: String, CaseIterable, Hashable, Sendable, Codable {
    case clothing, shoes, accessories, electronics, books, furniture, tickets, other
}

/// A listing's status, as Bids needs it.
public enum ListingStatus: String, CaseIterable, Hashable, Sendable, Codable {
    /// For sale: open for bids.
    case active
    /// Sold. Final.
    case sold
    /// Taken off the market by the seller. Final.
    case withdrawn
}

/// What Bids needs to know about a listing, read from the Listings service.
public struct ListingSnapshot: Hashable, Sendable {
    /// The listing's id.
    public var id: String
    /// The seller's user id (always known to Bids, even for anonymous listings).
    public var sellerID: String
    /// The title.
    public var title: String
    /// The asking price in cents: the lowest bid accepted.
    public var priceCents: Int64
    /// The category.
    public var category: ItemCategory
    /// Whether the seller takes bids.
    public var biddingEnabled: Bool
    /// Whether it is for sale.
    public var status: ListingStatus

    /// Creates a snapshot.
    public init(
        id: String,
        sellerID: String,
        title: String,
        priceCents: Int64,
        category: ItemCategory,
        biddingEnabled: Bool,
        status: ListingStatus
    ) {
        self.id = id
        self.sellerID = sellerID
        self.title = title
        self.priceCents = priceCents
        self.category = category
        self.biddingEnabled = biddingEnabled
        self.status = status
    }
}

/// How Bids reads listings and marks them sold; implemented over the Listings typed client.
///
/// ## Implementation requirements
/// ``markSold(listingID:buyerID:)`` must be atomic in Listings: of concurrent calls on one active
/// listing exactly one succeeds, and every other call (and any call on a listing that is not active)
/// throws. Throw ``ListingDirectoryError/notActive`` (or any error with code FAILED_PRECONDITION,
/// NOT_FOUND or ABORTED, e.g. the `RPCError` of the Listings client) for that lost race; Bids then
/// answers FAILED_PRECONDITION. Any other error is passed on as an internal failure.
public protocol ListingDirectory: Sendable {
    /// The listing, or `nil` when there is no listing with that id.
    func listing(id: String) async throws -> ListingSnapshot?

    /// Marks an active listing sold to `buyerID`.
    ///
    /// - Throws: ``ListingDirectoryError/notActive`` (or an equivalent, see the type's requirements) when
    ///   the listing is not active, including when a concurrent call marked it sold first.
    func markSold(listingID: String, buyerID: String) async throws
}

/// The errors a ``ListingDirectory`` throws for the outcomes Bids acts on.
public enum ListingDirectoryError {
    /// The listing is not active (sold, withdrawn, or a concurrent `markSold` won).
    public static let notActive = DomainError(.failedPrecondition, "The listing is no longer for sale.")
}

/// Opens the conversation between buyer and seller when a bid is accepted; implemented over the Chat
/// typed client.
public protocol ConversationOpener: Sendable {
    /// Opens (or returns the existing) conversation between the two users about a listing.
    ///
    /// - Returns: The conversation id.
    func openConversation(buyerID: String, sellerID: String, listingID: String) async throws -> String
}

/// Looks up the payment handle a buyer uses to pay a seller; implemented over Accounts.
public protocol PaymentHandleDirectory: Sendable {
    /// The user's payment handle, or `nil` when they have none.
    func paymentHandle(userID: String) async throws -> String?
}

/// A ``PaymentHandleDirectory`` with no handles, for servers without Accounts and for tests.
public struct NoPaymentHandles: PaymentHandleDirectory {
    public init() {}
    public func paymentHandle(userID: String) async throws -> String? { nil }
}
