import ArgumentParser
import Foundation
import SkiffAccounts
import SkiffLoad
import SkiffServerApp
import Testing

/// Reads verification tokens from the in-process server's outbox.
func outboxTokens(_ app: Application) -> ClosureTokenSource {
    ClosureTokenSource { email, _ in
        for message in app.mailer.messages(to: email).reversed() {
            for line in message.body.split(separator: "\n") where line.hasPrefix("Verification token: ") {
                return String(line.dropFirst("Verification token: ".count))
            }
        }
        throw SeedingError(description: "no verification mail to \(email)")
    }
}

@Suite("marketplace scenario")
struct MarketplaceLoadTests {
    @Test("seeds through the real RPCs, runs the mix without errors, reuses the state file")
    func marketplace() async throws {
        try await withServer { app, target in
            let state = temporaryPath("state.json")
            defer { removeTemporaryPath(state) }
            let arguments = [
                "marketplace", "--target", target, "--concurrency", "8", "--connections", "2", "--duration", "1",
                "--warmup", "0.2", "--seed-users", "4", "--seed-listings", "30", "--state", state, "--seed-concurrency",
                "16",
            ]
            let first = try #require(try SkiffLoadCommand.parseAsRoot(arguments) as? RunCommand)
            let result = try await first.execute(tokenSource: outboxTokens(app), progress: .silent)
            try expectWellFormed(result)
            let seeded = try MarketplaceState.load(state)
            #expect(seeded.users.count == 4)
            #expect(seeded.listings.count == 30)
            // Per-RPC latencies of the measured window, beside the mix's: searches are two thirds of it.
            let search = try #require(
                result.scenarioLatencies?["rpc SearchListings"],
                "\(result.scenarioLatencies ?? [:])"
            )
            #expect(search.p50 > 0 && search.p50 <= search.p99)

            // A second run seeds nothing new (no token source needed) and still succeeds.
            let second = try #require(
                try SkiffLoadCommand.parseAsRoot(arguments + ["--rate", "100", "--duration", "0.5"]) as? RunCommand
            )
            let again = try await second.execute(progress: .silent)
            try expectWellFormed(again)
            #expect(try MarketplaceState.load(state) == seeded)

            // Asking for more accounts without a token source explains what to do.
            let more = try #require(try SkiffLoadCommand.parseAsRoot(arguments + ["--seed-users", "5"]) as? RunCommand)
            await #expect(throws: SeedingError.self) { _ = try await more.execute(progress: .silent) }
        }
    }

    @Test("tokens are found in a debug server log")
    func mailLog() async throws {
        let path = temporaryPath("server.log")
        defer { removeTemporaryPath(path) }
        let log = """
            2026-01-01T00:00:00+0000 info skiff.server : mail.subject=Verify mail.to=a@campus.edu Mail queued in outbox
            2026-01-01T00:00:00+0000 debug skiff.server : mail.body=Welcome, load-x-0! Confirm this address to start using Skiff.

            Verification token: tok-A_1
             mail.to=a@campus.edu Mail body
            2026-01-01T00:00:01+0000 debug skiff.server : mail.body=Welcome, load-x-1! Confirm.

            Verification token: tok-B_2
             mail.to=b@campus.edu Mail body

            """
        try log.write(toFile: path, atomically: true, encoding: .utf8)
        let source = MailLogTokenSource(path: path, timeout: .milliseconds(200))
        #expect(try await source.verificationToken(email: "a@campus.edu", displayName: "load-x-0") == "tok-A_1")
        #expect(try await source.verificationToken(email: "b@campus.edu", displayName: "load-x-1") == "tok-B_2")
        await #expect(throws: SeedingError.self) {
            _ = try await source.verificationToken(email: "c@campus.edu", displayName: "load-x-2")
        }
    }
}
