import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

extension BucketListServiceTests {
    @Test("A bucket list with activities, votes, comments and completions survives a restart on the same SQLite file")
    func survivesRestart() async throws {
        try await withTemporaryDatabasePath { path in
            struct Saved: Sendable {
                var ann: String
                var annAuth: Metadata
                var listID: String
                var activities: [Skiff_Bucketlist_V1_Activity]
                var entries: [Skiff_Bucketlist_V1_BucketListEntry]
                var comments: [Skiff_Bucketlist_V1_Comment]
                var profile: Skiff_Bucketlist_V1_Profile
                var list: Skiff_Bucketlist_V1_BucketListInfo
            }
            let saved = try await withApp(.sqlite, path: path) { app, connection in
                let client = BucketListClient(transport: connection)
                let (ann, bob) = try await Self.users(app, connection)
                let list = try await client.createBucketList(
                    .with { $0.bucketList = Self.newList("Keep me") },
                    metadata: ann.auth
                )
                .bucketList
                for (index, title) in ["Rafting", "Ballet", "Marathon"].enumerated() {
                    let activity = try await client.createActivity(
                        .with { $0.activity = Self.newActivity(title, northKm: Double(index)) },
                        metadata: bob.auth
                    ).activity
                    _ = try await client.addBucketListEntry(
                        .with {
                            $0.bucketListID = list.bucketListID
                            $0.activityID = activity.activityID
                        },
                        metadata: ann.auth
                    )
                    _ = try await client.voteActivity(
                        .with {
                            $0.activityID = activity.activityID
                            $0.vote = index == 1 ? .down : .up
                        },
                        metadata: ann.auth
                    )
                    _ = try await client.addComment(
                        .with {
                            $0.activityID = activity.activityID
                            $0.text = "Comment on \(title)"
                        },
                        metadata: ann.auth
                    )
                }
                let entries = try await client.listBucketListEntries(.with { $0.bucketListID = list.bucketListID })
                    .entries
                _ = try await client.completeBucketListEntry(
                    .with {
                        $0.bucketListID = list.bucketListID
                        $0.activityID = entries[0].activity.activityID
                        $0.completedAt = Google_Protobuf_Timestamp(date: Date(timeIntervalSince1970: 1_760_000_000))
                        $0.note = "Wet"
                    },
                    metadata: ann.auth
                )
                _ = try await client.followUser(.with { $0.userID = bob.id }, metadata: ann.auth)
                let after = try await client.listBucketListEntries(
                    .with { $0.bucketListID = list.bucketListID },
                    metadata: ann.auth
                )
                .entries
                var comments: [Skiff_Bucketlist_V1_Comment] = []
                for entry in after {
                    comments += try await client.listComments(.with { $0.activityID = entry.activity.activityID })
                        .comments
                }
                return Saved(
                    ann: ann.id,
                    annAuth: ann.auth,
                    listID: list.bucketListID,
                    activities: after.map(\.activity),
                    entries: after,
                    comments: comments,
                    profile: try await client.getProfile(.with { $0.userID = ann.id }, metadata: ann.auth).profile,
                    list: try await client.getBucketList(.with { $0.bucketListID = list.bucketListID }).bucketList
                )
            }
            #expect(saved.list.completedCount == 1)
            #expect(saved.list.pendingCount == 2)
            #expect(saved.activities.map(\.upVotes) == [1, 0, 1])

            try await withApp(.sqlite, path: path) { _, connection in
                let client = BucketListClient(transport: connection)
                // The session survived too, so the same caller sees the same data, own votes included.
                let entries = try await client.listBucketListEntries(
                    .with { $0.bucketListID = saved.listID },
                    metadata: saved.annAuth
                ).entries
                #expect(entries == saved.entries)
                #expect(entries.map(\.activity.myVote) == [.up, .down, .up])
                var comments: [Skiff_Bucketlist_V1_Comment] = []
                for entry in entries {
                    comments += try await client.listComments(.with { $0.activityID = entry.activity.activityID })
                        .comments
                }
                #expect(comments == saved.comments)
                #expect(
                    try await client.getBucketList(.with { $0.bucketListID = saved.listID }).bucketList == saved.list
                )
                #expect(
                    try await client.getProfile(.with { $0.userID = saved.ann }, metadata: saved.annAuth).profile
                        == saved.profile
                )
                let trending = try await client.listTrendingActivities(.init()).results.map(\.activity.activityID)
                #expect(Set(trending) == Set([entries[0].activity.activityID, entries[2].activity.activityID]))
            }
        }
    }
}
