public import Foundation

/// What happened to a listing, for the users who saved it.
public enum ListingChangeKind: String, CaseIterable, Codable, Hashable, Sendable {
    case priceChanged = "price_changed"
    case sold
    case withdrawn
    case updated
}

/// One change to a listing, recorded by the store in the same transaction as the change itself.
///
/// Sequence numbers start at 1 and grow by one per change across all listings, so a watcher resumes
/// exactly after the last change it received.
public struct ListingChangeEvent: Hashable, Sendable {
    /// The position in the store's change log (1, 2, 3, …).
    public var sequence: Int64
    public var listingID: String
    /// The listing's title after the change.
    public var title: String
    public var kind: ListingChangeKind
    /// The price after the change.
    public var newPriceCents: Int64
    /// The price before the change (equal to ``newPriceCents`` unless the kind is `priceChanged`).
    public var oldPriceCents: Int64
    public var changedAt: Date

    public init(
        sequence: Int64,
        listingID: String,
        title: String,
        kind: ListingChangeKind,
        newPriceCents: Int64,
        oldPriceCents: Int64,
        changedAt: Date
    ) {
        self.sequence = sequence
        self.listingID = listingID
        self.title = title
        self.kind = kind
        self.newPriceCents = newPriceCents
        self.oldPriceCents = oldPriceCents
        self.changedAt = changedAt
    }
}

/// A change event decided by ``ListingLifecycle``, before the store numbers it.
public struct ListingChangeDraft: Hashable, Sendable {
    public var listingID: String
    /// The listing's title after the change.
    public var title: String
    public var kind: ListingChangeKind
    /// The price after the change.
    public var newPriceCents: Int64
    /// The price before the change.
    public var oldPriceCents: Int64
    /// When the change was made (the listing's new `updatedAt`).
    public var changedAt: Date

    /// Creates the draft of a change to `listing` (as it is after the change).
    public init(_ listing: Listing, kind: ListingChangeKind, oldPriceCents: Int64) {
        self.listingID = listing.id
        self.title = listing.title
        self.kind = kind
        self.newPriceCents = listing.priceCents
        self.oldPriceCents = oldPriceCents
        self.changedAt = listing.updatedAt
    }

    /// The event with its place in the change log.
    public func numbered(_ sequence: Int64) -> ListingChangeEvent {
        ListingChangeEvent(
            sequence: sequence,
            listingID: listingID,
            title: title,
            kind: kind,
            newPriceCents: newPriceCents,
            oldPriceCents: oldPriceCents,
            changedAt: changedAt
        )
    }
}

/// The result of an update: the listing after it, and the change recorded (`nil` if nothing changed).
public struct ListingUpdate: Hashable, Sendable {
    public var listing: Listing
    public var event: ListingChangeEvent?

    public init(listing: Listing, event: ListingChangeEvent?) {
        self.listing = listing
        self.event = event
    }
}

/// The result of a status change: the listing after it, and whether this call made the transition.
///
/// `event` is non-`nil` exactly when ``transitioned`` is true. Two racing `markSold` calls on one active
/// listing both succeed, but only one of them sees `transitioned == true` (Bids relies on that).
public struct StatusTransition: Hashable, Sendable {
    public var listing: Listing
    public var event: ListingChangeEvent?

    public init(listing: Listing, event: ListingChangeEvent?) {
        self.listing = listing
        self.event = event
    }

    /// Whether this call moved the listing out of `active`.
    public var transitioned: Bool { event != nil }
}

/// Who asks for a status change.
public enum StatusActor: Hashable, Sendable {
    /// The seller, through the Listings API: someone else gets `permissionDenied`.
    case seller(String)
    /// Another service (Bids accepting a bid): no ownership check.
    case system
}

/// A listing in a user's saved items.
public struct SavedListing: Hashable, Sendable {
    public var listing: Listing
    /// When the user saved it.
    public var savedAt: Date

    public init(listing: Listing, savedAt: Date) {
        self.listing = listing
        self.savedAt = savedAt
    }
}
