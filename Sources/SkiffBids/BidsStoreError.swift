public import SkiffDomain

/// The errors every ``BidsStore`` throws, so that all backends use the same codes and messages.
public enum BidsStoreError {
    /// No bid with the id given.
    public static let bidNotFound = DomainError(.notFound, "The bid does not exist.")
    /// No sale with the id given.
    public static let saleNotFound = DomainError(.notFound, "The sale does not exist.")
    /// The bid id is taken.
    public static let bidIDTaken = DomainError(.alreadyExists, "A bid with this id already exists.")
    /// The sale id is taken.
    public static let saleIDTaken = DomainError(.alreadyExists, "A sale with this id already exists.")
    /// The bidder used the request id before for another bid.
    public static let requestIDReused = DomainError(
        .alreadyExists,
        "request_id was already used for a different bid; use a new request_id for a new bid."
    )
    /// A bid on one's own listing.
    public static let ownListing = DomainError(.permissionDenied, "You cannot bid on your own listing.")
    /// The caller is not the bidder.
    public static let notYourBid = DomainError(.permissionDenied, "Only the bidder can do this with the bid.")
    /// The caller is not the listing's seller.
    public static let notYourListing = DomainError(
        .permissionDenied,
        "Only the listing's seller can accept, reject or counter its bids."
    )
    /// The caller is neither the buyer nor the seller of the sale.
    public static let notAParty = DomainError(
        .permissionDenied,
        "Only the buyer and the seller can see or confirm a sale."
    )
    /// The listing has been sold (through an accepted bid).
    public static let listingSold = DomainError(.failedPrecondition, "The listing is no longer for sale.")
    /// Another acceptance on the listing is under way.
    public static let acceptanceInProgress = DomainError(
        .aborted,
        "A bid on this listing is being accepted right now; reload the listing's bids."
    )
    /// Another bid on the listing was accepted first.
    public static let anotherBidAccepted = DomainError(
        .aborted,
        "Another bid on this listing was accepted first; reload the listing's bids."
    )
    /// The other party ended the bid meanwhile.
    public static func endedMeanwhile(_ state: BidState) -> DomainError {
        DomainError(.aborted, "The bid was \(state.rawValue) meanwhile; reload it.")
    }
    /// The bid's state does not allow the action.
    public static func wrongState(_ state: BidState, _ action: String) -> DomainError {
        DomainError(.failedPrecondition, "The bid is \(state.rawValue), so it cannot be \(action).")
    }
    /// A COUNTERED bid waits for the bidder.
    public static let waitsForBidder = DomainError(
        .failedPrecondition,
        "The bid is countered and waits for the bidder's answer; it cannot be accepted at its own amount."
    )
    /// A completed sale's hand-off place cannot change.
    public static let handoffPlaceFinal = DomainError(
        .failedPrecondition,
        "The sale is completed; its hand-off place can no longer change (confirm without handoff_place_id)."
    )
    /// An id that is not one of the configured hand-off places.
    public static let unknownHandoffPlace = DomainError(
        .notFound,
        "handoff_place_id is not one of the hand-off places; ListHandoffPlaces lists them."
    )
    /// The bid has no counter-offer.
    public static let noCounterOffer = DomainError(.failedPrecondition, "The bid has no counter-offer to answer.")
    /// An amount below the minimum.
    public static func amountTooLow(minimum: Int64) -> DomainError {
        DomainError(.invalidArgument, "amount_cents must be at least \(minimum).")
    }
    /// A counter-offer not above the bid.
    public static func counterTooLow(minimum: Int64) -> DomainError {
        DomainError(
            .invalidArgument,
            "amount_cents must be at least \(minimum), above the bid's amount (to sell at the bid's amount, accept it)."
        )
    }
}
