import ArgumentParser
import Foundation
import SkiffLoad
import SkiffServerApp
import Testing

@Suite("campus scenario")
struct CampusLoadTests {
    @Test("seeds activities, votes and lost-and-found items through the real RPCs, runs the mix without errors")
    func campus() async throws {
        try await withServer { app, target in
            let state = temporaryPath("state.json")
            defer { removeTemporaryPath(state) }
            let arguments = [
                "campus", "--target", target, "--concurrency", "8", "--connections", "2", "--duration", "1",
                "--warmup", "0.2", "--seed-users", "4", "--seed-activities", "40", "--seed-votes", "60",
                "--seed-items", "40", "--state", state, "--seed-concurrency", "16",
            ]
            let first = try #require(try SkiffLoadCommand.parseAsRoot(arguments) as? RunCommand)
            let result = try await first.execute(tokenSource: outboxTokens(app), progress: .silent)
            try expectWellFormed(result)
            let seeded = try CampusState.load(state + ".campus.json")
            #expect(seeded.activities.count == 40)
            #expect(seeded.votes == 60)
            #expect(seeded.items.count == 40)
            // Every kind of call in the mix answered, each timed on its own.
            let latencies = result.scenarioLatencies ?? [:]
            for rpc in ["FindNearbyActivities", "ListTrendingActivities", "VoteActivity", "SearchItems"] {
                let latency = try #require(latencies["rpc \(rpc)"], "\(latencies.keys.sorted())")
                #expect(latency.p50 > 0 && latency.p50 <= latency.p99)
            }

            // A second run seeds nothing new and still succeeds.
            let second = try #require(
                try SkiffLoadCommand.parseAsRoot(arguments + ["--duration", "0.5"]) as? RunCommand
            )
            try expectWellFormed(try await second.execute(progress: .silent))
            #expect(try CampusState.load(state + ".campus.json") == seeded)
        }
    }
}
