public import Foundation

/// A buyer's rating of a seller after a completed sale. One rating per sale.
public struct Rating: Hashable, Sendable {
    /// The rating's public id: the sale's id for a rating with a name, a random `rat_` id for an anonymous
    /// one (the sale's id would tell the seller who wrote it). Unique; the tie-break of the ratings order.
    public var ratingID: String
    /// The sale rated; unique, so a sale can be rated once. Never shown to others for an anonymous rating.
    public var saleID: String
    /// The seller rated.
    public var sellerID: String
    /// The buyer who rates.
    public var buyerID: String
    /// 1 to 5 stars.
    public var stars: Int
    /// An optional comment (may be empty).
    public var comment: String
    /// When the rating was made.
    public var createdAt: Date
    /// Whether the rating is anonymous: shown without its rater (and without the sale) to anyone but them.
    public var anonymous: Bool

    /// Creates a rating value; `ratingID` defaults to the sale's id (see ``ratingID``).
    public init(
        ratingID: String? = nil,
        saleID: String,
        sellerID: String,
        buyerID: String,
        stars: Int,
        comment: String = "",
        createdAt: Date,
        anonymous: Bool = false
    ) {
        self.ratingID = ratingID ?? saleID
        self.anonymous = anonymous
        self.saleID = saleID
        self.sellerID = sellerID
        self.buyerID = buyerID
        self.stars = stars
        self.comment = comment
        self.createdAt = createdAt
    }
}

/// How a seller is rated overall.
public struct RatingSummary: Hashable, Sendable {
    /// The number of ratings.
    public var count: Int
    /// The sum of all stars.
    public var totalStars: Int

    /// Creates a summary.
    public init(count: Int, totalStars: Int) {
        self.count = count
        self.totalStars = totalStars
    }

    /// The mean number of stars, or `nil` when there are no ratings.
    public var average: Double? {
        count == 0 ? nil : Double(totalStars) / Double(count)
    }
}

/// A report of abusive behaviour, for moderators.
public struct Report: Hashable, Sendable {
    /// The report id (`rep_…`).
    public var id: String
    /// The account that reports.
    public var reporterID: String
    /// The account reported.
    public var reportedID: String
    /// A short reason (e.g. "scam", "harassment").
    public var reason: String
    /// Free-text details (may be empty).
    public var details: String
    /// When the report was made.
    public var createdAt: Date

    /// Creates a report value.
    public init(id: String, reporterID: String, reportedID: String, reason: String, details: String, createdAt: Date) {
        self.id = id
        self.reporterID = reporterID
        self.reportedID = reportedID
        self.reason = reason
        self.details = details
        self.createdAt = createdAt
    }
}
