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
            ["echo-unary", "--target", "127.0.0.1:7700,"],
            ["echo-unary", "--target", "127.0.0.1:7700,localhost"],
            ["echo-unary", "--target", "127.0.0.1:7700,127.0.0.1:99999"],
            // Fewer connections than servers would leave one without calls.
            ["echo-unary", "--target", "127.0.0.1:7700,127.0.0.1:7701"],
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

    @Test("several targets: comma-separated, connections assigned in turn")
    func severalTargets() throws {
        let command = try #require(
            try SkiffLoadCommand.parseAsRoot([
                "marketplace", "--target", "127.0.0.1:7700, 10.0.0.2:7701", "--connections", "4",
            ]) as? RunCommand
        )
        let targets = try command.parsedTargets()
        #expect(targets == [LoadTarget(host: "127.0.0.1", port: 7700), LoadTarget(host: "10.0.0.2", port: 7701)])
        #expect(command.settings.target == "127.0.0.1:7700, 10.0.0.2:7701")
        #expect(
            LoadTarget.assignments(connections: 4, targets: targets).map(\.description) == [
                "127.0.0.1:7700", "10.0.0.2:7701", "127.0.0.1:7700", "10.0.0.2:7701",
            ]
        )
        #expect(LoadTarget.assignments(connections: 3, targets: targets).map(\.port) == [7700, 7701, 7700])
        #expect(try LoadTarget.parseList("db-a.campus.edu:7700") == [LoadTarget(host: "db-a.campus.edu", port: 7700)])
        #expect(try LoadTarget.parseList("[::1]:7700") == [LoadTarget(host: "::1", port: 7700)])
        #expect(LoadTarget(host: "::1", port: 7700).description == "[::1]:7700")
        #expect(throws: LoadTargetError(value: "")) { try LoadTarget.parseList("a:1,,b:2") }
        #expect(throws: LoadTargetError(value: "b")) { try LoadTarget.parseList("a:1,b") }
    }

    @Test("compare takes two files")
    func compare() throws {
        let command = try #require(
            try SkiffLoadCommand.parseAsRoot(["compare", "a.json", "b.json"]) as? CompareCommand
        )
        #expect(command.a == "a.json" && command.b == "b.json")
    }
}
