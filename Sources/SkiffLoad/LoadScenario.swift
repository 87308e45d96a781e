public import Histogram
public import SkiffClient
public import SkiffCore

/// One kind of call a load test repeats, e.g. an echo call or a realistic marketplace mix.
///
/// Adding a scenario is one file: conform a type to this protocol and add a factory to
/// ``LoadScenarios/all``. The runner calls ``prepare(_:)`` once, then ``perform(_:)`` from many
/// tasks at once; a call that throws counts as failed, keyed by its status code (see
/// ``LoadFailure/key(for:)``). Scenarios use only the public client API (typed clients over
/// ``ClientTransport``).
public protocol LoadScenario: Sendable {
    /// The name given to `skiff-load run`, e.g. `echo-unary`.
    var name: String { get }

    /// Seeds or looks up whatever the calls need (accounts, listings, …) before the clock starts.
    /// - Parameter context: the transport, options and progress output.
    func prepare(_ context: LoadContext) async throws

    /// Makes one call (or one logical operation) and returns when it has completed.
    ///
    /// - Parameter transport: the connection pool under test.
    /// - Throws: an `RPCError` when the call fails with a non-OK status; any other error counts as
    ///   a transport failure.
    func perform(_ transport: any ClientTransport) async throws

    /// Called once when the warm-up ends: a scenario that measures something itself starts afresh.
    func measurementStarted()

    /// Latency distributions (microseconds) the scenario measured itself, beside the runner's call
    /// latency, by name — e.g. `chat-fanout`'s delivery latency. Reported with the result.
    func measurements() -> [String: Histogram<UInt64>]

    /// Releases what ``prepare(_:)`` opened (streams, …) after the run.
    func finish() async
}

extension LoadScenario {
    /// Scenarios that need no preparation do nothing here.
    public func prepare(_ context: LoadContext) async throws {}
    /// Scenarios that measure nothing themselves do nothing here.
    public func measurementStarted() {}
    /// Scenarios that measure nothing themselves report nothing.
    public func measurements() -> [String: Histogram<UInt64>] { [:] }
    /// Scenarios that open nothing do nothing here.
    public func finish() async {}
}

/// What a scenario gets to prepare itself.
public struct LoadContext: Sendable {
    /// The transport calls go through (the pool under test).
    public var transport: any ClientTransport
    /// Prints seeding progress; a bar on a terminal, plain lines otherwise, nothing in tests.
    public var progress: ProgressOutput
    /// Where the server is, for scenarios that open connections of their own (e.g. one per
    /// `chat-fanout` subscriber, as each phone has its own); `nil` when unknown.
    public var target: ClientConnection.Target?

    /// Creates a context.
    public init(transport: any ClientTransport, progress: ProgressOutput, target: ClientConnection.Target? = nil) {
        self.transport = transport
        self.progress = progress
        self.target = target
    }
}

/// The options scenarios are built from (the scenario-specific part of the command line).
public struct ScenarioOptions: Sendable {
    /// Bytes of payload in each request and response of the echo scenarios.
    public var payloadSize = 64
    /// Responses per call of `echo-stream`, and request/response pairs per call of `echo-bidi`.
    public var messagesPerCall = 10
    /// Accounts the marketplace scenario makes sure exist.
    public var seedUsers = 20
    /// Listings the marketplace scenario makes sure exist.
    public var seedListings = 200
    /// Activities the campus scenario makes sure exist.
    public var seedActivities = 200
    /// Up-votes the campus scenario casts while seeding (each by a seeded account on a random activity).
    public var seedVotes = 400
    /// Lost-and-found items the campus scenario makes sure exist.
    public var seedItems = 200
    /// Calls in flight while the marketplace scenario seeds listings (sign-ups use at most 8).
    public var seedConcurrency = 64
    /// Where the marketplace scenario keeps the seeded accounts and listings between runs.
    public var statePath = ".skiff-load-state.json"
    /// Where verification tokens come from when accounts must be created.
    public var tokenSource: (any VerificationTokenSource)?
    /// The e-mail domain of the marketplace scenario's accounts.
    public var emailDomain = "campus.edu"
    /// Live-feed subscriptions `chat-fanout` keeps open (spread over the seeded accounts).
    public var feedSubscribers = 1_000
    /// Connections the `chat-fanout` subscriptions are spread over; 0 means one per subscription.
    public var subscriberConnections = 0

    /// Default options.
    public init() {}
}

/// The registry of named scenarios.
public enum LoadScenarios {
    /// Every scenario's name and how to make it.
    public static let all: [(name: String, make: @Sendable (ScenarioOptions) -> any LoadScenario)] = [
        ("echo-unary", { EchoUnaryScenario(options: $0) }),
        ("echo-stream", { EchoStreamScenario(options: $0) }),
        ("echo-bidi", { EchoBidiScenario(options: $0) }),
        ("marketplace", { MarketplaceScenario(options: $0, domain: $0.emailDomain) }),
        ("chat-fanout", { ChatFanoutScenario(options: $0, domain: $0.emailDomain) }),
        ("campus", { CampusScenario(options: $0, domain: $0.emailDomain) }),
    ]

    /// The names of every scenario.
    public static var names: [String] { all.map(\.name) }

    /// Makes the scenario called `name`, or `nil` if there is none.
    public static func make(_ name: String, options: ScenarioOptions) -> (any LoadScenario)? {
        all.first { $0.name == name }?.make(options)
    }
}

/// How failed calls are grouped in a report.
public enum LoadFailure {
    /// The status code name of an `RPCError` (e.g. `UNAVAILABLE`), else `TRANSPORT(<type>)`.
    public static func key(for error: any Error) -> String {
        if let rpc = error as? RPCError { return rpc.code.name }
        if error is CancellationError { return "CANCELLED(client)" }
        return "TRANSPORT(\(type(of: error)))"
    }
}

extension Array {
    /// A random element for which `isWanted` holds, drawn without copying the array (a load generator must
    /// not cost O(seeded rows) per call): random draws first, then a scan from a random start.
    func randomElement(
        using rng: inout SystemRandomNumberGenerator,
        where isWanted: (Element) -> Bool
    ) -> Element? {
        guard !isEmpty else { return nil }
        for _ in 0..<16 {
            let element = self[Int.random(in: 0..<count, using: &rng)]
            if isWanted(element) { return element }
        }
        let start = Int.random(in: 0..<count, using: &rng)
        for offset in 0..<count {
            let element = self[(start + offset) % count]
            if isWanted(element) { return element }
        }
        return nil
    }
}
