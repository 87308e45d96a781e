public import ArgumentParser
import Foundation
import SkiffClient
import SkiffCore
import SkiffHTTPClient

/// The `skiff-load` command: `run` (the default) a scenario against a server, or `compare` two results.
public struct SkiffLoadCommand: AsyncParsableCommand {
    /// The command's configuration.
    public static let configuration = CommandConfiguration(
        commandName: "skiff-load",
        abstract: "Load-test a running Skiff server and compare results.",
        subcommands: [RunCommand.self, CompareCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Creates the command (for ArgumentParser).
    public init() {}

    /// Parses the process arguments and runs; the executable's whole `main`.
    public static func start() async { await main() }
}

/// `skiff-load run <scenario>`: run a scenario, print a report, optionally write JSON.
public struct RunCommand: AsyncParsableCommand {
    /// The command's configuration.
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario against a server.",
        discussion: """
            Scenarios: \(LoadScenarios.names.joined(separator: ", ")). The echo scenarios need a server \
            started with --enable-test-service. `marketplace` seeds accounts and listings first; creating \
            accounts needs the verification tokens from the server's log: start it with \
            `--log-level debug 2> server.log` and pass `--mail-log server.log`. Seeded data is kept in \
            --state and reused by later runs.
            Exits non-zero if any call failed, unless --allow-errors.
            """
    )

    /// The scenario: see ``LoadScenarios``.
    @Argument(help: "The scenario: \(LoadScenarios.names.joined(separator: ", ")).")
    public var scenario: String

    /// host:port of the server, or of several separated by commas (connections go to each in turn).
    @Option(
        help: ArgumentHelp(
            "host:port of the server; several separated by commas (e.g. two servers on one database): "
                + "the connections go to each in turn, and calls round-robin over the connections.",
            valueName: "host:port[,host:port…]"
        )
    )
    public var target = "127.0.0.1:7700"

    /// Calls in flight (closed loop; open loop caps calls in flight at 10,000 instead).
    @Option(help: "Calls in flight (closed loop; open loop caps calls in flight at 10,000 instead).")
    public var concurrency = 16

    /// Connections the calls are spread over.
    @Option(help: "Connections the calls are spread over.")
    public var connections = 1

    /// Where closed-loop workers run over skiff/1: `loop` or `pool`.
    @Option(
        help: ArgumentHelp(
            "Closed loop over skiff/1: loop (default) runs each worker on one connection's event loop and "
                + "sends its calls over that connection, so no call wakes another thread; pool runs workers "
                + "on Swift's global executor, each call on the next connection.",
            valueName: "loop|pool"
        )
    )
    public var workerExecutor = "loop"

    /// The protocol calls speak: `skiff` (skiff/1), or `grpc`, `grpc-web`, `connect` over HTTP/2.
    @Option(
        name: .customLong("protocol"),
        help: "The protocol: skiff (default), grpc, grpc-web or connect (the last three over HTTP/2)."
    )
    public var callProtocol = "skiff"

    /// Open loop: start this many calls per second (latency from the intended start time).
    @Option(help: "Open loop: start this many calls per second (latency from the intended start time).")
    public var rate: Double?

    /// Seconds to measure.
    @Option(help: "Seconds to measure.")
    public var duration = 10.0

    /// Seconds to run before measuring.
    @Option(help: "Seconds to run before measuring.")
    public var warmup = 1.0

    /// Stop after starting this many calls (warm-up included).
    @Option(help: "Stop after starting this many calls (warm-up included).")
    public var maxCalls: Int?

    /// Payload bytes per message (echo scenarios).
    @Option(help: "Payload bytes per message (echo scenarios).")
    public var payloadSize = 64

    /// Responses per call (echo-stream), request/response pairs per call (echo-bidi).
    @Option(help: "Responses per call (echo-stream), request/response pairs per call (echo-bidi).")
    public var messages = 10

    /// Verified accounts the marketplace scenario makes sure exist.
    @Option(help: "Verified accounts the marketplace scenario makes sure exist.")
    public var seedUsers = 20

    /// Listings the marketplace scenario makes sure exist.
    @Option(help: "Listings the marketplace scenario makes sure exist.")
    public var seedListings = 200

    /// Activities the campus scenario makes sure exist.
    @Option(help: "Activities the campus scenario makes sure exist.")
    public var seedActivities = 200

    /// Up-votes the campus scenario casts while seeding.
    @Option(help: "Up-votes the campus scenario casts while seeding (by seeded accounts, on random activities).")
    public var seedVotes = 400

    /// Lost-and-found items the campus scenario makes sure exist.
    @Option(help: "Lost-and-found items the campus scenario makes sure exist.")
    public var seedItems = 200

    /// Calls in flight while seeding listings (sign-ups use at most 8).
    @Option(help: "Calls in flight while seeding listings (sign-ups use at most 8).")
    public var seedConcurrency = 64

    @Option(help: "Live-feed subscriptions chat-fanout keeps open, spread over the seeded accounts.")
    public var subscribers = 1_000

    @Option(help: "Connections chat-fanout's subscriptions use (0: one per subscription, like phones).")
    public var subscriberConnections = 0

    @Option(help: "Where seeded accounts and listings are kept between runs.")
    public var state = ".skiff-load-state.json"

    /// The server's log (stderr at --log-level debug), read for e-mail verification tokens.
    @Option(help: "The server's log (stderr at --log-level debug), read for e-mail verification tokens.")
    public var mailLog: String?

    /// E-mail domain of seeded accounts.
    @Option(help: "E-mail domain of seeded accounts.")
    public var emailDomain = "campus.edu"

    /// Write the full result as JSON to this file.
    @Option(help: "Write the full result as JSON to this file.")
    public var json: String?

    /// Exit 0 even if calls failed.
    @Flag(help: "Exit 0 even if calls failed.")
    public var allowErrors = false

    /// No live progress line.
    @Flag(help: "No live progress line.")
    public var quiet = false

    /// Creates the command (for ArgumentParser).
    public init() {}

    public func validate() throws {
        guard LoadScenarios.names.contains(scenario) else {
            throw ValidationError(
                "unknown scenario '\(scenario)'; one of: \(LoadScenarios.names.joined(separator: ", "))"
            )
        }
        let targets = try parsedTargets()
        _ = try httpProtocol()
        guard ["loop", "pool"].contains(workerExecutor) else {
            throw ValidationError("--worker-executor must be loop or pool")
        }
        guard concurrency > 0, connections > 0 else {
            throw ValidationError("--concurrency and --connections must be > 0")
        }
        guard connections >= targets.count else {
            throw ValidationError("--connections must be at least the number of --target addresses (\(targets.count))")
        }
        guard duration > 0, warmup >= 0 else { throw ValidationError("--duration must be > 0, --warmup >= 0") }
        if let rate, rate <= 0 { throw ValidationError("--rate must be > 0") }
        if let maxCalls, maxCalls <= 0 { throw ValidationError("--max-calls must be > 0") }
        guard payloadSize >= 0, messages > 0 else { throw ValidationError("--payload-size >= 0, --messages > 0") }
    }

    /// The addresses of `--target`, in order.
    public func parsedTargets() throws -> [LoadTarget] {
        do {
            return try LoadTarget.parseList(target)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The HTTP call protocol of `--protocol`; `nil` for skiff/1.
    func httpProtocol() throws -> HTTPClientProtocol? {
        if callProtocol == "skiff" { return nil }
        guard let http = HTTPClientProtocol(rawValue: callProtocol) else {
            throw ValidationError("--protocol must be skiff, grpc, grpc-web or connect")
        }
        return http
    }

    /// Whether closed-loop workers keep to one connection's event loop each (``workerExecutor``).
    var usesLanes: Bool { workerExecutor == "loop" && rate == nil && callProtocol == "skiff" }

    /// The settings recorded in the result.
    public var settings: LoadSettings {
        LoadSettings(
            scenario: scenario,
            target: target,
            concurrency: concurrency,
            connections: connections,
            rate: rate,
            duration: duration,
            warmup: warmup,
            maxCalls: maxCalls,
            payloadSize: payloadSize,
            messagesPerCall: messages,
            workerExecutor: usesLanes ? "loop" : "pool"
        )
    }

    /// The scenario options from the command line; `tokenSource` overrides `--mail-log`.
    public func scenarioOptions(tokenSource: (any VerificationTokenSource)? = nil) -> ScenarioOptions {
        var options = ScenarioOptions()
        options.payloadSize = payloadSize
        options.messagesPerCall = messages
        options.seedUsers = seedUsers
        options.seedListings = seedListings
        options.seedActivities = seedActivities
        options.seedVotes = seedVotes
        options.seedItems = seedItems
        options.seedConcurrency = seedConcurrency
        options.statePath = state
        options.emailDomain = emailDomain
        options.feedSubscribers = subscribers
        options.subscriberConnections = subscriberConnections
        options.tokenSource = tokenSource ?? mailLog.map { MailLogTokenSource(path: $0) }
        return options
    }

    /// Prepares and runs the scenario, writes `--json` if asked, and returns the result (without
    /// printing or exiting).
    public func execute(
        tokenSource: (any VerificationTokenSource)? = nil,
        progress: ProgressOutput = .standardError
    ) async throws -> LoadResult {
        let targets = try parsedTargets()
        guard let scenario = LoadScenarios.make(scenario, options: scenarioOptions(tokenSource: tokenSource)) else {
            throw ValidationError("unknown scenario '\(self.scenario)'")
        }
        let pool: any ClientTransport
        var lanes: [LoadLane] = []
        let close: @Sendable () async -> Void
        if let http = try httpProtocol() {
            let httpPool = try await HTTPTransportPool.connect(targets: targets, protocol: http, size: connections)
            (pool, close) = (httpPool, { await httpPool.close() })
        } else {
            let skiffPool = MultiTargetConnectionPool(targets: targets, size: connections)
            (pool, close) = (skiffPool, { await skiffPool.close() })
            if usesLanes {
                lanes = skiffPool.connections.map { LoadLane(transport: $0, executor: $0.taskExecutor) }
            }
            do {
                try await skiffPool.connect()
            } catch {
                await scenario.finish()
                await close()
                throw error
            }
        }
        do {
            try await scenario.prepare(
                // Connections a scenario opens itself (chat-fanout's subscriptions) go to the first address.
                LoadContext(transport: pool, progress: progress, target: targets.first?.connectionTarget)
            )
            let result = await LoadRunner(settings: settings, progress: progress).run(
                scenario,
                transport: pool,
                lanes: lanes
            )
            await scenario.finish()
            if let json { try result.jsonData().write(to: URL(fileURLWithPath: json)) }
            await close()
            return result
        } catch {
            await scenario.finish()
            await close()
            throw error
        }
    }

    public func run() async throws {
        let result: LoadResult
        do {
            result = try await execute(progress: quiet ? .silent : .standardError)
        } catch let error as RPCError {
            throw LoadCommandError("setup failed against \(target): \(error)")
        }
        print(LoadReport.summary(result))
        if let json { print("result written to \(json)") }
        if result.failedIncludingWarmup > 0 && !allowErrors {
            FileHandle.standardError.write(Data("skiff-load: \(result.failedIncludingWarmup) call(s) failed\n".utf8))
            throw ExitCode(1)
        }
        if result.succeeded == 0 && !allowErrors {
            FileHandle.standardError.write(Data("skiff-load: no call completed in the measured window\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// `skiff-load compare A.json B.json`: two results side by side with B/A ratios.
public struct CompareCommand: ParsableCommand {
    /// The command's configuration.
    public static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Print two --json results side by side with ratios."
    )

    /// The baseline result.
    @Argument(help: "The baseline result.")
    public var a: String

    /// The result compared with it.
    @Argument(help: "The result compared with it.")
    public var b: String

    /// Creates the command (for ArgumentParser).
    public init() {}

    /// The comparison table.
    public func render() throws -> String {
        let first = try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: a)))
        let second = try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: b)))
        return LoadReport.compare(first, second, nameA: a, nameB: b)
    }

    public func run() throws {
        print(try render())
    }
}

/// A failure reported to the user as one line.
struct LoadCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
