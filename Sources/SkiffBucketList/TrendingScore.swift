import Foundation
import SkiffDomain

/// The trending formula: net votes, each decaying with its age.
///
/// Every vote cast (or last changed) within the window counts +1 for up and −1 for down, halved for every
/// ``halfLifeHours`` of its age:
///
/// ```
/// score = Σ over votes v in the window of value(v) × 2^(−age_hours(v) / 24)
/// ```
///
/// An up-vote cast just now adds 1, one a day old 0.5, two days old 0.25; a down-vote subtracts the same.
/// Activities are ranked by score (highest first), then newest activity first, then by id. Only positive
/// scores trend. Exponential decay over vote ages (rather than the activity's age, as Hacker News does)
/// lets an old activity trend again when people start voting for it, and makes a score independent of
/// when it is computed up to a common factor: two activities keep their order as time passes until a new
/// vote arrives.
///
/// Votes are summed oldest first, then by voter id, so every backend computes the same `Double`.
public enum TrendingScore {
    /// The age at which a vote counts half, in hours.
    public static let halfLifeHours = 24.0

    /// The weight of a vote of the given age: `2^(−age_hours / 24)`; a vote from the future counts 1.
    public static func weight(ageSeconds: Double) -> Double {
        exp2(-max(0, ageSeconds) / (halfLifeHours * 3600))
    }

    /// The score of an activity from its votes within the window, at `now`.
    ///
    /// `.noVote` votes count 0. Ages are measured at millisecond precision, as stores keep dates.
    public static func score(_ votes: [CastVote], now: Date) -> Double {
        let nowMilliseconds = now.millisecondsSince1970
        let ordered = votes.sorted { lhs, rhs in
            let (left, right) = (lhs.castAt.millisecondsSince1970, rhs.castAt.millisecondsSince1970)
            return left == right ? lhs.userID.utf8.lexicographicallyPrecedes(rhs.userID.utf8) : left < right
        }
        var total = 0.0
        for vote in ordered where vote.vote != .noVote {
            let ageSeconds = Double(nowMilliseconds - vote.castAt.millisecondsSince1970) / 1000
            total += Double(vote.vote.rawValue) * weight(ageSeconds: ageSeconds)
        }
        return total
    }
}
