import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

/// The trending formula with concrete numbers: `Σ value × 2^(−age_hours / 24)` over the window's votes.
@Suite("Trending score")
struct TrendingScoreTests {
    static let now = Date(millisecondsSince1970: 1_767_225_600_000)

    static func vote(_ vote: Vote, hoursAgo: Double, by user: String = "usr_a") -> CastVote {
        CastVote(userID: user, vote: vote, castAt: now.addingTimeInterval(-hoursAgo * 3600))
    }

    @Test("A vote weighs 1 now, 0.5 after a day, 0.25 after two, 0.125 after three")
    func weights() {
        #expect(TrendingScore.weight(ageSeconds: 0) == 1)
        #expect(TrendingScore.weight(ageSeconds: 86_400) == 0.5)
        #expect(TrendingScore.weight(ageSeconds: 2 * 86_400) == 0.25)
        #expect(TrendingScore.weight(ageSeconds: 3 * 86_400) == 0.125)
        #expect(abs(TrendingScore.weight(ageSeconds: 12 * 3600) - 0.707_106_781_186_547_6) < 1e-15)
        // A vote stamped in the future (clock skew) counts as new, never more.
        #expect(TrendingScore.weight(ageSeconds: -3600) == 1)
    }

    @Test("Scores of concrete vote sets")
    func scores() {
        let now = Self.now
        #expect(TrendingScore.score([], now: now) == 0)
        // Three up-votes: now, a day ago, two days ago → 1 + 0.5 + 0.25.
        let three = [
            Self.vote(.up, hoursAgo: 0, by: "usr_a"), Self.vote(.up, hoursAgo: 24, by: "usr_b"),
            Self.vote(.up, hoursAgo: 48, by: "usr_c"),
        ]
        #expect(TrendingScore.score(three, now: now) == 1.75)
        // A fresh down-vote cancels a fresh up-vote; an old up-vote still counts half.
        let mixed = [
            Self.vote(.up, hoursAgo: 0, by: "usr_a"), Self.vote(.down, hoursAgo: 0, by: "usr_b"),
            Self.vote(.up, hoursAgo: 24, by: "usr_c"),
        ]
        #expect(TrendingScore.score(mixed, now: now) == 0.5)
        // Two fresh down-votes and one up-vote: negative.
        let negative = [
            Self.vote(.down, hoursAgo: 0, by: "usr_a"), Self.vote(.down, hoursAgo: 0, by: "usr_b"),
            Self.vote(.up, hoursAgo: 0, by: "usr_c"),
        ]
        #expect(TrendingScore.score(negative, now: now) == -1)
        // .noVote counts nothing.
        #expect(TrendingScore.score([Self.vote(.noVote, hoursAgo: 0)], now: now) == 0)
    }

    @Test("Newer votes beat more, older votes: 2 votes from today beat 3 from three days ago")
    func recencyWins() {
        let fresh = [Self.vote(.up, hoursAgo: 1, by: "usr_a"), Self.vote(.up, hoursAgo: 2, by: "usr_b")]
        let stale = (0..<3).map { Self.vote(.up, hoursAgo: 72, by: "usr_\($0)") }
        let freshScore = TrendingScore.score(fresh, now: Self.now)
        let staleScore = TrendingScore.score(stale, now: Self.now)
        #expect(staleScore == 0.375)
        #expect(freshScore > staleScore)
    }

    @Test("The sum does not depend on the order the votes come in")
    func orderIndependent() {
        var generator = SystemRandomNumberGenerator()
        let votes = (0..<40).map {
            Self.vote(
                Bool.random(using: &generator) ? .up : .down,
                hoursAgo: Double.random(in: 0..<200, using: &generator),
                by: "usr_\($0)"
            )
        }
        let score = TrendingScore.score(votes, now: Self.now)
        #expect(TrendingScore.score(votes.reversed(), now: Self.now) == score)
        #expect(TrendingScore.score(votes.shuffled(using: &generator), now: Self.now) == score)
    }
}
