public import Foundation
public import SkiffDomain

/// The rules of a listing's life, as pure functions over values: every ``ListingsStore`` backend loads what
/// a function needs, calls it inside its transaction (or critical section) and saves what it returns, so
/// all backends decide alike.
///
/// Each function checks its rules in the order ``ListingsStore`` documents and throws the values in
/// ``ListingsStoreError``. A store only loads (the listing or `nil`, the owners of the images named, whether
/// an id is taken, a count) and saves; it decides nothing itself.
public enum ListingLifecycle {
    /// An earlier `createListing` by the same seller with the same request id, as the store found it.
    public struct EarlierRequest: Hashable, Sendable {
        /// The ``ListingFields/fingerprint`` of the fields that request was made with.
        public var fingerprint: String
        /// The listing it created, or `nil` if that listing no longer exists.
        public var listing: Listing?

        /// Creates the record of an earlier request.
        public init(fingerprint: String, listing: Listing?) {
            self.fingerprint = fingerprint
            self.listing = listing
        }
    }

    /// A request id for the store to remember with a new listing, so that a retry finds it.
    public struct RequestRecord: Hashable, Sendable {
        /// The seller who sent the request.
        public var sellerID: String
        /// The seller's request id.
        public var requestID: String
        /// The listing the request created.
        public var listingID: String
        /// The ``ListingFields/fingerprint`` of the fields it was made with.
        public var fingerprint: String

        /// Creates a request record.
        public init(sellerID: String, requestID: String, listingID: String, fingerprint: String) {
            self.sellerID = sellerID
            self.requestID = requestID
            self.listingID = listingID
            self.fingerprint = fingerprint
        }
    }

    /// The result of ``create(_:requestID:earlierRequest:imageOwners:listingIDTaken:)``.
    public enum Creation: Hashable, Sendable {
        /// A retry: the listing created the first time; nothing changes.
        case retry(Listing)
        /// A new listing to insert (dates rounded), and the request id to remember with it, if any.
        case create(Listing, request: RequestRecord?)
    }

    /// A change to save: the listing after it and the change event to record.
    ///
    /// `event` is `nil` exactly when nothing changes: the store then writes nothing and returns `listing`
    /// as it was loaded.
    public struct Change: Hashable, Sendable {
        /// The listing after the change.
        public var listing: Listing
        /// The change event to number and record, or `nil` when nothing changes.
        public var event: ListingChangeDraft?

        /// Creates a change.
        public init(listing: Listing, event: ListingChangeDraft?) {
            self.listing = listing
            self.event = event
        }
    }

    /// The result of ``save(_:savedAt:savedCount:limit:now:)``.
    public enum Saving: Hashable, Sendable {
        /// Saved before: the first save is kept; nothing changes.
        case kept(SavedListing)
        /// A new saved listing to insert.
        case save(SavedListing)
    }

    // MARK: Listings

    /// Decides a new listing.
    ///
    /// - Parameters:
    ///   - listing: The listing asked for.
    ///   - requestID: The seller's request id, if any.
    ///   - earlierRequest: The seller's earlier request with `requestID`, if any (always `nil` without one).
    ///   - imageOwners: The uploader of each of the listing's images that exists, by image id.
    ///   - listingIDTaken: Whether a listing with the listing's id exists.
    /// - Returns: A retry of the earlier request, or the listing (dates rounded to milliseconds) to insert.
    /// - Throws: `alreadyExists` (``ListingsStoreError/requestIDReused``) if `requestID` was used for
    ///   different fields (or its listing is gone); for each image id in order, `notFound` if it does not
    ///   exist or `permissionDenied` if someone else uploaded it; `alreadyExists`
    ///   (``ListingsStoreError/listingIDTaken``) if the listing id is taken.
    public static func create(
        _ listing: Listing,
        requestID: String?,
        earlierRequest: EarlierRequest?,
        imageOwners: [String: String],
        listingIDTaken: Bool
    ) throws(DomainError) -> Creation {
        try create(
            NewListing(listing),
            requestID: requestID,
            earlierRequest: earlierRequest,
            imageOwners: imageOwners,
            listingIDTaken: listingIDTaken
        )
    }

    /// A listing asked for, as it would be stored, with the fingerprint of its fields: the part of
    /// ``create(_:requestID:earlierRequest:imageOwners:listingIDTaken:)`` that needs nothing stored, so a
    /// store can work it out before its transaction and keep the transaction short.
    public struct NewListing: Hashable, Sendable {
        /// The listing with its dates rounded to milliseconds.
        public let listing: Listing
        /// The ``ListingFields/fingerprint`` of its fields.
        public let fingerprint: String

        /// Works out the listing to store for `listing`, and its fingerprint.
        public init(_ listing: Listing) {
            self.listing = listing.rounded
            self.fingerprint = self.listing.fields.fingerprint
        }
    }

    /// Decides a new listing worked out beforehand (``NewListing``); the same decision as
    /// ``create(_:requestID:earlierRequest:imageOwners:listingIDTaken:)``.
    public static func create(
        _ new: NewListing,
        requestID: String?,
        earlierRequest: EarlierRequest?,
        imageOwners: [String: String],
        listingIDTaken: Bool
    ) throws(DomainError) -> Creation {
        let stored = new.listing
        let fingerprint = new.fingerprint
        if let earlier = earlierRequest {
            // A fingerprint kept before they were hashed is the fields' canonical text.
            let same =
                earlier.fingerprint == fingerprint
                || (!earlier.fingerprint.hasPrefix(ListingFields.fingerprintPrefix)
                    && earlier.fingerprint == stored.fields.canonicalText)
            guard same, let existing = earlier.listing else {
                throw ListingsStoreError.requestIDReused
            }
            return .retry(existing)
        }
        try checkImages(stored.imageIDs, ownerID: stored.sellerID, owners: imageOwners)
        guard !listingIDTaken else { throw ListingsStoreError.listingIDTaken }
        let request = requestID.map {
            RequestRecord(sellerID: stored.sellerID, requestID: $0, listingID: stored.id, fingerprint: fingerprint)
        }
        return .create(stored, request: request)
    }

    /// Decides an update of a listing's fields by `sellerID`.
    ///
    /// - Parameters:
    ///   - listing: The listing as stored, or `nil` if there is none.
    ///   - sellerID: The caller.
    ///   - changes: The validated changes.
    ///   - imageOwners: The uploader of each image in `changes.imageIDs` that exists, by image id.
    /// - Returns: The updated listing and its event: `priceChanged` if the price changed, else `updated`;
    ///   no event (nothing to save) when the fields stay as they are.
    /// - Throws: `notFound`; `permissionDenied` if the seller is someone else; `failedPrecondition` if the
    ///   listing is not active; image errors as in ``create(_:requestID:earlierRequest:imageOwners:listingIDTaken:)``.
    public static func update(
        _ listing: Listing?,
        sellerID: String,
        changes: ListingChanges,
        imageOwners: [String: String],
        now: Date
    ) throws(DomainError) -> Change {
        guard var listing else { throw ListingsStoreError.listingNotFound }
        guard listing.sellerID == sellerID else { throw ListingsStoreError.notSeller }
        guard listing.status == .active else { throw ListingsStoreError.notActive }
        if let imageIDs = changes.imageIDs { try checkImages(imageIDs, ownerID: sellerID, owners: imageOwners) }
        let fields = changes.applied(to: listing.fields)
        guard fields != listing.fields else { return Change(listing: listing, event: nil) }
        let oldPrice = listing.priceCents
        listing.fields = fields
        listing.updatedAt = now.roundedToMilliseconds
        let kind: ListingChangeKind = fields.priceCents != oldPrice ? .priceChanged : .updated
        return Change(listing: listing, event: ListingChangeDraft(listing, kind: kind, oldPriceCents: oldPrice))
    }

    /// Decides a move of a listing to `sold` or `withdrawn`.
    ///
    /// Exactly-once: only a listing found active transitions (with an event); asking again for the status
    /// it already has changes nothing.
    ///
    /// - Parameters:
    ///   - listing: The listing as stored, or `nil` if there is none.
    ///   - status: `sold` or `withdrawn`.
    ///   - actor: Who asks: a seller must be the listing's own.
    /// - Precondition: `status` is not `active`.
    /// - Throws: `notFound`; `permissionDenied` when `actor` is another seller; `failedPrecondition`
    ///   (``ListingsStoreError/alreadySold`` or ``ListingsStoreError/alreadyWithdrawn``) when the listing
    ///   has the other final status.
    public static func setStatus(
        _ listing: Listing?,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) throws(DomainError) -> Change {
        precondition(status != .active, "setStatus moves a listing to sold or withdrawn")
        guard var listing else { throw ListingsStoreError.listingNotFound }
        if case .seller(let sellerID) = actor, listing.sellerID != sellerID { throw ListingsStoreError.notSeller }
        switch (listing.status, status) {
        case (.active, _):
            listing.status = status
            listing.updatedAt = now.roundedToMilliseconds
            let kind: ListingChangeKind = status == .sold ? .sold : .withdrawn
            return Change(
                listing: listing,
                event: ListingChangeDraft(listing, kind: kind, oldPriceCents: listing.priceCents)
            )
        case (.sold, .sold), (.withdrawn, .withdrawn):
            return Change(listing: listing, event: nil)
        case (.sold, _):
            throw ListingsStoreError.alreadySold
        default:
            throw ListingsStoreError.alreadyWithdrawn
        }
    }

    // MARK: Images

    /// Decides the storing of an uploaded image.
    ///
    /// - Parameter imageIDTaken: Whether an image with the image's id exists.
    /// - Returns: The image to insert, its upload time rounded to milliseconds.
    /// - Throws: `alreadyExists` (``ListingsStoreError/imageIDTaken``) if the id is taken.
    public static func putImage(_ image: StoredImage, imageIDTaken: Bool) throws(DomainError) -> StoredImage {
        guard !imageIDTaken else { throw ListingsStoreError.imageIDTaken }
        var stored = image
        stored.createdAt = image.createdAt.roundedToMilliseconds
        return stored
    }

    // MARK: Saved listings

    /// Decides the saving of a listing by a user.
    ///
    /// - Parameters:
    ///   - listing: The listing as stored, or `nil` if there is none.
    ///   - savedAt: When the user saved it, if they have.
    ///   - savedCount: How many listings the user has saved.
    ///   - limit: The most listings a user may save.
    /// - Returns: The first save, kept, if the user saved the listing before; else the new save.
    /// - Throws: `notFound`; `failedPrecondition` if the listing is not active (unless saved before);
    ///   `resourceExhausted` if the user already saved `limit` listings.
    public static func save(
        _ listing: Listing?,
        savedAt: Date?,
        savedCount: Int,
        limit: Int,
        now: Date
    ) throws(DomainError) -> Saving {
        guard let listing else { throw ListingsStoreError.listingNotFound }
        if let savedAt { return .kept(SavedListing(listing: listing, savedAt: savedAt)) }
        guard listing.status == .active else { throw ListingsStoreError.notActive }
        guard savedCount < limit else { throw ListingsStoreError.savedLimit }
        return .save(SavedListing(listing: listing, savedAt: now.roundedToMilliseconds))
    }

    // MARK: Helpers

    /// Checks, in order, that each image exists and that `ownerID` uploaded it.
    private static func checkImages(
        _ ids: [String],
        ownerID: String,
        owners: [String: String]
    ) throws(DomainError) {
        for id in ids {
            guard let owner = owners[id] else { throw ListingsStoreError.imageNotFound(id) }
            guard owner == ownerID else { throw ListingsStoreError.imageNotOwned(id) }
        }
    }
}
