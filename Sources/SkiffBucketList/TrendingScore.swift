public import Foundation
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

    // MARK: The stored bound

    /// The milliseconds in one half-life.
    static let halfLifeMilliseconds = halfLifeHours * 3_600_000

    /// The stored trending bound of an activity after an up-vote cast at `date`: the base-2 logarithm of
    /// `Σ 2^(tᵢ / 24 h)` over every up-vote ever cast on it (`tᵢ` its time since 1970), `nil` before the
    /// first.
    ///
    /// The decay factors out: a score at `now` is `2^(−now/24 h) · Σ vᵢ·2^(tᵢ/24 h)`, so `2^(bound − now/24 h)`
    /// (``maximumScore(bound:now:)``) bounds every score the activity can have, in any window, from above
    /// (down-votes only lower a score; votes outside the window, or since withdrawn, only loosen the bound).
    /// Stores keep it on the activity, raise it on each up-vote and walk activities by it, highest first,
    /// computing exact scores only until the bound falls below the scores already found
    /// (`ActivityRanking.trendingTop`). Kept as a logarithm, it never overflows (2^(t/24 h)
    /// itself passed `Double.greatestFiniteMagnitude` in 1972), so no epoch ever needs rebasing; a
    /// withdrawn vote is never subtracted (subtracting logarithms loses precision), so the bound never
    /// falls below the truth.
    public static func raisedBound(_ bound: Double?, upVoteAt date: Date) -> Double {
        let exponent = Double(date.millisecondsSince1970) / halfLifeMilliseconds
        guard let bound else { return exponent }
        return logSum(bound, exponent)
    }

    /// `log2(2^a + 2^b)`, computed without forming the powers.
    static func logSum(_ a: Double, _ b: Double) -> Double {
        let (high, low) = a >= b ? (a, b) : (b, a)
        return high + log2(1 + exp2(low - high))
    }

    /// The largest score an activity with this stored bound can have at `now`, with a margin for the
    /// rounding of the logarithms (so it is an upper bound, never just under the truth).
    public static func maximumScore(bound: Double, now: Date) -> Double {
        let exponent = bound - Double(now.millisecondsSince1970) / halfLifeMilliseconds
        return exp2(exponent) * (1 + 1e-9) + 1e-300
    }
}
