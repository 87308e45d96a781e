import Foundation
import SkiffDomain
import SkiffTesting
import Testing

@testable import SkiffBucketList

/// The outward nearby walk (`ActivityRanking.nearbyWalk`): the same pages as ordering every activity in the
/// circle, while the activities it reads grow with the page, not with the circle.
@Suite("Nearby walk")
struct NearbyWalkTests {
    static let campus = Coordinate(latitude: 36.1447, longitude: -86.8027)

    /// `count` activities spread over a campus about 4 km across, with net votes from −2 to 6.
    static func activities(_ count: Int, seed: UInt64) -> [Activity] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            let up = Int.random(in: 0...6, using: &random)
            return Activity(
                id: "act_\(index)",
                ownerID: "owner",
                fields: ActivityFields(
                    title: "A\(index)",
                    place: Place(
                        name: "Somewhere",
                        point: Coordinate(
                            latitude: campus.latitude + Double.random(in: -0.018...0.018, using: &random),
                            longitude: campus.longitude + Double.random(in: -0.022...0.022, using: &random)
                        )
                    )
                ),
                upVotes: up,
                downVotes: Int.random(in: 0...2, using: &random),
                createdAt: Date(millisecondsSince1970: 1_767_225_600_000)
            )
        }
    }

    /// Pages of a walk over `activities` (a brute-force backend that counts the activities each step
    /// reads: those in the boxes it fetches), and the most any one page read.
    static func walk(
        _ activities: [Activity],
        _ query: NearbyQuery,
        pageSize: Int,
        pages: Int,
        collectLimit: Int = ActivityRanking.collectLimit
    ) throws -> (hits: [NearbyHit], mostRead: Int) {
        func inBox(_ activity: Activity, _ radius: Double, _ level: Int?) -> Bool {
            let box = Geo.boundingBox(center: query.center, radiusKm: radius)
            let point = activity.fields.place.point
            return (level == nil || activity.netVotes == level) && box.latitude.contains(point.latitude)
                && box.longitude!.contains(point.longitude)
        }
        let levels = Set(activities.map(\.netVotes)).sorted(by: >)
        var hits: [NearbyHit] = []
        var token: String?
        var mostRead = 0
        for _ in 0..<pages {
            let page = try PageRequest(size: pageSize, token: token)
            var read = 0
            let result = ActivityRanking.nearbyWalk(
                query,
                cursor: try ActivityRanking.nearbyCursor(page, query),
                size: pageSize,
                collectLimit: collectLimit
            ) { level, radius, cap in
                min(cap, activities.count { inBox($0, radius, level) })
            } fetch: { level, radius, after, limit in
                let candidates = activities.filter { inBox($0, radius, level) }
                read += candidates.count
                return ActivityRanking.nearest(
                    candidates,
                    query,
                    radiusKm: radius,
                    after: after,
                    limit: limit,
                    byPopularity: level == nil && query.sort == .popularity
                )
            } levelBelow: { level in
                guard let level else { return levels.first }
                return levels.first { $0 < level }
            }
            mostRead = max(mostRead, read)
            hits += result.items
            token = result.nextPageToken
            guard token != nil else { break }
        }
        return (hits, mostRead)
    }

    /// The same pages from ordering every activity in the circle.
    static func reference(
        _ activities: [Activity],
        _ query: NearbyQuery,
        pageSize: Int,
        pages: Int
    ) throws
        -> [NearbyHit]
    {
        var hits: [NearbyHit] = []
        var token: String?
        for _ in 0..<pages {
            let page = try ActivityRanking.nearbyPage(
                activities,
                query,
                page: try PageRequest(size: pageSize, token: token)
            )
            hits += page.items
            token = page.nextPageToken
            guard token != nil else { break }
        }
        return hits
    }

    @Test("Walked pages equal ordering the whole circle, in both orders, on dense and sparse circles")
    func sameAnswers() throws {
        let activities = Self.activities(6_000, seed: 7)
        for sort in NearbySort.allCases {
            for radius in [0.05, 0.4, 3] {
                let query = NearbyQuery(center: Self.campus, radiusKm: radius, sort: sort)
                let expected = try Self.reference(activities, query, pageSize: 20, pages: 4)
                #expect(!expected.isEmpty)
                for limit in [ActivityRanking.collectLimit, 16, 1] {
                    let walked = try Self.walk(activities, query, pageSize: 20, pages: 4, collectLimit: limit).hits
                    #expect(walked == expected, "\(sort), \(radius) km, collect limit \(limit)")
                }
            }
        }
    }

    @Test("Activities stacked on one spot: the walk stops shrinking at 1 m and pages them all")
    func stacked() throws {
        var activities = Self.activities(200, seed: 4)
        for index in 0..<1_500 {
            var activity = activities[0]
            activity.id = "act_stack_\(index)"
            activity.fields.place.point = Self.campus
            activities.append(activity)
        }
        for sort in NearbySort.allCases {
            let query = NearbyQuery(center: Self.campus, radiusKm: 2, sort: sort)
            let walked = try Self.walk(activities, query, pageSize: 100, pages: 3, collectLimit: 64)
            #expect(walked.hits == (try Self.reference(activities, query, pageSize: 100, pages: 3)))
            #expect(walked.hits.count == 300)
        }
    }

    @Test("A page reads about as many activities with 4 times the data: the cost follows the page")
    func costFollowsThePage() throws {
        let query = NearbyQuery(center: Self.campus, radiusKm: 3, sort: .distance)
        let small = try Self.walk(Self.activities(8_000, seed: 1), query, pageSize: 20, pages: 3)
        let large = try Self.walk(Self.activities(32_000, seed: 2), query, pageSize: 20, pages: 3)
        // Reading the circle would take most of the 8,000 or 32,000; the walk reads a few hundred either way
        // (a box under the collect limit, then its doubling if the page is not full).
        #expect(small.mostRead < 2 * ActivityRanking.collectLimit)
        #expect(large.mostRead < 2 * ActivityRanking.collectLimit)
        let popular = NearbyQuery(center: Self.campus, radiusKm: 3, sort: .popularity)
        let levels = try Self.walk(Self.activities(32_000, seed: 3), popular, pageSize: 20, pages: 3)
        #expect(levels.mostRead < 4 * ActivityRanking.collectLimit)
        #expect(levels.hits.count == 60)
    }
}
