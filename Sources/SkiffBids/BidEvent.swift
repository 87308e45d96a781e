public import Foundation
import SkiffDomain
public import SkiffFeed

/// A notification for one user about a bid or a sale, recorded by the store in the same transaction as
/// the change, and numbered per user (1, 2, 3, …) so a live feed can resume after a reconnect with no
/// gaps: replay ``BidsStore/events(userID:afterSequence:limit:)``; live delivery is the users' feed.
public struct BidEvent: Hashable, Sendable {
    /// What happened.
    public enum Kind: String, CaseIterable, Hashable, Sendable, Codable {
        /// To the seller: a bid was placed on their listing.
        case placed
        /// To the bidder: the seller accepted their bid.
        case accepted
        /// To the bidder: the seller rejected their bid.
        case rejected
        /// To the bidder: the seller countered their bid (the amount is the counter-offer).
        case countered
        /// To the seller: a bid was withdrawn (by the bidder, or replaced by their higher bid).
        case withdrawn
        /// To the bidder: another bid on the listing was accepted.
        case superseded
        /// To the seller: the bidder accepted the counter-offer.
        case counterAccepted = "counter_accepted"
        /// To the seller: the bidder declined the counter-offer.
        case counterDeclined = "counter_declined"
        /// To the other party of a sale: one party confirmed the hand-off.
        case handoffConfirmed = "handoff_confirmed"
        /// To both parties: the sale is completed.
        case completed
    }

    /// The user notified.
    public var userID: String
    /// The event's number in the user's feed, from 1, without gaps.
    public var sequence: Int64
    /// What happened.
    public var kind: Kind
    /// The bid concerned.
    public var bidID: String
    /// The listing concerned.
    public var listingID: String
    /// The sale concerned, for acceptances and hand-offs.
    public var saleID: String?
    /// The amount in cents the event is about (bid, counter-offer or sale amount).
    public var amountCents: Int64
    /// When it happened.
    public var createdAt: Date

    /// Creates an event.
    public init(
        userID: String,
        sequence: Int64,
        kind: Kind,
        bidID: String,
        listingID: String,
        saleID: String? = nil,
        amountCents: Int64,
        createdAt: Date
    ) {
        self.userID = userID
        self.sequence = sequence
        self.kind = kind
        self.bidID = bidID
        self.listingID = listingID
        self.saleID = saleID
        self.amountCents = amountCents
        self.createdAt = createdAt
    }
}

/// An event before the store numbers it.
public struct BidEventDraft: Hashable, Sendable {
    public var userID: String
    public var kind: BidEvent.Kind
    public var bidID: String
    public var listingID: String
    public var saleID: String?
    public var amountCents: Int64

    /// Creates a draft.
    public init(
        userID: String,
        kind: BidEvent.Kind,
        bidID: String,
        listingID: String,
        saleID: String? = nil,
        amountCents: Int64
    ) {
        self.userID = userID
        self.kind = kind
        self.bidID = bidID
        self.listingID = listingID
        self.saleID = saleID
        self.amountCents = amountCents
    }

    /// The numbered event.
    public func numbered(_ sequence: Int64, at date: Date) -> BidEvent {
        BidEvent(
            userID: userID,
            sequence: sequence,
            kind: kind,
            bidID: bidID,
            listingID: listingID,
            saleID: saleID,
            amountCents: amountCents,
            createdAt: date
        )
    }
}

/// A store result and the events recorded with it.
public struct Recorded<Value: Sendable>: Sendable {
    /// The result.
    public var value: Value
    /// The events recorded in the same transaction, in order.
    public var events: [BidEvent]

    /// Creates a result.
    public init(_ value: Value, events: [BidEvent]) {
        self.value = value
        self.events = events
    }
}

extension BidEvent {
    /// The event as a live-feed notification, keyed by the user's Bids sequence so that publishing
    /// it again delivers nothing twice.
    public var feedNotification: FeedNotification {
        FeedNotification(
            userID: userID,
            idempotencyKey: "bids:\(sequence)",
            kind: .bid(
                .init(kind: kind.rawValue, bidID: bidID, listingID: listingID, saleID: saleID, amountCents: amountCents)
            ),
            occurredAt: createdAt
        )
    }
}
