public import Foundation
public import SkiffDomain

/// Persistence for the Listings service: one method per use case, each atomic.
///
/// Every backend (``InMemoryListingsStore``, the SQLite store, the PostgreSQL store) must behave exactly alike,
/// search included; the shared conformance suite in `Tests/SkiffStorageTests` proves it.
///
/// ## Implementation requirements
/// - Each method is one atomic step; concurrent calls behave as if they ran one after another.
/// - Failures are thrown as ``SkiffDomain/DomainError`` with the values in ``ListingsStoreError``, checked in
///   the order documented here; no backend type crosses this protocol.
/// - Dates are kept at millisecond precision; values read back are rounded.
/// - Inputs are validated by ``ListingRules``. Existence, ownership, state, limits, image checks and
///   request-id retries are decided by ``ListingLifecycle``: each write loads what its function needs,
///   calls it inside the transaction and saves what it returns, so a backend only stores and queries.
/// - Search has one definition, `ListingSearchEngine` (matching, the relevance score, distances, order
///   and keyset cursors); each backend answers it from its own indexes — SQLite in one SQL statement per
///   query with the order, cursor and limit inside the engine, the in-memory store with `ListingIndex` —
///   so a page costs what its rows and the index entries touched cost, not the table, and checks each
///   result with `ListingSearchEngine.hit`. The differential test proves both return identical pages.
public protocol ListingsStore: Sendable {
    // MARK: Listings

    /// Stores a new listing.
    ///
    /// With a `requestID`, a repeat by the same seller with the same fields returns the listing created
    /// first instead of a new one.
    ///
    /// - Throws: `alreadyExists` (``ListingsStoreError/requestIDReused``) if the seller used `requestID` for
    ///   different fields; for each image id in order, `notFound` if it does not exist or `permissionDenied`
    ///   if someone else uploaded it; `alreadyExists` if the listing id is taken.
    func createListing(_ listing: Listing, requestID: String?) async throws -> Listing

    /// The listing with this id, in any status, or `nil`.
    func listing(id: String) async throws -> Listing?

    /// Applies changes to an active listing of `sellerID` and records a change event (price changed if the
    /// price changed, else updated; none if nothing changed).
    ///
    /// - Throws: `notFound`; `permissionDenied` if the seller is someone else; `failedPrecondition` if the
    ///   listing is not active; image errors as in ``createListing(_:requestID:)``.
    func updateListing(id: String, sellerID: String, changes: ListingChanges, now: Date) async throws -> ListingUpdate

    /// Moves a listing to `sold` or `withdrawn` and records the change event.
    ///
    /// Exactly-once: only the call that finds the listing active transitions it (and gets the event);
    /// asking again for the status it already has succeeds without an event.
    ///
    /// - Precondition: `status` is not `active`.
    /// - Throws: `notFound`; `permissionDenied` when `actor` is another seller; `failedPrecondition` when the
    ///   listing has the other final status.
    func setStatus(
        id: String,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) async throws
        -> StatusTransition

    /// Searches listings: see ``ListingQuery``. Keyset paging; at most `page.size` results.
    ///
    /// - Throws: `invalidArgument` for a page token that is malformed or belongs to another query.
    func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit>

    /// A seller's listings in the given statuses (all when empty), newest first, then id descending.
    func sellerListings(
        sellerID: String,
        statuses: Set<ListingStatus>,
        page: PageRequest
    ) async throws
        -> Page<Listing>

    // MARK: Images

    /// Stores an image.
    ///
    /// - Throws: `alreadyExists` if the id is taken.
    func putImage(_ image: StoredImage) async throws

    /// The image with this id, bytes included, or `nil`.
    func image(id: String) async throws -> StoredImage?

    /// What is known of an image without its bytes, or `nil`: what a download starts with.
    func imageHeader(id: String) async throws -> ImageHeader?

    /// Up to `length` bytes of an image from `offset` (fewer at its end, none past it), or `nil`
    /// if there is no such image. Downloads read an image piece by piece through this, so a
    /// download waiting for a slow client holds one piece, not the whole file.
    func imageBytes(id: String, offset: Int, length: Int) async throws -> Data?

    /// Deletes the images uploaded before `date` that no listing (in any status) uses and that are not in
    /// `keeping` (e.g. profile pictures): uploads that were never attached, or were taken off their listing
    /// (housekeeping, 24 hours after the upload).
    ///
    /// - Returns: How many images were deleted.
    @discardableResult
    func deleteUnattachedImages(uploadedBefore date: Date, keeping: Set<String>) async throws -> Int

    /// The ids of the images ``deleteUnattachedImages(uploadedBefore:keeping:)`` would delete with nothing
    /// kept, in id order, after `id` (from the start when `nil`), at most `limit`: to page through them
    /// and ask Accounts which are profile pictures.
    func unattachedImageIDs(uploadedBefore date: Date, after id: String?, limit: Int) async throws -> [String]

    // MARK: Saved listings

    /// Saves a listing for a user; saving it again keeps the first `savedAt`.
    ///
    /// - Throws: `notFound`; `failedPrecondition` if the listing is not active;
    ///   `resourceExhausted` if the user already saved `limit` listings.
    func saveListing(userID: String, listingID: String, now: Date, limit: Int) async throws -> SavedListing

    /// Removes a saved listing. Removing one that is not saved is not an error.
    func unsaveListing(userID: String, listingID: String) async throws

    /// A user's saved listings, most recently saved first (then listing id descending), in any status.
    func savedListings(userID: String, page: PageRequest) async throws -> Page<SavedListing>

    /// The users who saved a listing, sorted.
    func savers(listingID: String) async throws -> [String]

    // MARK: Change events

    /// The change events of the listings `userID` has saved, with a sequence above `after`, oldest first.
    func changes(forUser userID: String, after sequence: Int64, limit: Int) async throws -> [ListingChangeEvent]

    /// The change event with this sequence number, or `nil` (never recorded, or pruned).
    func change(sequence: Int64) async throws -> ListingChangeEvent?

    /// Changes to any listing made at or after `date`, by sequence, at most `limit`: what the feed
    /// relay publishes again after a crash between a commit and its publication.
    func changes(since date: Date, limit: Int) async throws -> [ListingChangeEvent]

    /// Deletes change events recorded before `date` (housekeeping; events are kept 7 days).
    @discardableResult
    func pruneChanges(before date: Date) async throws -> Int

    // MARK: Comments

    /// Stores a comment (or the seller's reply to one) as
    /// ``ListingLifecycle/addComment(_:listing:parent:commentCount:latestCommentAt:commentIDTaken:)``
    /// decides, and returns it with who to tell and the listing.
    func addComment(_ comment: ListingComment) async throws -> AddedComment

    /// The comment with this id, or `nil`.
    func comment(id: String) async throws -> ListingComment?

    /// A listing's comments, oldest first (then id ascending); the caller has checked that the viewer may
    /// see the listing.
    ///
    /// - Throws: `invalidArgument` for a page token that is malformed or belongs to another listing.
    func comments(listingID: String, page: PageRequest) async throws -> Page<ListingComment>

    /// Deletes a comment and the replies to it, if `userID` wrote it or sells its listing
    /// (``ListingLifecycle/deleteComment(_:listing:by:)``).
    ///
    /// - Returns: The ids deleted: the comment, then its replies oldest first.
    func deleteComment(id: String, by userID: String) async throws -> [String]

    /// Comments posted at or after `date` that are not deleted, oldest first, at most `limit`: what the
    /// feed relay publishes again after a crash between a commit and its publication.
    func comments(since date: Date, limit: Int) async throws -> [ListingComment]
}

/// A stored comment, with its listing and who to tell.
public struct AddedComment: Hashable, Sendable {
    public var comment: ListingComment
    public var listing: Listing
    public var notices: [ListingCommentNotice]

    public init(comment: ListingComment, listing: Listing, notices: [ListingCommentNotice]) {
        self.comment = comment
        self.listing = listing
        self.notices = notices
    }
}

/// The errors every ``ListingsStore`` throws, so that all backends use the same codes and messages.
public enum ListingsStoreError {
    public static let listingNotFound = DomainError(.notFound, "The listing does not exist.")
    public static let commentsClosed = DomainError(
        .failedPrecondition,
        "The listing is no longer active (sold or withdrawn), so it takes no new comments."
    )
    public static let replyTargetNotFound = DomainError(
        .notFound,
        "reply_to_comment_id is not a comment on this listing (it may have been deleted)."
    )
    public static let notSellerReply = DomainError(
        .permissionDenied,
        "Only the listing's seller can reply to a comment; leave a comment without reply_to_comment_id."
    )
    public static let replyToReply = DomainError(
        .invalidArgument,
        "reply_to_comment_id names a reply: answer the comment it replies to instead."
    )
    public static let tooManyComments = DomainError(
        .failedPrecondition,
        "The listing has \(ListingLifecycle.maximumCommentsPerListing) comments, the most it keeps."
    )
    public static let commentIDTaken = DomainError(.alreadyExists, "A comment with this id already exists.")
    public static let commentNotFound = DomainError(.notFound, "The comment does not exist.")
    public static let notCommentAuthor = DomainError(
        .permissionDenied,
        "Only the comment's author or the listing's seller can delete a comment."
    )
    public static let notSeller = DomainError(.permissionDenied, "Only the listing's seller can change it.")
    public static let notActive = DomainError(
        .failedPrecondition,
        "The listing is no longer active (sold or withdrawn), so it cannot be changed or saved."
    )
    public static let alreadySold = DomainError(.failedPrecondition, "The listing is sold; it cannot be withdrawn.")
    public static let alreadyWithdrawn = DomainError(
        .failedPrecondition,
        "The listing was withdrawn; it cannot be marked sold."
    )
    public static let listingIDTaken = DomainError(.alreadyExists, "A listing with this id already exists.")
    public static let requestIDReused = DomainError(
        .alreadyExists,
        "request_id was already used for a different listing: use a new request_id for a new listing."
    )
    public static let imageIDTaken = DomainError(.alreadyExists, "An image with this id already exists.")
    public static let savedLimit = DomainError(
        .resourceExhausted,
        "You have saved \(ListingRules.maximumSavedListings) listings, the most allowed: unsave some first."
    )

    /// An image id that does not exist.
    public static func imageNotFound(_ id: String) -> DomainError {
        DomainError(.notFound, "image \"\(id)\" does not exist: upload it with UploadImage first.")
    }

    /// An image uploaded by someone else.
    public static func imageNotOwned(_ id: String) -> DomainError {
        DomainError(.permissionDenied, "image \"\(id)\" was uploaded by someone else: use your own images.")
    }
}
