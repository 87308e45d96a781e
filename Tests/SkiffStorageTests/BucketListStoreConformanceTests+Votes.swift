import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

extension BucketListStoreConformanceTests {
    @Test("One vote per user: up, change to down, repeat, clear; counts follow", arguments: StoreKind.allCases)
    func votes(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Stargazing"))
            await #expect(throws: BucketListStoreError.activityNotFound) {
                _ = try await store.setVote(activityID: "act_missing", userID: F.other, vote: .up, now: F.t0)
            }
            var result = try await store.setVote(activityID: activity.id, userID: "usr_1", vote: .up, now: F.t0)
            #expect((result.upVotes, result.downVotes) == (1, 0))
            result = try await store.setVote(activityID: activity.id, userID: "usr_1", vote: .up, now: F.at(1))
            #expect((result.upVotes, result.downVotes) == (1, 0))
            result = try await store.setVote(activityID: activity.id, userID: "usr_2", vote: .down, now: F.t0)
            #expect((result.upVotes, result.downVotes) == (1, 1))
            result = try await store.setVote(activityID: activity.id, userID: "usr_1", vote: .down, now: F.at(2))
            #expect((result.upVotes, result.downVotes) == (0, 2))
            result = try await store.setVote(activityID: activity.id, userID: "usr_2", vote: .noVote, now: F.at(3))
            #expect((result.upVotes, result.downVotes) == (0, 1))
            result = try await store.setVote(activityID: activity.id, userID: "usr_3", vote: .noVote, now: F.at(3))
            #expect((result.upVotes, result.downVotes) == (0, 1))
            #expect(try await store.activity(id: activity.id) == result)
            let mine = try await store.votes(userID: "usr_1", activityIDs: [activity.id, "act_missing"])
            #expect(mine == [activity.id: .down])
            #expect(try await store.votes(userID: "usr_2", activityIDs: [activity.id]) == [:])
            #expect(try await store.votes(userID: "usr_1", activityIDs: []) == [:])
        }
    }

    @Test("Re-casting the same vote keeps its time for trending", arguments: StoreKind.allCases)
    func sameVoteKeepsTime(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Museum"))
            _ = try await store.setVote(activityID: activity.id, userID: "usr_1", vote: .up, now: F.t0)
            _ = try await store.setVote(activityID: activity.id, userID: "usr_1", vote: .up, now: F.at(86_400))
            let hits = try await store.trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: F.t0, now: F.at(86_400), limit: 5)
            )
            #expect(hits.map(\.score) == [0.5])
        }
    }

    @Test("100 concurrent voters, each voting three times: counts equal the final votes", arguments: StoreKind.allCases)
    func concurrentVoters(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Concert"))
            let id = activity.id
            // Voter i ends with: up when i % 3 == 0, down when i % 3 == 1, none when i % 3 == 2.
            let finals: [Vote] = [.up, .down, .noVote]
            let outcome = await raceBucketList(100) { index in
                let user = "usr_\(index)"
                _ = try await store.setVote(activityID: id, userID: user, vote: .down, now: F.t0)
                _ = try await store.setVote(activityID: id, userID: user, vote: .up, now: F.at(1))
                return try await store.setVote(activityID: id, userID: user, vote: finals[index % 3], now: F.at(2))
            }
            #expect(outcome.errors.isEmpty)
            #expect(outcome.successes.count == 100)
            let stored = try #require(try await store.activity(id: id))
            #expect(stored.upVotes == 34)
            #expect(stored.downVotes == 33)
            // Every intermediate answer was a consistent state: within bounds.
            #expect(outcome.successes.allSatisfy { (0...100).contains($0.upVotes) && (0...100).contains($0.downVotes) })
            for index in [0, 1, 2, 99] {
                let votes = try await store.votes(userID: "usr_\(index)", activityIDs: [id])
                #expect(votes[id] == (finals[index % 3] == .noVote ? nil : finals[index % 3]))
            }
        }
    }

    @Test("Concurrent votes and comments on many activities keep every counter exact", arguments: StoreKind.allCases)
    func concurrentMixed(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            var ids: [String] = []
            for index in 0..<5 { ids.append(try await store.createActivity(F.activity("A\(index)")).id) }
            let all = ids
            let outcome = await raceBucketList(60) { index in
                let id = all[index % 5]
                _ = try await store.setVote(activityID: id, userID: "usr_\(index)", vote: .up, now: F.t0)
                _ = try await store.addComment(F.comment(on: id, by: "usr_\(index)"))
                return index
            }
            #expect(outcome.errors.isEmpty)
            for id in all {
                let activity = try #require(try await store.activity(id: id))
                #expect(activity.upVotes == 12)
                #expect(activity.commentCount == 12)
                let comments = try await store.all(pageSize: 5) { try await store.comments(activityID: id, page: $0) }
                #expect(comments.count == 12)
            }
        }
    }
}
