import Foundation
import SkiffBucketList
import SkiffDomain
import SkiffPostgres
import SkiffSQLite
import SkiffTesting
import Testing

/// The in-memory, SQLite and PostgreSQL stores side by side on seeded random data: every random nearby
/// search (both orders, random circles and page sizes, near the antimeridian and the poles too) and every
/// random trending query must give identical results.
@Suite("BucketListStore differential (in-memory vs SQLite vs PostgreSQL)")
struct BucketListStoreDifferentialTests {
    typealias F = BucketListFixture

    /// Centers of clusters, including awkward ones (antimeridian, near a pole).
    static let clusters = [
        F.campus, Coordinate(latitude: 0.0, longitude: 179.95), Coordinate(latitude: 89.7, longitude: 10),
        Coordinate(latitude: -33.86, longitude: 151.21),
    ]

    static func point(_ random: inout SeededGenerator) -> Coordinate {
        let center = clusters[Int.random(in: 0..<clusters.count, using: &random)]
        let latitude = min(90, max(-90, center.latitude + Double.random(in: -0.6...0.6, using: &random)))
        var longitude = center.longitude + Double.random(in: -0.6...0.6, using: &random)
        if longitude > 180 { longitude -= 360 }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    @Test("Random activities, votes and queries: identical results on every backend")
    func equivalence() async throws {
        try await TestPostgres.withDatabase { postgres in
            try await TestPostgres.withDatabase { walkingPostgres in
                try await compare(postgres: postgres, walkingPostgres: walkingPostgres)
            }
        }
    }

    private func compare(postgres: PostgresStorage, walkingPostgres: PostgresStorage) async throws {
        var random = SeededGenerator(seed: 0xB0C4_2026)
        let activities = (0..<250).map { index in
            F.activity("A\(index)", point: Self.point(&random), at: Double(Int.random(in: 0..<50, using: &random)))
        }
        var votes: [(activityID: String, userID: String, vote: Vote, at: Double)] = []
        for _ in 0..<1200 {
            let activity = activities[Int.random(in: 0..<activities.count, using: &random)]
            let vote: Vote = [.up, .up, .up, .down, .noVote][Int.random(in: 0..<5, using: &random)]
            votes.append(
                (
                    activity.id, "usr_\(Int.random(in: 0..<40, using: &random))", vote,
                    Double(Int.random(in: 0..<(20 * 86_400), using: &random))
                )
            )
        }
        votes.sort { $0.at < $1.at }

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let walking = try await SQLiteDatabase.open(atPath: directory.path("walking.sqlite"))
        defer { try? walking.close() }
        // Stores 2, 3 and 5 walk every circle holding 4 activities or more outwards (radius by radius, level
        // by level) instead of reading the circle whole: the same answers are required of them.
        let stores: [any BucketListStore] = [
            InMemoryBucketListStore(), database.bucketListStore(), InMemoryBucketListStore(collectLimit: 4),
            walking.bucketListStore(collectLimit: 4), postgres.bucketListStore(),
            walkingPostgres.bucketListStore(collectLimit: 4),
        ]
        for store in stores {
            for activity in activities { _ = try await store.createActivity(activity) }
            for vote in votes {
                _ = try await store.setVote(
                    activityID: vote.activityID,
                    userID: vote.userID,
                    vote: vote.vote,
                    now: F.at(vote.at)
                )
            }
        }
        for activity in activities {
            let stored = try await stores[0].activity(id: activity.id)
            for store in stores.dropFirst() { #expect(try await store.activity(id: activity.id) == stored) }
        }

        var nonEmpty = 0
        for round in 0..<40 {
            let query = NearbyQuery(
                center: Self.point(&random),
                radiusKm: Double.random(in: 0.5...100, using: &random),
                sort: Bool.random(using: &random) ? .distance : .popularity
            )
            let size = Int.random(in: 6...30, using: &random)  // a few pages each: enough for paging
            let memory = try await stores[0].all(pageSize: size) {
                try await stores[0].nearbyActivities(query, page: $0)
            }
            for index in 1..<stores.count {
                let other = try await stores[index].all(pageSize: size) {
                    try await stores[index].nearbyActivities(query, page: $0)
                }
                #expect(memory == other, "store \(index), round \(round): \(query)")
            }
            #expect(Set(memory.map(\.activity.id)).count == memory.count, "round \(round): duplicates")
            if !memory.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 10)

        var trendingNonEmpty = 0
        for round in 0..<40 {
            let now = F.at(Double(Int.random(in: 0..<(22 * 86_400), using: &random)))
            let hours = Int.random(in: 1...720, using: &random)
            let global = Bool.random(using: &random)
            let query = TrendingQuery(
                center: global ? nil : Self.point(&random),
                radiusKm: global ? 0 : Double.random(in: 1...100, using: &random),
                since: now.addingTimeInterval(-Double(hours) * 3600),
                now: now,
                limit: Int.random(in: 1...100, using: &random)
            )
            let memory = try await stores[0].trendingActivities(query)
            for store in stores.dropFirst() {
                #expect(try await store.trendingActivities(query) == memory, "round \(round): \(query)")
            }
            if !memory.isEmpty { trendingNonEmpty += 1 }
        }
        #expect(trendingNonEmpty > 10)
    }
}
