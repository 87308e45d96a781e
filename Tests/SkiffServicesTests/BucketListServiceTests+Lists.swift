import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

extension BucketListServiceTests {
    @Test(
        "ListBucketListEntries: in the order they were added, over every page, however fast they were added",
        arguments: Backend.allCases
    )
    func entriesInOrderAdded(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            var activities: [String] = []
            for index in 0..<12 {
                activities.append(
                    try await client.createActivity(
                        .with { $0.activity = Self.newActivity("Activity \(index)") },
                        metadata: bob.auth
                    ).activity.activityID
                )
            }
            let list = try await client.createBucketList(
                .with { $0.bucketList = Self.newList("Order") },
                metadata: ann.auth
            ).bucketList
            // Shuffled, so that neither creation order nor id order is the order of adding.
            let added = activities.shuffled()
            for id in added {
                _ = try await client.addBucketListEntry(
                    .with {
                        $0.bucketListID = list.bucketListID
                        $0.activityID = id
                    },
                    metadata: ann.auth
                )
            }
            var listed: [String] = []
            var token = ""
            repeat {
                let page = try await client.listBucketListEntries(
                    .with {
                        $0.bucketListID = list.bucketListID
                        $0.pageSize = 5
                        $0.pageToken = token
                    },
                    metadata: ann.auth
                )
                listed += page.entries.map(\.activity.activityID)
                token = page.nextPageToken
            } while !token.isEmpty
            #expect(listed == added)
        }
    }

    @Test("Bucket lists: create, rename, entries, complete, counts; private lists hidden", arguments: Backend.allCases)
    func lists(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            let hike = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Hike") },
                metadata: bob.auth
            ).activity
            let swim = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Swim") },
                metadata: bob.auth
            ).activity

            let summer = try await client.createBucketList(
                .with { $0.bucketList = Self.newList(" Summer ") },
                metadata: ann.auth
            )
            .bucketList
            #expect(summer.bucketListID.hasPrefix("bkl_"))
            #expect(summer.name == "Summer")
            #expect(summer.ownerID == ann.id)
            // "Oldest first" orders by creation time (milliseconds): two lists made within one
            // millisecond are equally old, and their order is not the contract's.
            try await Task.sleep(for: .milliseconds(3))
            let secret = try await client.createBucketList(
                .with { $0.bucketList = Self.newList("Secret", .private) },
                metadata: ann.auth
            )
            .bucketList

            let entry = try await client.addBucketListEntry(
                .with {
                    $0.bucketListID = summer.bucketListID
                    $0.activityID = hike.activityID
                },
                metadata: ann.auth
            ).entry
            #expect(entry.activity.activityID == hike.activityID)
            #expect(!entry.completed)
            _ = try await client.addBucketListEntry(
                .with {
                    $0.bucketListID = summer.bucketListID
                    $0.activityID = swim.activityID
                },
                metadata: ann.auth
            )
            _ = try await client.addBucketListEntry(
                .with {
                    $0.bucketListID = secret.bucketListID
                    $0.activityID = swim.activityID
                },
                metadata: ann.auth
            )
            let day = Google_Protobuf_Timestamp(date: Date(timeIntervalSince1970: 1_750_000_000))
            let done = try await client.completeBucketListEntry(
                .with {
                    $0.bucketListID = summer.bucketListID
                    $0.activityID = hike.activityID
                    $0.completedAt = day
                    $0.note = " Worth it "
                },
                metadata: ann.auth
            ).entry
            #expect(done.completed)
            #expect(done.completedAt == day)
            #expect(done.note == "Worth it")
            let swimDone = try await client.completeBucketListEntry(
                .with {
                    $0.bucketListID = secret.bucketListID
                    $0.activityID = swim.activityID
                },
                metadata: ann.auth
            ).entry
            #expect(swimDone.completed)

            let mine = try await client.listMyBucketLists(.init(), metadata: ann.auth).bucketLists
            #expect(mine.map(\.name) == ["Summer", "Secret"])
            #expect(mine.map(\.pendingCount) == [1, 0])
            #expect(mine.map(\.completedCount) == [1, 1])

            // Others (and guests) see the public list only.
            let annLists = try await client.listUserBucketLists(.with { $0.userID = ann.id }, metadata: bob.auth)
                .bucketLists
            #expect(annLists.map(\.bucketListID) == [summer.bucketListID])
            let ownView = try await client.listUserBucketLists(.with { $0.userID = ann.id }, metadata: ann.auth)
                .bucketLists
            #expect(ownView.count == 2)
            #expect(
                try await client.getBucketList(.with { $0.bucketListID = summer.bucketListID }).bucketList
                    .completedCount == 1
            )
            await expectStatus(.notFound) {
                _ = try await client.getBucketList(.with { $0.bucketListID = secret.bucketListID }, metadata: bob.auth)
            }
            await expectStatus(.notFound) {
                _ = try await client.listBucketListEntries(.with { $0.bucketListID = secret.bucketListID })
            }
            let entries = try await client.listBucketListEntries(.with { $0.bucketListID = summer.bucketListID })
                .entries
            #expect(entries.map(\.activity.activityID) == [hike.activityID, swim.activityID])
            #expect(entries.map(\.completed) == [true, false])
            let secretEntries = try await client.listBucketListEntries(
                .with { $0.bucketListID = secret.bucketListID },
                metadata: ann.auth
            ).entries
            #expect(secretEntries.count == 1)

            // Profiles: others do not count the private list or its completion.
            let seen = try await client.getProfile(.with { $0.userID = ann.id }).profile
            #expect(seen.bucketListCount == 1)
            #expect(seen.completedActivityCount == 1)
            let own = try await client.getProfile(.with { $0.userID = ann.id }, metadata: ann.auth).profile
            #expect(own.bucketListCount == 2)
            #expect(own.completedActivityCount == 2)
            #expect(try await client.getProfile(.with { $0.userID = bob.id }).profile.activityCount == 2)

            // Un-complete, rename, make private, remove, delete.
            let undone = try await client.uncompleteBucketListEntry(
                .with {
                    $0.bucketListID = summer.bucketListID
                    $0.activityID = hike.activityID
                },
                metadata: ann.auth
            ).entry
            #expect(!undone.completed)
            #expect(!undone.hasCompletedAt)
            #expect(undone.note.isEmpty)
            let renamed = try await client.updateBucketList(
                .with {
                    $0.bucketList.bucketListID = summer.bucketListID
                    $0.bucketList.name = "Summer 2026"
                    $0.bucketList.visibility = .private
                    $0.updateMask.paths = ["name", "visibility"]
                },
                metadata: ann.auth
            ).bucketList
            #expect(renamed.name == "Summer 2026")
            #expect(renamed.visibility == .private)
            #expect(renamed.description_p == "Things to do")
            await expectStatus(.notFound) {
                _ = try await client.getBucketList(.with { $0.bucketListID = summer.bucketListID })
            }
            _ = try await client.removeBucketListEntry(
                .with {
                    $0.bucketListID = summer.bucketListID
                    $0.activityID = hike.activityID
                },
                metadata: ann.auth
            )
            _ = try await client.deleteBucketList(.with { $0.bucketListID = secret.bucketListID }, metadata: ann.auth)
            let after = try await client.listMyBucketLists(.init(), metadata: ann.auth).bucketLists
            #expect(after.map(\.bucketListID) == [summer.bucketListID])
            #expect(after.first?.pendingCount == 1)
        }
    }

    @Test(
        "Bucket lists: invalid input, guests, foreign public (PERMISSION_DENIED) and private (NOT_FOUND) lists",
        arguments: Backend.allCases
    )
    func listErrors(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            let activity = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Zoo") },
                metadata: bob.auth
            ).activity
            let open = try await client.createBucketList(
                .with { $0.bucketList = Self.newList("Open") },
                metadata: ann.auth
            ).bucketList
            let hidden = try await client.createBucketList(
                .with { $0.bucketList = Self.newList("Hidden", .private) },
                metadata: ann.auth
            )
            .bucketList
            _ = try await client.addBucketListEntry(
                .with {
                    $0.bucketListID = open.bucketListID
                    $0.activityID = activity.activityID
                },
                metadata: ann.auth
            )

            // Create.
            await expectStatus(.unauthenticated) {
                _ = try await client.createBucketList(.with { $0.bucketList = Self.newList("G") })
            }
            await expectStatus(.invalidArgument) { _ = try await client.createBucketList(.init(), metadata: ann.auth) }
            await expectStatus(.invalidArgument) {
                _ = try await client.createBucketList(.with { $0.bucketList = Self.newList(" ") }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.createBucketList(
                    .with { $0.bucketList = Self.newList(String(repeating: "n", count: 61)) },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.createBucketList(
                    .with { $0.bucketList = Self.newList("V", .unspecified) },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) {
                var list = Self.newList("D")
                list.description_p = String(repeating: "d", count: 501)
                _ = try await client.createBucketList(.with { $0.bucketList = list }, metadata: ann.auth)
            }
            await expectStatus(.alreadyExists) {
                _ = try await client.createBucketList(
                    .with { $0.bucketList = Self.newList("OPEN") },
                    metadata: ann.auth
                )
            }

            // Get and list.
            await expectStatus(.invalidArgument) { _ = try await client.getBucketList(.init()) }
            await expectStatus(.notFound) {
                _ = try await client.getBucketList(.with { $0.bucketListID = "bkl_missing" })
            }
            await expectStatus(.unauthenticated) { _ = try await client.listMyBucketLists(.init()) }
            await expectStatus(.invalidArgument) {
                _ = try await client.listMyBucketLists(.with { $0.pageToken = "x" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) { _ = try await client.listUserBucketLists(.init()) }
            await expectStatus(.invalidArgument) {
                _ = try await client.listUserBucketLists(.with { $0.userID = "ann" })
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.listUserBucketLists(
                    .with {
                        $0.userID = ann.id
                        $0.pageSize = -5
                    }
                )
            }
            await expectStatus(.invalidArgument) { _ = try await client.listBucketListEntries(.init()) }
            await expectStatus(.notFound) {
                _ = try await client.listBucketListEntries(.with { $0.bucketListID = "bkl_missing" })
            }

            // Update.
            func update(_ id: String, _ paths: [String], _ auth: Metadata, name: String = "New") async throws {
                _ = try await client.updateBucketList(
                    .with {
                        $0.bucketList.bucketListID = id
                        $0.bucketList.name = name
                        $0.updateMask.paths = paths
                    },
                    metadata: auth
                )
            }
            await expectStatus(.unauthenticated) { try await update(open.bucketListID, ["name"], [:]) }
            await expectStatus(.invalidArgument) { try await update("", ["name"], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(open.bucketListID, [], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(open.bucketListID, ["owner_id"], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(open.bucketListID, ["visibility"], ann.auth) }
            await expectStatus(.invalidArgument) { try await update(open.bucketListID, ["name"], ann.auth, name: "") }
            await expectStatus(.alreadyExists) {
                try await update(open.bucketListID, ["name"], ann.auth, name: "hidden")
            }
            await expectStatus(.notFound) { try await update("bkl_missing", ["name"], ann.auth) }
            await expectStatus(.permissionDenied) { try await update(open.bucketListID, ["name"], bob.auth) }
            await expectStatus(.notFound) { try await update(hidden.bucketListID, ["name"], bob.auth) }

            // Delete.
            await expectStatus(.unauthenticated) {
                _ = try await client.deleteBucketList(.with { $0.bucketListID = open.bucketListID })
            }
            await expectStatus(.invalidArgument) { _ = try await client.deleteBucketList(.init(), metadata: ann.auth) }
            await expectStatus(.permissionDenied) {
                _ = try await client.deleteBucketList(.with { $0.bucketListID = open.bucketListID }, metadata: bob.auth)
            }
            await expectStatus(.notFound) {
                _ = try await client.deleteBucketList(
                    .with { $0.bucketListID = hidden.bucketListID },
                    metadata: bob.auth
                )
            }

            // Entries: add, remove, complete, un-complete.
            func entryCall(_ rpc: String, _ listID: String, _ activityID: String, _ auth: Metadata) async throws {
                switch rpc {
                case "add":
                    _ = try await client.addBucketListEntry(
                        .with {
                            $0.bucketListID = listID
                            $0.activityID = activityID
                        },
                        metadata: auth
                    )
                case "remove":
                    _ = try await client.removeBucketListEntry(
                        .with {
                            $0.bucketListID = listID
                            $0.activityID = activityID
                        },
                        metadata: auth
                    )
                case "complete":
                    _ = try await client.completeBucketListEntry(
                        .with {
                            $0.bucketListID = listID
                            $0.activityID = activityID
                        },
                        metadata: auth
                    )
                default:
                    _ = try await client.uncompleteBucketListEntry(
                        .with {
                            $0.bucketListID = listID
                            $0.activityID = activityID
                        },
                        metadata: auth
                    )
                }
            }
            for rpc in ["add", "remove", "complete", "uncomplete"] {
                await expectStatus(.unauthenticated) {
                    try await entryCall(rpc, open.bucketListID, activity.activityID, [:])
                }
                await expectStatus(.invalidArgument) { try await entryCall(rpc, "", activity.activityID, ann.auth) }
                await expectStatus(.invalidArgument) { try await entryCall(rpc, open.bucketListID, "", ann.auth) }
                await expectStatus(.notFound) { try await entryCall(rpc, "bkl_missing", activity.activityID, ann.auth) }
                await expectStatus(.permissionDenied) {
                    try await entryCall(rpc, open.bucketListID, activity.activityID, bob.auth)
                }
                await expectStatus(.notFound) {
                    try await entryCall(rpc, hidden.bucketListID, activity.activityID, bob.auth)
                }
            }
            await expectStatus(.alreadyExists) {
                try await entryCall("add", open.bucketListID, activity.activityID, ann.auth)
            }
            await expectStatus(.notFound) { try await entryCall("add", open.bucketListID, "act_missing", ann.auth) }
            for rpc in ["remove", "complete", "uncomplete"] {
                await expectStatus(.notFound) {
                    try await entryCall(rpc, hidden.bucketListID, activity.activityID, ann.auth)
                }
            }
            // Completion dates and notes.
            func complete(_ date: Date, note: String = "") async throws {
                _ = try await client.completeBucketListEntry(
                    .with {
                        $0.bucketListID = open.bucketListID
                        $0.activityID = activity.activityID
                        $0.completedAt = Google_Protobuf_Timestamp(date: date)
                        $0.note = note
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) { try await complete(Date().addingTimeInterval(3 * 86_400)) }
            await expectStatus(.invalidArgument) { try await complete(Date(timeIntervalSince1970: 900_000_000)) }
            // Timestamps at the ends of what their seconds hold: refused, the server carries on.
            for seconds in [Int64.min, Int64.max] {
                await expectStatus(.invalidArgument) {
                    _ = try await client.completeBucketListEntry(
                        .with {
                            $0.bucketListID = open.bucketListID
                            $0.activityID = activity.activityID
                            $0.completedAt = .with { $0.seconds = seconds }
                        },
                        metadata: ann.auth
                    )
                }
            }
            await expectStatus(.invalidArgument) {
                try await complete(Date(), note: String(repeating: "n", count: 501))
            }
            try await complete(Date())
        }
    }

    @Test("Follows: follow, idempotent, lists, unfollow, profile counters; errors", arguments: Backend.allCases)
    func follows(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let (ann, bob) = try await Self.users(app, connection)
            let follow = try await client.followUser(.with { $0.userID = bob.id }, metadata: ann.auth).follow
            #expect(follow.userID == bob.id)
            let again = try await client.followUser(.with { $0.userID = bob.id }, metadata: ann.auth).follow
            #expect(again == follow)
            _ = try await client.followUser(.with { $0.userID = ann.id }, metadata: bob.auth)

            #expect(try await client.listFollowers(.with { $0.userID = bob.id }).followers.map(\.userID) == [ann.id])
            #expect(try await client.listFollowing(.with { $0.userID = ann.id }).following.map(\.userID) == [bob.id])
            let profile = try await client.getProfile(.with { $0.userID = bob.id }, metadata: ann.auth).profile
            #expect(profile.followerCount == 1)
            #expect(profile.followingCount == 1)
            #expect(profile.followedByMe)
            #expect(try await client.getProfile(.with { $0.userID = bob.id }).profile.followedByMe == false)

            _ = try await client.unfollowUser(.with { $0.userID = bob.id }, metadata: ann.auth)
            _ = try await client.unfollowUser(.with { $0.userID = bob.id }, metadata: ann.auth)
            #expect(try await client.listFollowers(.with { $0.userID = bob.id }).followers.isEmpty)

            await expectStatus(.unauthenticated) { _ = try await client.followUser(.with { $0.userID = bob.id }) }
            await expectStatus(.unauthenticated) { _ = try await client.unfollowUser(.with { $0.userID = bob.id }) }
            await expectStatus(.invalidArgument) { _ = try await client.followUser(.init(), metadata: ann.auth) }
            await expectStatus(.invalidArgument) {
                _ = try await client.followUser(.with { $0.userID = "bob" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.followUser(.with { $0.userID = ann.id }, metadata: ann.auth)
            }
            await expectStatus(.notFound) {
                _ = try await client.followUser(.with { $0.userID = "usr_AAAAAAAAAAAAAAAAAAAAAA" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.unfollowUser(.with { $0.userID = "x" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) { _ = try await client.listFollowers(.init()) }
            await expectStatus(.invalidArgument) {
                _ = try await client.listFollowers(
                    .with {
                        $0.userID = bob.id
                        $0.pageToken = "bogus"
                    }
                )
            }
            await expectStatus(.invalidArgument) { _ = try await client.listFollowing(.with { $0.userID = "x" }) }
            await expectStatus(.invalidArgument) { _ = try await client.getProfile(.init()) }
        }
    }
}
