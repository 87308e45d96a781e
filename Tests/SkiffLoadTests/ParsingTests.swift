import ArgumentParser
import SkiffLoad
import Testing

@Suite("skiff-load argument parsing")
struct ParsingTests {
    @Test("run with every option")
    func runOptions() throws {
        let command = try #require(
            try SkiffLoadCommand.parseAsRoot([
                "run", "echo-stream", "--target", "10.0.0.1:7701", "--concurrency", "32", "--connections", "4",
                "--rate", "5000", "--duration", "30", "--warmup", "2", "--max-calls", "1000", "--payload-size", "512",
                "--messages", "100", "--json", "out.json", "--allow-errors", "--quiet",
            ]) as? RunCommand
        )
        let s = command.settings
        #expect(s.scenario == "echo-stream")
        #expect(s.target == "10.0.0.1:7701")
        #expect(s.concurrency == 32 && s.connections == 4)
        #expect(s.rate == 5000 && s.mode == "open")
        #expect(s.duration == 30 && s.warmup == 2 && s.maxCalls == 1000)
        #expect(s.payloadSize == 512 && s.messagesPerCall == 100)
        #expect(command.json == "out.json" && command.allowErrors && command.quiet)
    }

    @Test("run is the default subcommand; defaults are closed loop")
    func defaults() throws {
        let command = try #require(
            try SkiffLoadCommand.parseAsRoot(["marketplace", "--mail-log", "s.log"]) as? RunCommand
        )
        #expect(command.settings.mode == "closed")
        #expect(command.target == "127.0.0.1:7700")
        #expect(command.state == ".skiff-load-state.json")
        let options = command.scenarioOptions()
        #expect(options.tokenSource is MailLogTokenSource)
        #expect(options.seedUsers == 20 && options.seedListings == 200)
    }

    @Test(
        "bad arguments are rejected",
        arguments: [
            ["no-such-scenario"],
            ["echo-unary", "--target", "localhost"],
            ["echo-unary", "--target", ":7700"],
            ["echo-unary", "--concurrency", "0"],
            ["echo-unary", "--rate", "-1"],
            ["echo-unary", "--duration", "0"],
            ["echo-unary", "--max-calls", "0"],
            ["compare", "only-one.json"],
        ]
    )
    func rejected(_ arguments: [String]) {
        #expect(throws: (any Error).self) { try SkiffLoadCommand.parseAsRoot(arguments) }
    }

    @Test("compare takes two files")
    func compare() throws {
        let command = try #require(
            try SkiffLoadCommand.parseAsRoot(["compare", "a.json", "b.json"]) as? CompareCommand
        )
        #expect(command.a == "a.json" && command.b == "b.json")
    }
}
