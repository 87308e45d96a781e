public import Foundation

/// A user's vote on an activity.
public enum Vote: Int, CaseIterable, Codable, Hashable, Sendable {
    /// A down-vote, counting −1.
    case down = -1
    /// No vote (also: clear the vote).
    case noVote = 0
    /// An up-vote, counting +1.
    case up = 1
}

/// One vote as the trending formula sees it: its value and when it was cast or last changed.
public struct CastVote: Hashable, Sendable {
    /// The voter.
    public var userID: String
    /// `.up` or `.down`.
    public var vote: Vote
    /// When it was cast or last changed.
    public var castAt: Date

    /// Creates a cast vote.
    public init(userID: String, vote: Vote, castAt: Date) {
        self.userID = userID
        self.vote = vote
        self.castAt = castAt
    }
}
