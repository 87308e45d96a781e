import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

extension BucketListStoreConformanceTests {
    @Test("Comments: oldest first, paged; author or host may delete; counts follow", arguments: StoreKind.allCases)
    func comments(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Festival"))
            await #expect(throws: BucketListStoreError.activityNotFound) {
                _ = try await store.addComment(F.comment(on: "act_missing"))
            }
            var written: [SkiffBucketList.Comment] = []
            // Clocks that step back or repeat a millisecond: each comment is stored a millisecond after the
            // activity's latest, so the list keeps the posting order.
            for (index, seconds) in [1.0, 3, 2, 3, 0.000_4].enumerated() {
                written.append(
                    try await store.addComment(F.comment(on: activity.id, by: "usr_\(index)", "c\(index)", at: seconds))
                )
            }
            await #expect(throws: BucketListStoreError.commentIDTaken) {
                _ = try await store.addComment(F.comment(on: activity.id, id: written[0].id))
            }
            #expect(
                written.map(\.createdAt)
                    == [1, 3, 3.001, 3.002, 3.003].map { F.t0.addingTimeInterval($0).roundedToMilliseconds }
            )
            let listed = try await store.all(pageSize: 2) {
                try await store.comments(activityID: activity.id, page: $0)
            }
            #expect(listed == written)
            #expect(try await store.activity(id: activity.id)?.commentCount == 5)

            // Tokens belong to one activity.
            let first = try await store.comments(activityID: activity.id, page: PageRequest(size: 1))
            let other = try await store.createActivity(F.activity("Other"))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.comments(
                    activityID: other.id,
                    page: PageRequest(size: 1, token: first.nextPageToken)
                )
            }

            await #expect(throws: BucketListStoreError.commentNotFound) {
                try await store.deleteComment(id: "cmt_missing", by: F.owner)
            }
            await #expect(throws: BucketListStoreError.notCommentAuthor) {
                try await store.deleteComment(id: written[0].id, by: "usr_stranger")
            }
            try await store.deleteComment(id: written[0].id, by: "usr_0")  // its author
            try await store.deleteComment(id: written[1].id, by: F.owner)  // the activity's host
            #expect(try await store.activity(id: activity.id)?.commentCount == 3)
            let left = try await store.comments(activityID: activity.id, page: .first).items
            #expect(Set(left.map(\.id)) == Set(written[2...].map(\.id)))
        }
    }

    @Test("Follows: idempotent, most recent first, paged; counters", arguments: StoreKind.allCases)
    func follows(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let first = try await store.follow(followerID: "usr_a", followeeID: "usr_star", now: F.at(1))
            #expect(first == Follow(userID: "usr_star", followedAt: F.at(1)))
            let again = try await store.follow(followerID: "usr_a", followeeID: "usr_star", now: F.at(50))
            #expect(again == first)
            _ = try await store.follow(followerID: "usr_b", followeeID: "usr_star", now: F.at(3))
            _ = try await store.follow(followerID: "usr_c", followeeID: "usr_star", now: F.at(3))
            _ = try await store.follow(followerID: "usr_d", followeeID: "usr_star", now: F.at(2))
            _ = try await store.follow(followerID: "usr_star", followeeID: "usr_a", now: F.at(4))
            let followers = try await store.all(pageSize: 3) { try await store.followers(userID: "usr_star", page: $0) }
            #expect(followers.map(\.userID) == ["usr_c", "usr_b", "usr_d", "usr_a"])
            let following = try await store.following(userID: "usr_a", page: .first).items
            #expect(following == [Follow(userID: "usr_star", followedAt: F.at(1))])

            var profile = try await store.profile(userID: "usr_star", viewerID: "usr_a")
            #expect(profile.followerCount == 4)
            #expect(profile.followingCount == 1)
            #expect(profile.followedByViewer)
            try await store.unfollow(followerID: "usr_a", followeeID: "usr_star")
            try await store.unfollow(followerID: "usr_a", followeeID: "usr_star")
            profile = try await store.profile(userID: "usr_star", viewerID: "usr_a")
            #expect(profile.followerCount == 3)
            #expect(!profile.followedByViewer)
            #expect(try await store.profile(userID: "usr_star", viewerID: nil).followedByViewer == false)
            #expect(try await store.following(userID: "usr_a", page: .first).items.isEmpty)
            #expect(try await store.profile(userID: "usr_nobody", viewerID: nil) == ProfileCounts())
        }
    }

    @Test(
        "Profile counters: private lists count only for their owner; completions counted once",
        arguments: StoreKind.allCases
    )
    func profileCounters(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let a = try await store.createActivity(F.activity("A", owner: F.owner))
            let b = try await store.createActivity(F.activity("B", owner: F.owner))
            let c = try await store.createActivity(F.activity("C", owner: F.other))
            let open = try await store.createList(F.list("Open", owner: F.other), limit: 50)
            let secret = try await store.createList(F.list("Secret", owner: F.other, visibility: .private), limit: 50)
            for (list, activity) in [(open, a), (open, b), (secret, a), (secret, c)] {
                _ = try await store.addEntry(
                    listID: list.id,
                    ownerID: F.other,
                    activityID: activity.id,
                    now: F.t0,
                    limit: 200
                )
            }
            for (list, activity) in [(open, a), (secret, a), (secret, c)] {
                _ = try await store.setCompletion(
                    listID: list.id,
                    ownerID: F.other,
                    activityID: activity.id,
                    completion: Completion(completedAt: F.t0)
                )
            }
            let own = try await store.profile(userID: F.other, viewerID: F.other)
            #expect(own == ProfileCounts(activityCount: 1, listCount: 2, completedActivityCount: 2))
            let seen = try await store.profile(userID: F.other, viewerID: F.owner)
            #expect(seen == ProfileCounts(activityCount: 1, listCount: 1, completedActivityCount: 1))
            #expect(try await store.profile(userID: F.owner, viewerID: nil).activityCount == 2)
        }
    }
}

extension BucketListStoreConformanceTests {
    @Test(
        "Comment paging is stable: comments added and deleted between pages cause no gaps or duplicates",
        arguments: StoreKind.allCases
    )
    func commentPagingStability(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Debate"))
            var original: [String] = []
            for index in 0..<6 {
                original.append(
                    try await store.addComment(F.comment(on: activity.id, "c\(index)", at: Double(index))).id
                )
            }
            let first = try await store.comments(activityID: activity.id, page: PageRequest(size: 3))
            #expect(first.items.map(\.id) == Array(original[0..<3]))
            // Between pages: the last comment shown is deleted, and a new one is written.
            try await store.deleteComment(id: original[2], by: F.other)
            let newer = try await store.addComment(F.comment(on: activity.id, "late", at: 10))
            let second = try await store.comments(
                activityID: activity.id,
                page: PageRequest(size: 10, token: first.nextPageToken)
            )
            #expect(second.items.map(\.id) == Array(original[3...]) + [newer.id])
            #expect(second.nextPageToken == nil)
        }
    }
}
