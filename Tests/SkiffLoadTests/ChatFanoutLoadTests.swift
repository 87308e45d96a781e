import ArgumentParser
import Foundation
import SkiffLoad
import Testing

@Suite("chat-fanout scenario")
struct ChatFanoutLoadTests {
    @Test("keeps feeds open, waits for every delivery and reports the delivery latency")
    func chatFanout() async throws {
        try await withServer { app, target in
            let state = temporaryPath("state.json")
            defer { removeTemporaryPath(state) }
            let arguments = [
                "chat-fanout", "--target", target, "--rate", "50", "--connections", "2", "--duration", "1",
                "--warmup", "0.2", "--seed-users", "3", "--seed-listings", "0", "--subscribers", "30",
                "--state", state,
            ]
            let command = try #require(try SkiffLoadCommand.parseAsRoot(arguments) as? RunCommand)
            let result = try await command.execute(tokenSource: outboxTokens(app), progress: .silent)
            try expectWellFormed(result)
            let delivery = try #require(result.scenarioLatencies?["delivery (sent_at → arrival)"])
            // Every measured call delivered to the recipient's 10 subscriptions.
            #expect(delivery.p50 > 0)
            #expect(delivery.max >= delivery.p99 && delivery.p99 >= delivery.p50)
            #expect(LoadReport.summary(result).contains("delivery (sent_at → arrival)"))
            let decoded = try LoadResult.decode(try result.jsonData())
            #expect(decoded.scenarioLatencies == result.scenarioLatencies)
        }
    }
}
