import Foundation
import SkiffDomain
import Testing

@testable import SkiffBucketList

/// The stored trending bound (a logarithm of `Σ 2^(tᵢ/24 h)` over up-votes) and the top-k walk that uses it.
@Suite("Trending bound")
struct TrendingBoundTests {
    static let now = Date(millisecondsSince1970: 1_767_225_600_000)

    @Test("The bound is log2 of the sum of 2^(t/24 h), built one up-vote at a time")
    func logarithmOfTheSum() {
        // Near 1970 the powers are small enough to add directly.
        let days = [0.0, 1, 1, 2.5, 0.25, 3]
        var bound: Double?
        for day in days {
            bound = TrendingScore.raisedBound(bound, upVoteAt: Date(timeIntervalSince1970: day * 86_400))
        }
        let direct = log2(days.map { exp2($0) }.reduce(0, +))
        #expect(abs(bound! - direct) < 1e-12)
        #expect(TrendingScore.raisedBound(nil, upVoteAt: Date(timeIntervalSince1970: 86_400)) == 1)
        #expect(abs(TrendingScore.logSum(10, 10) - 11) < 1e-12)
        #expect(abs(TrendingScore.logSum(-3, 5) - TrendingScore.logSum(5, -3)) == 0)
    }

    @Test("No overflow and no rebasing: the bound stays finite and exact in 2026 and in the year 3000")
    func noOverflow() {
        for date in [Self.now, Date(timeIntervalSince1970: 32_503_680_000)] {  // 1 Jan 3000
            var bound: Double?
            for _ in 0..<1_000 { bound = TrendingScore.raisedBound(bound, upVoteAt: date) }
            // 1,000 votes at one instant: log2(1000 · 2^x) = x + log2(1000).
            let exponent = date.timeIntervalSince1970 / 86_400
            #expect(bound!.isFinite)
            #expect(abs(bound! - (exponent + log2(1_000))) < 1e-6)
            // One vote at that instant scores at most 1 then (the margin aside), 1000 at most 1000.
            let maximum = TrendingScore.maximumScore(bound: bound!, now: date)
            #expect(maximum >= 1_000 && maximum < 1_000.001)
        }
    }

    @Test("The bound is never below any score the votes can give, in any window, at any later time")
    func boundsEveryScore() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var votes: [CastVote] = []
            var bound: Double?
            for index in 0..<Int.random(in: 1...30, using: &random) {
                let castAt = Self.now.addingTimeInterval(-Double.random(in: 0...(40 * 86_400), using: &random))
                let vote: Vote = Bool.random(using: &random) ? .up : .down
                votes.append(CastVote(userID: "usr_\(index)", vote: vote, castAt: castAt))
                if vote == .up { bound = TrendingScore.raisedBound(bound, upVoteAt: castAt) }
            }
            guard let bound else { continue }
            let now = Self.now.addingTimeInterval(Double.random(in: 0...(5 * 86_400), using: &random))
            let since = now.addingTimeInterval(-Double(Int.random(in: 1...720, using: &random)) * 3600)
            let score = TrendingScore.score(votes.filter { $0.castAt >= since }, now: now)
            #expect(TrendingScore.maximumScore(bound: bound, now: now) >= score)
        }
    }

    @Test("Walking by bound finds exactly the top results of scoring every activity, touching fewer")
    func topMatchesBruteForce() throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var candidates: [(activity: Activity, votes: [CastVote])] = []
            var bounds: [String: Double] = [:]
            for index in 0..<Int.random(in: 0...120, using: &random) {
                let activity = Activity(
                    id: "act_\(round)_\(index)",
                    ownerID: "usr_o",
                    fields: ActivityFields(
                        title: "A",
                        place: Place(
                            name: "P",
                            point: Coordinate(
                                latitude: 36.1 + Double.random(in: -0.1...0.1, using: &random),
                                longitude: -86.8 + Double.random(in: -0.1...0.1, using: &random)
                            )
                        )
                    ),
                    createdAt: Self.now.addingTimeInterval(-Double(Int.random(in: 0...5, using: &random)) * 86_400)
                )
                var votes: [CastVote] = []
                for voter in 0..<Int.random(in: 0...12, using: &random) {
                    // Whole hours, so that equal scores (ties broken by age, then id) happen.
                    let castAt = Self.now.addingTimeInterval(
                        -Double(Int.random(in: 0...(20 * 24), using: &random)) * 3600
                    )
                    let vote: Vote = Int.random(in: 0..<4, using: &random) == 0 ? .down : .up
                    votes.append(CastVote(userID: "usr_\(voter)", vote: vote, castAt: castAt))
                    if vote == .up {
                        bounds[activity.id] = TrendingScore.raisedBound(bounds[activity.id], upVoteAt: castAt)
                    }
                }
                candidates.append((activity, votes))
            }
            let query = TrendingQuery(
                center: Bool.random(using: &random) ? Coordinate(latitude: 36.1, longitude: -86.8) : nil,
                radiusKm: Double.random(in: 1...15, using: &random),
                since: Self.now.addingTimeInterval(-Double(Int.random(in: 1...500, using: &random)) * 3600),
                now: Self.now,
                limit: Int.random(in: 1...10, using: &random)
            )
            let expected = ActivityRanking.trending(candidates, query)
            let byID = Dictionary(uniqueKeysWithValues: candidates.map { ($0.activity.id, $0) })
            var ordered = bounds.map { (id: $0.key, bound: $0.value) }
            ordered.sort { $0.bound != $1.bound ? $0.bound > $1.bound : $0.id < $1.id }
            var offset = 0
            var scored = 0
            let batch = Int.random(in: 1...8, using: &random)
            let found = ActivityRanking.trendingTop(query) {
                defer { offset += batch }
                return Array(ordered.dropFirst(offset).prefix(batch))
            } score: { ids in
                scored += ids.count
                return ids.compactMap { id in
                    byID[id].flatMap { ActivityRanking.trendingHit($0.activity, votes: $0.votes, query) }
                }
            }
            #expect(found == expected, "round \(round)")
            #expect(scored <= ordered.count)
        }
    }
}
