public import Foundation
public import SkiffDomain

/// The rules of a bid's life, as pure functions over values: every ``BidsStore`` backend loads what a
/// function needs, calls it inside its transaction and saves what it returns, so all backends decide
/// alike.
///
/// Which error a state gives: a final state the *caller* brought about (or that is simply wrong for the
/// action) is FAILED_PRECONDITION; a state the *other party* (or another acceptance) brought about is
/// ABORTED — a concurrent change won a race, so re-read. A bid under an acceptance claim is ABORTED for
/// every other change.
public enum BidLifecycle {
    /// How long an acceptance claim blocks the listing if the accepting call never completes nor
    /// releases it (e.g. the process stopped); after that another acceptance may claim it.
    public static let claimLifetime: TimeInterval = 120

    /// The result of ``place(_:requestMatch:liveBid:liveBidClaimed:listingSold:now:)``.
    public enum Placement: Hashable, Sendable {
        /// A retry: the bid placed the first time; nothing changes.
        case retry(Bid)
        /// A new bid to insert, the replaced live bid to update, and the events to record.
        case placed(bid: Bid, replaced: Bid?, events: [BidEventDraft])
    }

    /// A change to save: the bids to update and the events to record.
    public struct Change: Hashable, Sendable {
        /// The updated bid.
        public var bid: Bid
        /// The events to record.
        public var events: [BidEventDraft]
    }

    /// Decides a new bid.
    ///
    /// - Parameters:
    ///   - new: The bid asked for.
    ///   - requestMatch: The bidder's bid with the same request id, if any.
    ///   - liveBid: The bidder's live bid on the listing, if any.
    ///   - liveBidClaimed: Whether that live bid is being accepted.
    ///   - listingSold: Whether the listing has a sale.
    /// - Throws: ALREADY_EXISTS for a reused request id; PERMISSION_DENIED on one's own listing;
    ///   FAILED_PRECONDITION when sold; ABORTED when the live bid is being accepted; INVALID_ARGUMENT
    ///   below the minimum (the asking price, and above the live bid).
    public static func place(
        _ new: NewBid,
        requestMatch: Bid?,
        liveBid: Bid?,
        liveBidClaimed: Bool,
        listingSold: Bool,
        now: Date
    ) throws(DomainError) -> Placement {
        if let match = requestMatch {
            guard match.listingID == new.listingID, match.amountCents == new.amountCents else {
                throw BidsStoreError.requestIDReused
            }
            return .retry(match)
        }
        guard new.bidderID != new.sellerID else { throw BidsStoreError.ownListing }
        guard !listingSold else { throw BidsStoreError.listingSold }
        guard !liveBidClaimed else { throw BidsStoreError.acceptanceInProgress }
        let minimum = max(new.askingPriceCents, (liveBid?.amountCents ?? 0) + 1, 1)
        guard new.amountCents >= minimum else { throw BidsStoreError.amountTooLow(minimum: minimum) }
        let bid = Bid(
            id: new.id,
            listingID: new.listingID,
            sellerID: new.sellerID,
            bidderID: new.bidderID,
            amountCents: new.amountCents,
            requestID: new.requestID,
            createdAt: now
        ).rounded
        var events: [BidEventDraft] = []
        var replaced = liveBid
        if var old = replaced {
            old.state = .withdrawn
            old.updatedAt = bid.createdAt
            replaced = old
            events.append(draft(.withdrawn, to: old.sellerID, old))
        }
        events.append(draft(.placed, to: bid.sellerID, bid))
        return .placed(bid: bid, replaced: replaced, events: events)
    }

    /// Decides a withdrawal; `nil` when the bid is withdrawn already (nothing to change).
    public static func withdraw(_ bid: Bid, callerID: String, claimed: Bool, now: Date) throws(DomainError) -> Change? {
        guard callerID == bid.bidderID else { throw BidsStoreError.notYourBid }
        if bid.state == .withdrawn { return nil }
        guard !claimed else { throw BidsStoreError.acceptanceInProgress }
        guard bid.state.isLive else { throw BidsStoreError.wrongState(bid.state, "withdrawn") }
        let updated = touched(bid, .withdrawn, now)
        return Change(bid: updated, events: [draft(.withdrawn, to: bid.sellerID, updated)])
    }

    /// Decides a rejection by the seller.
    public static func reject(
        _ bid: Bid,
        callerID: String,
        reason: String,
        claimed: Bool,
        now: Date
    ) throws(DomainError) -> Change {
        try checkSellerAction(bid, callerID: callerID, claimed: claimed, action: "rejected")
        var updated = touched(bid, .rejected, now)
        updated.rejectionReason = reason
        return Change(bid: updated, events: [draft(.rejected, to: bid.bidderID, updated)])
    }

    /// Decides a counter-offer by the seller.
    public static func counter(
        _ bid: Bid,
        callerID: String,
        amountCents: Int64,
        claimed: Bool,
        now: Date
    ) throws(DomainError) -> Change {
        try checkSellerAction(bid, callerID: callerID, claimed: claimed, action: "countered")
        guard amountCents > bid.amountCents else { throw BidsStoreError.counterTooLow(minimum: bid.amountCents + 1) }
        var updated = touched(bid, .countered, now)
        updated.counterAmountCents = amountCents
        return Change(bid: updated, events: [draft(.countered, to: bid.bidderID, updated, amount: amountCents)])
    }

    /// Decides the bidder's declining of a counter-offer.
    public static func declineCounter(
        _ bid: Bid,
        callerID: String,
        claimed: Bool,
        now: Date
    ) throws(DomainError) -> Change {
        try checkCounterAnswer(bid, callerID: callerID, claimed: claimed)
        let updated = touched(bid, .pending, now)
        return Change(
            bid: updated,
            events: [draft(.counterDeclined, to: bid.sellerID, updated, amount: bid.counterAmountCents)]
        )
    }

    /// Decides an acceptance claim.
    ///
    /// - Parameters:
    ///   - otherClaim: Whether a live (not expired) claim on the listing exists.
    ///   - listingSold: Whether the listing has a sale.
    public static func claim(
        _ bid: Bid,
        callerID: String,
        kind: AcceptanceKind,
        otherClaim: Bool,
        listingSold: Bool,
        now: Date
    ) throws(DomainError) -> AcceptanceClaim {
        switch kind {
        case .bid:
            guard callerID == bid.sellerID else { throw BidsStoreError.notYourListing }
            switch bid.state {
            case .pending: break
            case .countered: throw BidsStoreError.waitsForBidder
            case .accepted, .rejected: throw BidsStoreError.wrongState(bid.state, "accepted")
            case .withdrawn, .superseded: throw BidsStoreError.endedMeanwhile(bid.state)
            }
        case .counter:
            try checkCounterAnswer(bid, callerID: callerID, claimed: false)
        }
        guard !otherClaim else { throw BidsStoreError.acceptanceInProgress }
        guard !listingSold else { throw BidsStoreError.anotherBidAccepted }
        return AcceptanceClaim(bid: bid, kind: kind, claimedAt: now.roundedToMilliseconds)
    }

    /// Decides the completion of a claimed acceptance.
    ///
    /// - Parameters:
    ///   - current: The claimed bid as stored now.
    ///   - claimHeld: Whether the stored claim on the listing is this one's (`true`), absent (`nil`: it
    ///     expired and was released), or another bid's (`false`).
    ///   - listingSold: Whether the listing has a sale.
    ///   - otherLiveBids: The listing's other live bids.
    public static func complete(
        _ claim: AcceptanceClaim,
        current: Bid,
        claimHeld: Bool?,
        listingSold: Bool,
        otherLiveBids: [Bid],
        sale draft: SaleDraft,
        now: Date
    ) throws(DomainError) -> (acceptance: Acceptance, events: [BidEventDraft]) {
        guard claimHeld != false, !listingSold else { throw BidsStoreError.anotherBidAccepted }
        guard current.state == claim.bid.state, current.state.isLive,
            current.amountCents == claim.bid.amountCents, current.counterAmountCents == claim.bid.counterAmountCents
        else { throw BidsStoreError.endedMeanwhile(current.state) }
        let amount = claim.amountCents
        var bid = touched(current, .accepted, now)
        bid.acceptedAmountCents = amount
        bid.saleID = draft.id
        let sale = Sale(
            id: draft.id,
            listingID: bid.listingID,
            listingTitle: draft.listingTitle,
            category: draft.category,
            bidID: bid.id,
            buyerID: bid.bidderID,
            sellerID: bid.sellerID,
            amountCents: amount,
            conversationID: draft.conversationID,
            createdAt: bid.updatedAt
        )
        var events: [BidEventDraft] = []
        switch claim.kind {
        case .bid: events.append(Self.draft(.accepted, to: bid.bidderID, bid, amount: amount, sale: sale.id))
        case .counter: events.append(Self.draft(.counterAccepted, to: bid.sellerID, bid, amount: amount, sale: sale.id))
        }
        var superseded: [Bid] = []
        for other in otherLiveBids.sorted(by: { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) })
        where other.id != bid.id && other.state.isLive {
            let updated = touched(other, .superseded, now)
            superseded.append(updated)
            events.append(Self.draft(.superseded, to: other.bidderID, updated))
        }
        return (Acceptance(bid: bid, sale: sale, superseded: superseded), events)
    }

    /// Decides a hand-off confirmation by `userID`, who may pick the hand-off `place`.
    ///
    /// While the sale waits for the hand-off, a pick of another place (by id) replaces the sale's place
    /// (the latest pick wins, and a party may confirm again just to change it; the other party is
    /// notified); confirming without a place, or with the sale's place, keeps the sale's copy as it is.
    /// Once the sale is completed its place is final: confirming again with the same place or none
    /// succeeds and changes nothing, with another place fails with ``BidsStoreError/handoffPlaceFinal``.
    public static func confirmHandoff(
        _ sale: Sale,
        userID: String,
        place: HandoffPlace? = nil,
        now: Date
    ) throws(DomainError) -> (confirmation: HandoffConfirmation, events: [BidEventDraft]) {
        guard sale.isParty(userID) else { throw BidsStoreError.notAParty }
        let now = now.roundedToMilliseconds
        var updated = sale
        var events: [BidEventDraft] = []
        var placeChanged = false
        if let place, place.id != sale.handoffPlace?.id {
            guard sale.state == .pendingHandoff else { throw BidsStoreError.handoffPlaceFinal }
            updated.handoffPlace = place
            placeChanged = true
        }
        let note = { (kind: BidEvent.Kind, user: String) in
            BidEventDraft(
                userID: user,
                kind: kind,
                bidID: sale.bidID,
                listingID: sale.listingID,
                saleID: sale.id,
                amountCents: sale.amountCents
            )
        }
        if userID == sale.buyerID, updated.buyerConfirmedAt == nil {
            updated.buyerConfirmedAt = now
            events.append(note(.handoffConfirmed, sale.sellerID))
        } else if userID == sale.sellerID, updated.sellerConfirmedAt == nil {
            updated.sellerConfirmedAt = now
            events.append(note(.handoffConfirmed, sale.buyerID))
        } else if placeChanged {
            // A party who had confirmed picked another place: the other is told as on a confirmation.
            events.append(note(.handoffConfirmed, userID == sale.buyerID ? sale.sellerID : sale.buyerID))
        }
        var completedNow = false
        if updated.state == .pendingHandoff, updated.buyerConfirmedAt != nil, updated.sellerConfirmedAt != nil {
            updated.state = .completed
            updated.completedAt = now
            completedNow = true
            events.append(note(.completed, sale.buyerID))
            events.append(note(.completed, sale.sellerID))
        }
        return (HandoffConfirmation(sale: updated, completedNow: completedNow), events)
    }

    /// Decides what closing a listing outside the bid flow (withdrawn, or marked sold by its seller)
    /// does to its bids: every live bid is REJECTED with `reason`, and its bidder notified, except a
    /// bid under an acceptance claim (its acceptance settles it, and the listing's other bids with it).
    /// Nothing changes on a listing sold through an accepted bid.
    ///
    /// - Parameters:
    ///   - liveBids: The listing's PENDING or COUNTERED bids.
    ///   - claimedBidID: The bid under a live acceptance claim, if any.
    ///   - listingSold: Whether the listing has a sale.
    /// - Returns: The changes, ordered by bid id.
    public static func close(
        liveBids: [Bid],
        claimedBidID: String?,
        listingSold: Bool,
        reason: String,
        now: Date
    ) -> [Change] {
        guard !listingSold else { return [] }
        return liveBids.sorted(by: { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) })
            .filter { $0.state.isLive && $0.id != claimedBidID }
            .map { bid in
                var updated = touched(bid, .rejected, now)
                updated.rejectionReason = reason
                return Change(bid: updated, events: [draft(.rejected, to: bid.bidderID, updated)])
            }
    }

    // MARK: Helpers

    private static func checkSellerAction(
        _ bid: Bid,
        callerID: String,
        claimed: Bool,
        action: String
    ) throws(DomainError) {
        guard callerID == bid.sellerID else { throw BidsStoreError.notYourListing }
        switch bid.state {
        case .pending, .countered: break
        case .accepted, .rejected: throw BidsStoreError.wrongState(bid.state, action)
        case .withdrawn, .superseded: throw BidsStoreError.endedMeanwhile(bid.state)
        }
        guard !claimed else { throw BidsStoreError.acceptanceInProgress }
    }

    private static func checkCounterAnswer(_ bid: Bid, callerID: String, claimed: Bool) throws(DomainError) {
        guard callerID == bid.bidderID else { throw BidsStoreError.notYourBid }
        switch bid.state {
        case .countered: break
        case .pending: throw BidsStoreError.noCounterOffer
        case .accepted, .withdrawn: throw BidsStoreError.wrongState(bid.state, "answered")
        case .rejected, .superseded: throw BidsStoreError.endedMeanwhile(bid.state)
        }
        guard !claimed else { throw BidsStoreError.acceptanceInProgress }
    }

    private static func touched(_ bid: Bid, _ state: BidState, _ now: Date) -> Bid {
        var bid = bid
        bid.state = state
        bid.updatedAt = now.roundedToMilliseconds
        return bid
    }

    private static func draft(
        _ kind: BidEvent.Kind,
        to userID: String,
        _ bid: Bid,
        amount: Int64? = nil,
        sale: String? = nil
    ) -> BidEventDraft {
        BidEventDraft(
            userID: userID,
            kind: kind,
            bidID: bid.id,
            listingID: bid.listingID,
            saleID: sale,
            amountCents: amount ?? bid.amountCents
        )
    }
}
