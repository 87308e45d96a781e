import Foundation

/// A buyer's rating of a seller after a completed sale. One rating per sale.
public struct Rating: Hashable, Sendable {
    /// The sale rated; unique, so a sale can be rated once.
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

    /// Creates a rating value.
    public init(saleID: String, sellerID: String, buyerID: String, stars: Int, comment: String = "", createdAt: Date) {
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
