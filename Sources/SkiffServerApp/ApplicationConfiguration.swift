import Foundation
public import SkiffAccounts
public import SkiffBids
public import SkiffServer

/// Everything an ``Application`` is built from, as values: `skiff-server` makes it from its
/// command line (``ServerOptions/applicationConfiguration()``), and tests and embedders build it
/// directly.
///
/// ```swift
/// var configuration = ApplicationConfiguration(storage: StorageSelection(defaultBackend: .memory))
/// configuration.server.port = 0
/// configuration.enableTestService = true
/// let app = try await Application(configuration: configuration, logger: logger)
/// ```
public struct ApplicationConfiguration: Sendable {
    /// The RPC server: address, TLS, limits and timeouts.
    public var server: ServerConfiguration
    /// Which storage backend each service keeps its data in.
    public var storage: StorageSelection
    /// Which services this process runs, and where the others are reached (every service here by
    /// default).
    public var deployment: ServiceDeployment
    /// How long, once a graceful shutdown begins, the server keeps serving while its health service
    /// reports NOT_SERVING, before it drains: time for load balancers' health checks to take it out
    /// of rotation (zero by default: Skiff's clients move on at the drain's GOAWAY).
    public var shutdownDelay: Duration
    /// Whether to serve the conformance service `skiff.testing.v1.TestService`.
    public var enableTestService: Bool
    /// The token services in this process present to each other; `nil` makes a random one per process.
    public var serviceToken: String?
    /// Accounts' own settings: e-mail domains, the password-hash queue, login back-off, rate limits.
    public var accounts: AccountsConfiguration
    /// External identity providers for log-in with an OIDC token, if any.
    public var identityProviders: IdentityTokenVerifier?
    /// PBKDF2 rounds per password hash (600,000 by default; tests lower it).
    public var passwordHashRounds: Int
    /// The hand-off places buyers and sellers pick from (none by default).
    public var handoffPlaces: [HandoffPlace]
    /// Multiplies every per-user and per-source rate limit of every service; 0 turns them off (load tests).
    public var rateLimitScale: Double

    /// The wire protocols served on the port (all by default). With more than one, each
    /// connection's protocol is told from its first bytes or its TLS ALPN name.
    public var protocols: [WireProtocolName]

    /// Browser origins allowed to call the HTTP protocols (CORS), e.g. `https://market.example.edu`;
    /// `*` allows every origin. None by default: a page on another origin cannot read any answer.
    public var corsOrigins: [String]

    /// A configuration with the defaults of `skiff-server`: 127.0.0.1:7700, no TLS, one SQLite file
    /// under `./data` unless `storage` says otherwise.
    public init(server: ServerConfiguration = ServerConfiguration(), storage: StorageSelection = StorageSelection()) {
        self.server = server
        self.storage = storage
        self.deployment = .allInProcess
        self.shutdownDelay = .zero
        self.enableTestService = false
        self.serviceToken = nil
        self.accounts = AccountsConfiguration()
        self.identityProviders = nil
        self.passwordHashRounds = 600_000
        self.handoffPlaces = []
        self.rateLimitScale = 1
        self.protocols = WireProtocolName.allCases
        self.corsOrigins = []
    }

    /// Checks the values the server's own settings do not: ``Application`` calls it before it opens
    /// anything.
    ///
    /// - Throws: ``ApplicationConfigurationError`` naming the value and its allowed range.
    public func validate() throws(ApplicationConfigurationError) {
        if let serviceToken, serviceToken.count < 16 {
            throw ApplicationConfigurationError("The service token must be at least 16 characters.")
        }
        try deployment.validate(serviceToken: serviceToken)
        guard shutdownDelay >= .zero, shutdownDelay <= .seconds(300) else {
            throw ApplicationConfigurationError("The shutdown delay must be 0…300 seconds.")
        }
        guard rateLimitScale >= 0, rateLimitScale.isFinite else {
            throw ApplicationConfigurationError("The rate-limit scale must be 0 or more (0 turns the limits off).")
        }
        guard !protocols.isEmpty, Set(protocols).count == protocols.count else {
            throw ApplicationConfigurationError(
                "Serve at least one wire protocol, each once (skiff, grpc, grpc-web, connect)."
            )
        }
        for origin in corsOrigins where origin != "*" {
            guard let url = URL(string: origin), let scheme = url.scheme, scheme == "http" || scheme == "https",
                url.host != nil, url.path.isEmpty || url.path == "/", url.query == nil, origin.utf8.count <= 256
            else {
                throw ApplicationConfigurationError(
                    "The CORS origin \"\(origin.prefix(64))\" is not an origin: scheme://host[:port], or *."
                )
            }
        }
        guard passwordHashRounds >= 1 else {
            throw ApplicationConfigurationError("Password hashing needs at least 1 round (600,000 by default).")
        }
    }
}

/// An ``ApplicationConfiguration`` value out of range.
public struct ApplicationConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong and what is allowed.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A wire protocol the application can serve.
public enum WireProtocolName: String, CaseIterable, Sendable, Hashable {
    /// skiff/1 (`docs/PROTOCOL.md`).
    case skiff
    /// gRPC over HTTP/2 (h2c with prior knowledge, or `h2` by ALPN under TLS).
    case grpc
    /// gRPC-Web over HTTP/1.1 and HTTP/2.
    case grpcWeb = "grpc-web"
    /// Connect over HTTP/1.1 and HTTP/2.
    case connect
}
