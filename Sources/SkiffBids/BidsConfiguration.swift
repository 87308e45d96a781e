public import SkiffDomain

/// Settings of the Bids service.
public struct BidsConfiguration: Hashable, Sendable {
    /// Bids one user may place (PlaceBid; a retry with the `request_id` of a placed bid is not counted);
    /// `nil` for no limit. Default: 60 per 10 minutes — a bidding war, not a script.
    public var placeBidLimit: RateLimit? = RateLimit(60, per: .seconds(600))
    /// ConfirmHandoff calls naming a hand-off place one user may make (each may tell the other party);
    /// `nil` for no limit. Default: 20 per 10 minutes.
    public var handoffPlaceLimit: RateLimit? = RateLimit(20, per: .seconds(600))
    /// The campus meeting points buyer and seller can pick for a hand-off, in the order shown
    /// (checked by ``HandoffPlaces/validate(_:)``, at most ``HandoffPlaces/maximumCount``). Default:
    /// none.
    public var handoffPlaces: [HandoffPlace] = []

    public init() {}

    /// The defaults.
    public static var defaults: BidsConfiguration { BidsConfiguration() }

    /// Multiplies every per-user rate limit by `factor`; 0 turns them all off (load tests).
    public mutating func scaleRateLimits(by factor: Double) {
        placeBidLimit = placeBidLimit?.scaled(by: factor)
        handoffPlaceLimit = handoffPlaceLimit?.scaled(by: factor)
    }
}
