import Foundation
import Logging
import PostgresNIO
import SkiffBucketList
import SkiffDomain
import SkiffPostgres
import SkiffTesting
import Testing

/// The PostgreSQL BucketList store as several servers use it: each "server" is a ``PostgresStorage`` of its
/// own (its own pool) on one database, so nothing but PostgreSQL settles their races.
@Suite("BucketListStore on PostgreSQL: several servers on one database")
struct BucketListStorePostgresTests {
    typealias F = BucketListFixture

    /// Runs `body` with `count` stores on one new database, each opened as a separate server would, and
    /// the database's location.
    private func withServers(
        _ count: Int,
        _ body: ([PostgresBucketListStore], PostgresLocation) async throws -> Void
    ) async throws {
        try await TestPostgres.withStorages(count) { storages, location in
            try await body(storages.map { $0.bucketListStore() }, location)
        }
    }

    /// Runs `operation` for each index concurrently; returns the results in index order.
    private func race<T: Sendable>(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await operation(index)) }
            }
            var results: [(Int, T)] = []
            for try await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// The stored trending bound of an activity, read on a connection of its own.
    private func storedBound(_ location: PostgresLocation, activityID: String) async throws -> Double? {
        let logger = Logger(label: "skiff.tests.bucketlist")
        let connection = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                host: location.host,
                port: location.port,
                username: location.username,
                password: location.password,
                database: location.database,
                tls: .disable
            ),
            id: 2,
            logger: logger
        )
        do {
            var bound: Double?
            let rows = try await connection.query(
                "SELECT trend_bound FROM activity WHERE id = \(activityID)",
                logger: logger
            )
            for try await value in rows.decode(Double?.self) { bound = value }
            try await connection.close()
            return bound
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @Test("One user votes from two servers at once, over and over: the vote counts once")
    func oneVotePerUserAcrossServers() async throws {
        try await withServers(2) { servers, _ in
            let activity = try await servers[0].createActivity(F.activity("Sunrise hike"))
            let id = activity.id
            // Forty votes by one user, alternating servers and up/down; the last one decides.
            let results = try await race(40) { index in
                try await servers[index % 2].setVote(
                    activityID: id,
                    userID: "usr_ann",
                    vote: index.isMultiple(of: 3) ? .down : .up,
                    now: F.at(Double(index))
                )
            }
            // Every answer was a state with one vote at most.
            #expect(results.allSatisfy { $0.upVotes + $0.downVotes == 1 })
            for server in servers {
                let stored = try #require(try await server.activity(id: id))
                #expect(stored.upVotes + stored.downVotes == 1)
                let votes = try await server.votes(userID: "usr_ann", activityIDs: [id])
                #expect(votes == [id: stored.upVotes == 1 ? .up : .down])
            }
        }
    }

    @Test("Thirty users up-vote from three servers at once: counts, stored bound and score add up exactly")
    func manyVotersAddUpAcrossServers() async throws {
        try await withServers(3) { servers, location in
            let activity = try await servers[0].createActivity(F.activity("Night market"))
            let id = activity.id
            let voters = 30
            let times = (0..<voters).map { F.at(Double($0) * 60) }
            _ = try await race(voters) { index in
                try await servers[index % 3].setVote(
                    activityID: id,
                    userID: "usr_\(index)",
                    vote: .up,
                    now: times[index]
                )
            }
            let stored = try #require(try await servers[1].activity(id: id))
            #expect((stored.upVotes, stored.downVotes) == (voters, 0))

            // The bound holds every up-vote, whatever order the servers committed them in (the logarithm of a
            // sum, so only rounding depends on the order).
            var expected: Double?
            for time in times { expected = TrendingScore.raisedBound(expected, upVoteAt: time) }
            let bound = try #require(try await storedBound(location, activityID: id))
            #expect(abs(bound - (expected ?? 0)) < 1e-9)

            let now = F.at(86_400)
            let score = TrendingScore.score(
                (0..<voters).map { CastVote(userID: "usr_\($0)", vote: .up, castAt: times[$0]) },
                now: now
            )
            #expect(TrendingScore.maximumScore(bound: bound, now: now) >= score)
            let hits = try await servers[2].trendingActivities(
                TrendingQuery(center: nil, radiusKm: 0, since: F.t0, now: now, limit: 5)
            )
            #expect(hits.map(\.activity.id) == [id])
            #expect(hits.map(\.score) == [score])
        }
    }

    @Test("Two servers comment on one activity at once: the count is exact and comments list in order")
    func commentsAcrossServers() async throws {
        try await withServers(2) { servers, _ in
            let activity = try await servers[0].createActivity(F.activity("Open mic"))
            let id = activity.id
            // All written in the same millisecond: each is stored at least a millisecond after the last.
            let comments = try await race(24) { index in
                try await servers[index % 2].addComment(F.comment(on: id, by: "usr_\(index)", "Comment \(index)"))
            }
            let stored = try #require(try await servers[1].activity(id: id))
            #expect(stored.commentCount == 24)
            let listed = try await servers[0].all(pageSize: 7) {
                try await servers[0].comments(activityID: id, page: $0)
            }
            #expect(Set(listed) == Set(comments))
            let times = listed.map(\.createdAt)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test("Two servers create lists and add entries at once: names stay unique and the entry limit holds")
    func listsAcrossServers() async throws {
        try await withServers(2) { servers, _ in
            // Ten creations of one name (differing in case): one list.
            let created = try await race(10) { index -> BucketList? in
                let name = index.isMultiple(of: 2) ? "Summer" : "SUMMER"
                do {
                    return try await servers[index % 2].createList(
                        F.list(name, at: Double(index)),
                        limit: BucketListRules.maximumListsPerUser
                    )
                } catch let error as DomainError {
                    #expect(error == BucketListStoreError.listNameTaken)
                    return nil
                }
            }
            let lists = created.compactMap { $0 }
            #expect(lists.count == 1)
            let list = try #require(lists.first)

            var activityIDs: [String] = []
            for index in 0..<20 {
                activityIDs.append(try await servers[0].createActivity(F.activity("A\(index)")).id)
            }
            let ids = activityIDs
            // Twenty adds under a limit of eight: eight entries.
            let added = try await race(20) { index -> BucketListEntry? in
                do {
                    return try await servers[index % 2].addEntry(
                        listID: list.id,
                        ownerID: F.owner,
                        activityID: ids[index],
                        now: F.at(Double(index)),
                        limit: 8
                    )
                } catch let error as DomainError {
                    #expect(error == BucketListStoreError.entryLimit)
                    return nil
                }
            }
            let entries = try await servers[1].all(pageSize: 3) {
                try await servers[1].entries(listID: list.id, page: $0)
            }
            #expect(entries.count == 8)
            #expect(Set(entries.map(\.activity.id)) == Set(added.compactMap { $0?.activity.id }))
            #expect(try await servers[0].list(id: list.id)?.pendingCount == 8)
        }
    }

    @Test("Nearby distances are Geo.distanceKm to the last bit, everywhere on Earth")
    func distancesMatchSwift() async throws {
        try await withServers(1) { servers, _ in
            let store = servers[0]
            var random = SeededGenerator(seed: 0xD157_2026)
            let center = Coordinate(latitude: 12.5, longitude: -40.25)
            var points: [String: Coordinate] = [:]
            for index in 0..<200 {
                let point = Coordinate(
                    latitude: Double.random(in: -90...90, using: &random),
                    longitude: Double.random(in: -180...180, using: &random)
                )
                let activity = try await store.createActivity(F.activity("P\(index)", point: point))
                points[activity.id] = point
            }
            let hits = try await store.all(pageSize: 50) {
                try await store.nearbyActivities(NearbyQuery(center: center, radiusKm: 20_100), page: $0)
            }
            #expect(hits.count == 200)
            for hit in hits {
                let point = try #require(points[hit.activity.id])
                #expect(hit.distanceKm == Geo.distanceKm(center, point), "\(point)")
            }
        }
    }
}
