import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

typealias BucketListClient = Skiff_Bucketlist_V1_BucketList.Client

/// The BucketList service through its generated typed client, over a real socket, on both storage backends:
/// each RPC's happy path, invalid input, guests and permissions, with exact status codes.
@Suite("BucketList end to end")
struct BucketListServiceTests {
    static let campus = (latitude: 36.1447, longitude: -86.8027)

    static func point(northKm km: Double = 0) -> Skiff_Bucketlist_V1_GeoPoint {
        .with {
            $0.latitude = campus.latitude + km / 111.195
            $0.longitude = campus.longitude
        }
    }

    static func newActivity(_ title: String, northKm: Double = 0) -> Skiff_Bucketlist_V1_Activity {
        .with {
            $0.title = title
            $0.description_p = "Meet at the gate"
            $0.place = .with {
                $0.name = "Radnor Lake"
                $0.point = point(northKm: northKm)
            }
            $0.tags = ["Outdoors", "outdoors", "morning"]
        }
    }

    static func newList(
        _ name: String,
        _ visibility: Skiff_Bucketlist_V1_Visibility = .public
    )
        -> Skiff_Bucketlist_V1_BucketListInfo
    {
        .with {
            $0.name = name
            $0.description_p = "Things to do"
            $0.visibility = visibility
        }
    }

    typealias User = (id: String, auth: Metadata)

    /// Two signed-in users.
    static func users(_ app: Application, _ connection: ClientConnection) async throws -> (ann: User, bob: User) {
        let accounts = AccountsClient(transport: connection)
        let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
        let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")
        return (ann, bob)
    }

    @Test("Activities: create, get (guest), update, nearby, vote, trending, delete", arguments: Backend.allCases)
    func activities(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)

            let created = try await client.createActivity(
                .with { $0.activity = Self.newActivity("  Sunrise hike ") },
                metadata: ann.auth
            )
            .activity
            #expect(created.activityID.hasPrefix("act_"))
            #expect(created.ownerID == ann.id)
            #expect(created.title == "Sunrise hike")
            #expect(created.tags == ["outdoors", "morning"])
            #expect(created.myVote == .none)
            #expect(!created.hasStartsAt)

            let read = try await client.getActivity(.with { $0.activityID = created.activityID }).activity
            #expect(read == created)

            let start = Google_Protobuf_Timestamp(date: Date(timeIntervalSince1970: 1_790_000_000))
            let updated = try await client.updateActivity(
                .with {
                    $0.activity.activityID = created.activityID
                    $0.activity.title = "Sunset hike"
                    $0.activity.startsAt = start
                    $0.activity.description_p = "ignored: not in the mask"
                    $0.updateMask.paths = ["title", "starts_at"]
                },
                metadata: ann.auth
            ).activity
            #expect(updated.title == "Sunset hike")
            #expect(updated.startsAt == start)
            #expect(updated.description_p == "Meet at the gate")
            // Start times outside the years 1 to 9999, down to what their seconds hold: refused, the server
            // carries on.
            for seconds: Int64 in [.min, -62_135_596_801, 253_402_300_800, 9_300_000_000_000_000, .max] {
                let broken = Google_Protobuf_Timestamp.with { $0.seconds = seconds }
                let created = await expectStatus(.invalidArgument) {
                    _ = try await client.createActivity(
                        .with {
                            $0.activity = Self.newActivity("Timeless")
                            $0.activity.startsAt = broken
                        },
                        metadata: ann.auth
                    )
                }
                #expect(created?.message.contains("starts_at") == true)
                await expectStatus(.invalidArgument) {
                    _ = try await client.updateActivity(
                        .with {
                            $0.activity.activityID = updated.activityID
                            $0.activity.startsAt = broken
                            $0.updateMask.paths = ["starts_at"]
                        },
                        metadata: ann.auth
                    )
                }
            }

            let far = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Far", northKm: 30) },
                metadata: bob.auth
            )
            .activity
            let near = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Near", northKm: 2) },
                metadata: bob.auth
            )
            .activity

            let voted = try await client.voteActivity(
                .with {
                    $0.activityID = near.activityID
                    $0.vote = .up
                },
                metadata: ann.auth
            ).activity
            #expect(voted.upVotes == 1)
            #expect(voted.myVote == .up)
            _ = try await client.voteActivity(
                .with {
                    $0.activityID = updated.activityID
                    $0.vote = .down
                },
                metadata: bob.auth
            )

            let nearby = try await client.findNearbyActivities(
                .with {
                    $0.center = Self.point()
                    $0.radiusKm = 10
                    $0.pageSize = 1
                },
                metadata: ann.auth
            )
            #expect(nearby.results.map(\.activity.activityID) == [updated.activityID])
            #expect(nearby.results.first?.activity.downVotes == 1)
            let rest = try await client.findNearbyActivities(
                .with {
                    $0.center = Self.point()
                    $0.radiusKm = 10
                    $0.pageSize = 1
                    $0.pageToken = nearby.nextPageToken
                },
                metadata: ann.auth
            )
            #expect(rest.results.map(\.activity.activityID) == [near.activityID])
            #expect(rest.results.first?.activity.myVote == .up)
            #expect(abs((rest.results.first?.distanceKm ?? 0) - 2) < 0.01)
            #expect(rest.nextPageToken.isEmpty)

            let popular = try await client.findNearbyActivities(
                .with {
                    $0.center = Self.point()
                    $0.radiusKm = 50
                    $0.sortOrder = .popularity
                }
            )
            #expect(
                popular.results.map(\.activity.activityID) == [near.activityID, far.activityID, updated.activityID]
            )
            // Guests see no vote of their own.
            #expect(popular.results.allSatisfy { $0.activity.myVote == .none })

            let trending = try await client.listTrendingActivities(.with { $0.center = Self.point() })
            #expect(trending.results.map(\.activity.activityID) == [near.activityID])
            let score = try #require(trending.results.first?.score)
            #expect(score > 0.99 && score <= 1)
            let global = try await client.listTrendingActivities(.with { $0.windowHours = 1 })
            #expect(global.results.map(\.activity.activityID) == [near.activityID])

            // Clearing the vote.
            let cleared = try await client.voteActivity(
                .with {
                    $0.activityID = near.activityID
                    $0.vote = .none
                },
                metadata: ann.auth
            ).activity
            #expect(cleared.upVotes == 0)
            #expect(cleared.myVote == .none)

            // Only the owner deletes.
            await expectStatus(.permissionDenied) {
                _ = try await client.deleteActivity(.with { $0.activityID = near.activityID }, metadata: ann.auth)
            }
            _ = try await client.deleteActivity(.with { $0.activityID = near.activityID }, metadata: bob.auth)
            await expectStatus(.notFound) {
                _ = try await client.getActivity(.with { $0.activityID = near.activityID })
            }
        }
    }

    @Test(
        "Activities: every invalid input, guest write and foreign write has its exact code",
        arguments: Backend.allCases
    )
    func activityErrors(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            let activity = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Kayak") },
                metadata: ann.auth
            )
            .activity
            let id = activity.activityID

            // Guests cannot write.
            await expectStatus(.unauthenticated) {
                _ = try await client.createActivity(.with { $0.activity = Self.newActivity("X") })
            }
            await expectStatus(.unauthenticated) {
                _ = try await client.voteActivity(
                    .with {
                        $0.activityID = id
                        $0.vote = .up
                    }
                )
            }
            await expectStatus(.unauthenticated) {
                _ = try await client.deleteActivity(.with { $0.activityID = id })
            }
            // A bad token fails even reads.
            await expectStatus(.unauthenticated) {
                _ = try await client.getActivity(
                    .with { $0.activityID = id },
                    metadata: ["authorization": "Bearer nope"]
                )
            }

            // Create: each field.
            let invalid: [(String, (inout Skiff_Bucketlist_V1_Activity) -> Void)] = [
                ("empty title", { $0.title = "  " }),
                ("long title", { $0.title = String(repeating: "t", count: 101) }),
                ("long description", { $0.description_p = String(repeating: "d", count: 2001) }),
                ("no place", { $0.clearPlace() }),
                ("no point", { $0.place.clearPoint() }),
                ("empty place name", { $0.place.name = "" }),
                ("latitude", { $0.place.point.latitude = 91 }),
                ("longitude", { $0.place.point.longitude = -181 }),
                ("image id", { $0.imageID = "not-an-image" }),
                ("too many tags", { $0.tags = (0..<11).map { "t\($0)" } }),
                ("long tag", { $0.tags = [String(repeating: "x", count: 31)] }),
            ]
            for (name, mutate) in invalid {
                var proto = Self.newActivity("Valid")
                mutate(&proto)
                let error = await expectStatus(.invalidArgument) {
                    _ = try await client.createActivity(.with { $0.activity = proto }, metadata: ann.auth)
                }
                #expect(error?.message.isEmpty == false, "\(name)")
            }
            await expectStatus(.invalidArgument) { _ = try await client.createActivity(.init(), metadata: ann.auth) }

            // Get.
            await expectStatus(.invalidArgument) { _ = try await client.getActivity(.init()) }
            await expectStatus(.notFound) { _ = try await client.getActivity(.with { $0.activityID = "act_missing" }) }

            // Update.
            func update(
                _ paths: [String],
                _ auth: Metadata,
                _ mutate: (inout Skiff_Bucketlist_V1_Activity) -> Void = { _ in }
            )
                async throws
            {
                var proto = Self.newActivity("Renamed")
                proto.activityID = id
                mutate(&proto)
                _ = try await client.updateActivity(
                    .with {
                        $0.activity = proto
                        $0.updateMask.paths = paths
                    },
                    metadata: auth
                )
            }
            await expectStatus(.unauthenticated) { try await update(["title"], [:]) }
            await expectStatus(.invalidArgument) { try await update([], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(["owner_id"], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(["title"], ann.auth) { $0.title = "" } }
            await expectStatus(.invalidArgument) {
                try await update(["place"], ann.auth) { $0.place.point.latitude = -95 }
            }
            await expectStatus(.invalidArgument) { try await update(["place"], ann.auth) { $0.clearPlace() } }
            await expectStatus(.invalidArgument) { try await update(["title"], ann.auth) { $0.activityID = "" } }
            await expectStatus(.notFound) { try await update(["title"], ann.auth) { $0.activityID = "act_missing" } }
            await expectStatus(.permissionDenied) { try await update(["title"], bob.auth) }

            // Delete.
            await expectStatus(.invalidArgument) { _ = try await client.deleteActivity(.init(), metadata: ann.auth) }
            await expectStatus(.notFound) {
                _ = try await client.deleteActivity(.with { $0.activityID = "act_missing" }, metadata: ann.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await client.deleteActivity(.with { $0.activityID = id }, metadata: bob.auth)
            }

            // Nearby.
            func nearby(_ mutate: (inout Skiff_Bucketlist_V1_FindNearbyActivitiesRequest) -> Void) async throws {
                var request = Skiff_Bucketlist_V1_FindNearbyActivitiesRequest.with {
                    $0.center = Self.point()
                    $0.radiusKm = 5
                }
                mutate(&request)
                _ = try await client.findNearbyActivities(request)
            }
            try await nearby { _ in }
            await expectStatus(.invalidArgument) { try await nearby { $0.clearCenter() } }
            await expectStatus(.invalidArgument) { try await nearby { $0.radiusKm = 0 } }
            await expectStatus(.invalidArgument) { try await nearby { $0.radiusKm = 100.5 } }
            await expectStatus(.invalidArgument) { try await nearby { $0.center.latitude = 90.5 } }
            await expectStatus(.invalidArgument) { try await nearby { $0.sortOrder = .UNRECOGNIZED(9) } }
            await expectStatus(.invalidArgument) { try await nearby { $0.pageSize = -1 } }
            await expectStatus(.invalidArgument) { try await nearby { $0.pageToken = "bogus" } }

            // Trending.
            func trending(_ mutate: (inout Skiff_Bucketlist_V1_ListTrendingActivitiesRequest) -> Void) async throws {
                var request = Skiff_Bucketlist_V1_ListTrendingActivitiesRequest()
                mutate(&request)
                _ = try await client.listTrendingActivities(request)
            }
            try await trending { _ in }
            await expectStatus(.invalidArgument) { try await trending { $0.radiusKm = 5 } }
            await expectStatus(.invalidArgument) {
                try await trending {
                    $0.center = Self.point()
                    $0.radiusKm = 101
                }
            }
            await expectStatus(.invalidArgument) { try await trending { $0.center.longitude = 200 } }
            await expectStatus(.invalidArgument) { try await trending { $0.windowHours = 721 } }
            await expectStatus(.invalidArgument) { try await trending { $0.windowHours = -1 } }
            await expectStatus(.invalidArgument) { try await trending { $0.limit = -1 } }

            // Vote.
            await expectStatus(.invalidArgument) {
                _ = try await client.voteActivity(.with { $0.activityID = id }, metadata: bob.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.voteActivity(.with { $0.vote = .up }, metadata: bob.auth)
            }
            await expectStatus(.notFound) {
                _ = try await client.voteActivity(
                    .with {
                        $0.activityID = "act_missing"
                        $0.vote = .up
                    },
                    metadata: bob.auth
                )
            }
        }
    }

    @Test("Comments: add, list oldest first (guest), delete by author or host; errors", arguments: Backend.allCases)
    func comments(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            let accounts = AccountsClient(transport: connection)
            let cat = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "cat@campus.edu", name: "Cat")
            let activity = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Open mic") },
                metadata: ann.auth
            )
            .activity
            let id = activity.activityID

            var ids: [String] = []
            for (index, user) in [bob, cat, bob].enumerated() {
                let comment = try await client.addComment(
                    .with {
                        $0.activityID = id
                        $0.text = "  comment \(index) "
                    },
                    metadata: user.auth
                ).comment
                #expect(comment.text == "comment \(index)")
                #expect(comment.authorID == user.id)
                ids.append(comment.commentID)
            }
            let first = try await client.listComments(
                .with {
                    $0.activityID = id
                    $0.pageSize = 2
                }
            )
            let second = try await client.listComments(
                .with {
                    $0.activityID = id
                    $0.pageSize = 2
                    $0.pageToken = first.nextPageToken
                }
            )
            #expect((first.comments + second.comments).map(\.text) == ["comment 0", "comment 1", "comment 2"])
            #expect(second.nextPageToken.isEmpty)
            #expect(try await client.getActivity(.with { $0.activityID = id }).activity.commentCount == 3)

            await expectStatus(.unauthenticated) {
                _ = try await client.addComment(
                    .with {
                        $0.activityID = id
                        $0.text = "hi"
                    }
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.addComment(.with { $0.activityID = id }, metadata: bob.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.addComment(
                    .with {
                        $0.activityID = id
                        $0.text = String(repeating: "c", count: 1001)
                    },
                    metadata: bob.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.addComment(.with { $0.text = "hi" }, metadata: bob.auth)
            }
            await expectStatus(.notFound) {
                _ = try await client.addComment(
                    .with {
                        $0.activityID = "act_missing"
                        $0.text = "hi"
                    },
                    metadata: bob.auth
                )
            }
            await expectStatus(.invalidArgument) { _ = try await client.listComments(.init()) }
            await expectStatus(.notFound) { _ = try await client.listComments(.with { $0.activityID = "act_missing" }) }
            await expectStatus(.invalidArgument) {
                _ = try await client.listComments(
                    .with {
                        $0.activityID = id
                        $0.pageToken = "bogus"
                    }
                )
            }

            await expectStatus(.unauthenticated) { _ = try await client.deleteComment(.with { $0.commentID = ids[0] }) }
            await expectStatus(.invalidArgument) { _ = try await client.deleteComment(.init(), metadata: bob.auth) }
            await expectStatus(.notFound) {
                _ = try await client.deleteComment(.with { $0.commentID = "cmt_missing" }, metadata: bob.auth)
            }
            // Cat may not delete Bob's comment; Bob (author) and Ann (host) may.
            await expectStatus(.permissionDenied) {
                _ = try await client.deleteComment(.with { $0.commentID = ids[0] }, metadata: cat.auth)
            }
            _ = try await client.deleteComment(.with { $0.commentID = ids[0] }, metadata: bob.auth)
            _ = try await client.deleteComment(.with { $0.commentID = ids[1] }, metadata: ann.auth)
            let left = try await client.listComments(.with { $0.activityID = id }).comments
            #expect(left.map(\.commentID) == [ids[2]])
        }
    }
}
