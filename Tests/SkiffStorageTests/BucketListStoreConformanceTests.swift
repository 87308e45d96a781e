import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

/// The one conformance suite for ``BucketListStore``: every test runs against every backend (``StoreKind``)
/// with exact expected values. Split by topic: `+Votes`, `+Lists`, `+Social`; the differential test
/// compares both backends on random data.
@Suite("BucketListStore conformance")
struct BucketListStoreConformanceTests {
    typealias F = BucketListFixture

    @Test("Create an activity and read it back; dates rounded, counts start at 0", arguments: StoreKind.allCases)
    func createAndRead(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            var input = F.activity("Sunrise hike", at: 0.000_4) {
                $0.description = "Bring water"
                $0.startsAt = F.at(3600.000_6)
                $0.imageID = "img_AAAAAAAAAAAAAAAAAAAAAA"
                $0.tags = ["outdoors", "morning"]
            }
            input.upVotes = 7
            input.commentCount = 3
            let created = try await store.createActivity(input)
            var expected = input
            expected.upVotes = 0
            expected.commentCount = 0
            expected.createdAt = F.t0
            expected.updatedAt = F.t0
            expected.fields.startsAt = F.ms(3_600_001)
            #expect(created == expected)
            #expect(try await store.activity(id: input.id) == expected)
            #expect(try await store.activity(id: "act_missing") == nil)
            await #expect(throws: BucketListStoreError.activityIDTaken) {
                _ = try await store.createActivity(F.activity("Copy", id: input.id))
            }
        }
    }

    @Test("Update: owner only; unchanged fields keep updatedAt; optional fields clear", arguments: StoreKind.allCases)
    func update(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(
                F.activity("Picnic") {
                    $0.startsAt = F.at(100)
                    $0.imageID = "img_AAAAAAAAAAAAAAAAAAAAAA"
                }
            )
            var changes = ActivityChanges()
            changes.title = "Picnic in the park"
            changes.tags = ["food"]
            changes.startsAt = .some(nil)
            changes.imageID = .some(nil)
            changes.place = Place(name: "Centennial Park", point: F.north(2))
            await #expect(throws: BucketListStoreError.activityNotFound) {
                _ = try await store.updateActivity(id: "act_missing", ownerID: F.owner, changes: changes, now: F.at(5))
            }
            await #expect(throws: BucketListStoreError.notActivityOwner) {
                _ = try await store.updateActivity(id: activity.id, ownerID: F.other, changes: changes, now: F.at(5))
            }
            let updated = try await store.updateActivity(
                id: activity.id,
                ownerID: F.owner,
                changes: changes,
                now: F.at(5)
            )
            #expect(updated.fields.title == "Picnic in the park")
            #expect(updated.fields.tags == ["food"])
            #expect(updated.fields.startsAt == nil)
            #expect(updated.fields.imageID == nil)
            #expect(updated.fields.place == Place(name: "Centennial Park", point: F.north(2)))
            #expect(updated.updatedAt == F.at(5))
            #expect(updated.createdAt == F.t0)
            #expect(try await store.activity(id: activity.id) == updated)
            // The same values again change nothing.
            let same = try await store.updateActivity(id: activity.id, ownerID: F.owner, changes: changes, now: F.at(9))
            #expect(same == updated)
        }
    }

    @Test("Delete: owner only; votes, comments and list entries go with it", arguments: StoreKind.allCases)
    func delete(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let activity = try await store.createActivity(F.activity("Kayak"))
            let keep = try await store.createActivity(F.activity("Keep"))
            _ = try await store.setVote(activityID: activity.id, userID: F.other, vote: .up, now: F.t0)
            _ = try await store.addComment(F.comment(on: activity.id))
            let list = try await store.createList(F.list("Summer", owner: F.other), limit: 50)
            _ = try await store.addEntry(
                listID: list.id,
                ownerID: F.other,
                activityID: activity.id,
                now: F.t0,
                limit: 200
            )
            _ = try await store.addEntry(
                listID: list.id,
                ownerID: F.other,
                activityID: keep.id,
                now: F.at(1),
                limit: 200
            )
            _ = try await store.setCompletion(
                listID: list.id,
                ownerID: F.other,
                activityID: activity.id,
                completion: Completion(completedAt: F.t0)
            )
            await #expect(throws: BucketListStoreError.notActivityOwner) {
                try await store.deleteActivity(id: activity.id, ownerID: F.other)
            }
            try await store.deleteActivity(id: activity.id, ownerID: F.owner)
            #expect(try await store.activity(id: activity.id) == nil)
            await #expect(throws: BucketListStoreError.activityNotFound) {
                try await store.deleteActivity(id: activity.id, ownerID: F.owner)
            }
            await #expect(throws: BucketListStoreError.activityNotFound) {
                _ = try await store.comments(activityID: activity.id, page: .first)
            }
            #expect(try await store.votes(userID: F.other, activityIDs: [activity.id]) == [:])
            let entries = try await store.entries(listID: list.id, page: .first).items
            #expect(entries.map(\.activity.id) == [keep.id])
            let counted = try #require(try await store.list(id: list.id))
            #expect(counted.pendingCount == 1)
            #expect(counted.completedCount == 0)
            let trending = try await store.trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: F.t0, now: F.at(1), limit: 20)
            )
            #expect(trending.isEmpty)
        }
    }

    @Test("Nearby: exact circle, nearest first, paged without gaps or duplicates", arguments: StoreKind.allCases)
    func nearbyByDistance(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            var expected: [String] = []
            for km in [0.5, 3, 1, 7, 2, 9.9, 4] {
                let activity = try await store.createActivity(F.activity("At \(km) km", point: F.north(km)))
                if km <= 8 { expected.append(activity.id) }
            }
            _ = try await store.createActivity(F.activity("Far away", point: F.north(12)))
            // Just outside the box's latitude but near in longitude terms: still excluded.
            _ = try await store.createActivity(
                F.activity("East", point: Coordinate(latitude: F.campus.latitude, longitude: F.campus.longitude + 0.2))
            )
            let query = NearbyQuery(center: F.campus, radiusKm: 8, sort: .distance)
            let hits = try await store.all(pageSize: 2) { try await store.nearbyActivities(query, page: $0) }
            let kms = hits.map { ($0.distanceKm * 10).rounded() / 10 }
            #expect(kms == [0.5, 1, 2, 3, 4, 7])
            #expect(Set(hits.map(\.activity.id)) == Set(expected))
            #expect(hits.map(\.distanceKm) == hits.map(\.distanceKm).sorted())
        }
    }

    @Test(
        "Nearby by popularity: net votes, then distance; a token of another query is refused",
        arguments: StoreKind.allCases
    )
    func nearbyByPopularity(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let near = try await store.createActivity(F.activity("Near", point: F.north(1)))
            let popular = try await store.createActivity(F.activity("Popular", point: F.north(5)))
            let tied = try await store.createActivity(F.activity("Tied", point: F.north(3)))
            let disliked = try await store.createActivity(F.activity("Disliked", point: F.north(0.1)))
            for user in ["usr_1", "usr_2", "usr_3"] {
                _ = try await store.setVote(activityID: popular.id, userID: user, vote: .up, now: F.t0)
            }
            _ = try await store.setVote(activityID: tied.id, userID: "usr_1", vote: .up, now: F.t0)
            _ = try await store.setVote(activityID: near.id, userID: "usr_1", vote: .up, now: F.t0)
            _ = try await store.setVote(activityID: disliked.id, userID: "usr_1", vote: .down, now: F.t0)
            let query = NearbyQuery(center: F.campus, radiusKm: 10, sort: .popularity)
            let hits = try await store.all(pageSize: 1) { try await store.nearbyActivities(query, page: $0) }
            #expect(hits.map(\.activity.id) == [popular.id, near.id, tied.id, disliked.id])
            #expect(hits.map(\.activity.netVotes) == [3, 1, 1, -1])

            let first = try await store.nearbyActivities(query, page: PageRequest(size: 1))
            let token = try #require(first.nextPageToken)
            let other = NearbyQuery(center: F.campus, radiusKm: 10, sort: .distance)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.nearbyActivities(other, page: PageRequest(size: 1, token: token))
            }
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.nearbyActivities(query, page: PageRequest(size: 1, token: "garbage"))
            }
        }
    }

    @Test(
        "Nearby paging is stable: activities added between pages cause no duplicates or gaps",
        arguments: StoreKind.allCases
    )
    func nearbyPagingStability(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            var original: [String] = []
            for index in 0..<6 {
                original.append(
                    try await store.createActivity(F.activity("A\(index)", point: F.north(Double(index)))).id
                )
            }
            let query = NearbyQuery(center: F.campus, radiusKm: 50)
            let first = try await store.nearbyActivities(query, page: PageRequest(size: 3))
            // Added between pages: one nearer than the cursor (not shown), one farther (shown).
            _ = try await store.createActivity(F.activity("New near", point: F.north(0.5)))
            let farther = try await store.createActivity(F.activity("New far", point: F.north(10)))
            let second = try await store.nearbyActivities(
                query,
                page: PageRequest(size: 10, token: first.nextPageToken)
            )
            #expect(first.items.map(\.activity.id) + second.items.map(\.activity.id) == original + [farther.id])
            #expect(second.nextPageToken == nil)
        }
    }

    @Test("Trending: decayed net votes in the window, near a point or everywhere", arguments: StoreKind.allCases)
    func trending(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let hour = 3600.0
            let now = F.at(100 * hour)
            let fresh = try await store.createActivity(F.activity("Fresh", point: F.north(1), at: 0))
            let old = try await store.createActivity(F.activity("Old", point: F.north(2), at: 10))
            let far = try await store.createActivity(F.activity("Far", point: F.north(60), at: 20))
            let hated = try await store.createActivity(F.activity("Hated", point: F.north(1), at: 30))
            let outside = try await store.createActivity(F.activity("Outside window", point: F.north(1), at: 40))
            // Fresh: two up-votes cast now → 2.
            _ = try await store.setVote(activityID: fresh.id, userID: "usr_1", vote: .up, now: now)
            _ = try await store.setVote(activityID: fresh.id, userID: "usr_2", vote: .up, now: now)
            // Old: three up-votes a day ago, one down-vote two days ago → 1.5 − 0.25 = 1.25.
            for user in ["usr_1", "usr_2", "usr_3"] {
                _ = try await store.setVote(activityID: old.id, userID: user, vote: .up, now: F.at(76 * hour))
            }
            _ = try await store.setVote(activityID: old.id, userID: "usr_4", vote: .down, now: F.at(52 * hour))
            // Far: one up-vote now → 1, but 60 km away.
            _ = try await store.setVote(activityID: far.id, userID: "usr_1", vote: .up, now: now)
            // Hated: net negative → never trending.
            _ = try await store.setVote(activityID: hated.id, userID: "usr_1", vote: .down, now: now)
            // Outside: voted 8 days ago, outside a one-week window.
            _ = try await store.setVote(
                activityID: outside.id,
                userID: "usr_1",
                vote: .up,
                now: F.at(100 * hour - 192 * hour)
            )

            let window = F.at(100 * hour - 168 * hour)
            let near = try await store.trendingActivities(
                TrendingQuery(center: F.campus, radiusKm: 25, since: window, now: now, limit: 20)
            )
            #expect(near.map(\.activity.id) == [fresh.id, old.id])
            #expect(near.map(\.score) == [2, 1.25])
            #expect(near.allSatisfy { $0.distanceKm > 0 && $0.distanceKm < 3 })

            let everywhere = try await store.trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: window, now: now, limit: 20)
            )
            #expect(everywhere.map(\.activity.id) == [fresh.id, old.id, far.id])
            #expect(everywhere.map(\.distanceKm) == [0, 0, 0])
            let top = try await store.trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: window, now: now, limit: 1)
            )
            #expect(top.map(\.activity.id) == [fresh.id])

            // A vote cleared stops counting; a changed vote counts from when it changed.
            _ = try await store.setVote(activityID: fresh.id, userID: "usr_2", vote: .noVote, now: now)
            _ = try await store.setVote(activityID: old.id, userID: "usr_4", vote: .up, now: now)
            let after = try await store.trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: window, now: now, limit: 20)
            )
            // Old: 1.5 + 1 = 2.5; Fresh: 1; Far: 1 (same score: newer activity first).
            #expect(after.map(\.activity.id) == [old.id, far.id, fresh.id])
            #expect(after.map(\.score) == [2.5, 1, 1])
        }
    }
}
