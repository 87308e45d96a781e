import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SwiftProtobuf
import Testing

extension BucketListServiceTests {
    @Test("20 signed-in users voting at once over the socket: the counts equal the votes", arguments: Backend.allCases)
    func concurrentVotes(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = BucketListClient(transport: connection)
            let accounts = AccountsClient(transport: connection)
            var voters: [User] = []
            for index in 0..<20 {
                voters.append(
                    try await signUpAndLogIn(
                        accounts,
                        mailer: app.mailer,
                        email: "v\(index)@campus.edu",
                        name: "V\(index)"
                    )
                )
            }
            let activity = try await client.createActivity(
                .with { $0.activity = Self.newActivity("Block party") },
                metadata: voters[0].auth
            ).activity
            let id = activity.activityID
            let all = voters
            // Each voter flips twice and ends up: up for even indexes, down for odd ones.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, voter) in all.enumerated() {
                    group.addTask {
                        for vote: Skiff_Bucketlist_V1_Vote in [.down, .up, index % 2 == 0 ? .up : .down] {
                            _ = try await client.voteActivity(
                                .with {
                                    $0.activityID = id
                                    $0.vote = vote
                                },
                                metadata: voter.auth
                            )
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counted = try await client.getActivity(.with { $0.activityID = id }, metadata: voters[1].auth).activity
            #expect(counted.upVotes == 10)
            #expect(counted.downVotes == 10)
            #expect(counted.myVote == .down)
        }
    }
}
