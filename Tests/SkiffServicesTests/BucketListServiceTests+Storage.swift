import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
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

    @Test("--storage bucketlist=memory keeps BucketList in memory while the rest stays in SQLite")
    func perServiceStorage() async throws {
        let path = temporaryDatabasePath()
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
