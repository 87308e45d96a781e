import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain
import Testing

@testable import SkiffSQLite

/// What only the SQLite BucketList store has: the stored trending bound ("bucketlist-v2").
@Suite("SQLite trending bound")
struct SQLiteTrendBoundTests {
    typealias F = BucketListFixture

    @Test("Votes raise the stored bound; the migration's computation from existing votes gives the same bounds")
    func boundsFollowVotes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        let store = database.bucketListStore()
        let activities = try await (0..<5).asyncMap { index in
            try await store.createActivity(F.activity("A\(index)", point: F.campus, at: Double(index)))
        }
        // Up-votes at known times (one changed to down, one cleared), in time order.
        let casts: [(activity: Int, user: String, vote: Vote, hours: Double)] = [
            (0, "usr_a", .up, 1), (0, "usr_b", .up, 2), (1, "usr_a", .up, 3), (1, "usr_a", .down, 4),
            (2, "usr_c", .up, 5), (2, "usr_c", .noVote, 6), (3, "usr_d", .down, 7), (0, "usr_c", .up, 8),
        ]
        for cast in casts {
            _ = try await store.setVote(
                activityID: activities[cast.activity].id,
                userID: cast.user,
                vote: cast.vote,
                now: F.at(cast.hours * 3600)
            )
        }
        func bounds() async throws -> [String: Double] {
            try await database.pool.read { db in
                var result: [String: Double] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT id, trendBound FROM activity WHERE trendBound IS NOT NULL")
                {
                    result[row["id"]] = row["trendBound"]
                }
                return result
            }
        }
        let raised = try await bounds()
        // Every up-vote ever cast raised its activity's bound, withdrawn ones included.
        func expected(_ hours: [Double]) -> Double {
            hours.reduce(nil as Double?) { TrendingScore.raisedBound($0, upVoteAt: F.at($1 * 3600)) }!
        }
        #expect(Set(raised.keys) == [activities[0].id, activities[1].id, activities[2].id])
        #expect(abs(raised[activities[0].id]! - expected([1, 2, 8])) < 1e-9)
        #expect(abs(raised[activities[1].id]! - expected([3])) < 1e-9)
        #expect(abs(raised[activities[2].id]! - expected([5])) < 1e-9)

        // Computed afresh from the votes held now (as the migration does for an older file), the bounds
        // count only the up-votes that remain: tighter, never lower than any score.
        try await database.pool.write { db in try SQLiteSchema.computeTrendBounds(db) }
        let computed = try await bounds()
        #expect(Set(computed.keys) == [activities[0].id])
        #expect(abs(computed[activities[0].id]! - expected([1, 2, 8])) < 1e-9)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
