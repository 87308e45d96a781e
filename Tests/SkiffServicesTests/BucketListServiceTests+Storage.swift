import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

extension BucketListServiceTests {
    @Test("Nearby pages are capped at 100 results, and the rest follows with the token")
    func pageSizeCap() async throws {
        try await withApp(.memory) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, _) = try await Self.users(app, connection)
            for index in 0..<105 {
                _ = try await client.createActivity(
                    .with { $0.activity = Self.newActivity("A\(index)", northKm: Double(index) / 100) },
                    metadata: ann.auth
                )
            }
            let request = Skiff_Bucketlist_V1_FindNearbyActivitiesRequest.with {
                $0.center = Self.point()
                $0.radiusKm = 5
                $0.pageSize = 1000
            }
            let first = try await client.findNearbyActivities(request)
            #expect(first.results.count == 100)
            #expect(!first.nextPageToken.isEmpty)
            let second = try await client.findNearbyActivities(
                .with {
                    $0 = request
                    $0.pageToken = first.nextPageToken
                }
            )
            #expect(second.results.count == 5)
            #expect(second.nextPageToken.isEmpty)
            let distances = (first.results + second.results).map(\.distanceKm)
            #expect(distances == distances.sorted())
            // A token is only valid with the same request.
            await expectStatus(.invalidArgument) {
                _ = try await client.findNearbyActivities(
                    .with {
                        $0 = request
                        $0.radiusKm = 6
                        $0.pageToken = first.nextPageToken
                    }
                )
            }
        }
    }

    @Test(
        "Nearby over a dense circle (walked outwards, level by level): every activity once, in order, both sorts",
        arguments: Backend.allCases
    )
    func nearbyDenseCircle(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.rateLimitScale = 0 }) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            // 300 activities within 0.3 km (more than the 256 a circle may hold before the walk starts), in
            // pairs at the same distance; Bob votes some up and some down.
            var ids: [String] = []
            for index in 0..<300 {
                let id = try await client.createActivity(
                    .with { $0.activity = Self.newActivity("A\(index)", northKm: Double(index / 2) * 0.002) },
                    metadata: ann.auth
                ).activity.activityID
                ids.append(id)
                if index % 3 == 0 || index % 7 == 0 {
                    _ = try await client.voteActivity(
                        .with {
                            $0.activityID = id
                            $0.vote = index % 3 == 0 ? .up : .down
                        },
                        metadata: bob.auth
                    )
                }
            }
            for sort in [Skiff_Bucketlist_V1_NearbySortOrder.distance, .popularity] {
                var results: [Skiff_Bucketlist_V1_NearbyActivity] = []
                var token = ""
                repeat {
                    let page = try await client.findNearbyActivities(
                        .with {
                            $0.center = Self.point()
                            $0.radiusKm = 2
                            $0.sortOrder = sort
                            $0.pageSize = 40
                            $0.pageToken = token
                        }
                    )
                    #expect(page.results.count <= 40)
                    results += page.results
                    token = page.nextPageToken
                } while !token.isEmpty && results.count <= 300
                #expect(results.count == 300, "\(sort)")
                #expect(Set(results.map(\.activity.activityID)) == Set(ids), "\(sort)")
                typealias Key = (net: Int64, distance: Double, id: String)
                func key(_ result: Skiff_Bucketlist_V1_NearbyActivity) -> Key {
                    let net = sort == .popularity ? result.activity.upVotes - result.activity.downVotes : 0
                    return (net, result.distanceKm, result.activity.activityID)
                }
                func precedes(_ a: Key, _ b: Key) -> Bool {
                    if a.net != b.net { return a.net > b.net }
                    if a.distance != b.distance { return a.distance < b.distance }
                    return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
                }
                let keys = results.map(key)
                #expect(zip(keys, keys.dropFirst()).allSatisfy { precedes($0, $1) }, "\(sort)")
            }
        }
    }

    @Test("--storage bucketlist=memory keeps BucketList in memory while the rest stays in SQLite")
    func perServiceStorage() async throws {
        try await withTemporaryDatabasePath { path in
            let arguments = ["--storage", "bucketlist=memory"]
            let (listID, auth) = try await withApp(.sqlite, path: path, extraArguments: arguments) { app, connection in
                let client = BucketListClient(transport: connection)
                let (ann, _) = try await Self.users(app, connection)
                let list = try await client.createBucketList(
                    .with { $0.bucketList = Self.newList("Volatile") },
                    metadata: ann.auth
                )
                return (list.bucketList.bucketListID, ann.auth)
            }
            try await withApp(.sqlite, path: path, extraArguments: arguments) { _, connection in
                let client = BucketListClient(transport: connection)
                // The session (Accounts, SQLite) survived; the list (BucketList, memory) did not.
                let mine = try await client.listMyBucketLists(.init(), metadata: auth).bucketLists
                #expect(mine.isEmpty)
                await expectStatus(.notFound) { _ = try await client.getBucketList(.with { $0.bucketListID = listID }) }
            }
        }
    }
}
