public import ArgumentParser
import Foundation
public import SkiffAccounts
import SkiffBids
public import SkiffServer
public import SkiffWire

/// The server's command-line options.
public struct ServerOptions: ParsableArguments, Sendable {
    @Option(help: "The address to listen on.")
    public var host: String = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free port; the bound port is logged).")
    public var port: Int = 7700

    @Flag(help: "Serve the conformance service skiff.testing.v1.TestService.")
    public var enableTestService = false

    @Option(
        help: ArgumentHelp(
            "Wire protocols served on the port, comma-separated: skiff, grpc, grpc-web, connect (all by default).",
            valueName: "names"
        )
    )
    public var protocols: String?

    @Option(
        name: .customLong("cors-origin"),
        help: ArgumentHelp(
            "A browser origin allowed to call over gRPC-Web and Connect (CORS), e.g. https://market.example.edu; "
                + "* allows any. Repeatable. Default: none.",
            valueName: "origin"
        )
    )
    public var corsOrigins: [String] = []

    @Option(help: "PEM certificate chain for TLS (with --tls-key).")
    public var tlsCert: String?

    @Option(help: "PEM private key for TLS (with --tls-cert).")
    public var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "Storage backend: memory, sqlite:PATH, postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?pool=N&sslmode=MODE], "
                + "or per service (accounts=memory). Repeatable.",
            valueName: "backend"
        )
    )
    public var storage: [String] = []

    @Option(name: .customLong("email-domain"), help: "Accept sign-ups only from this e-mail domain. Repeatable.")
    public var emailDomains: [String] = []

    @Option(
        help: ArgumentHelp(
            "A JSON file of campus meeting points for hand-offs: {\"places\": [{\"id\", \"name\", \"latitude\", "
                + "\"longitude\", \"hours\"}, …]} (at most 100). Default: none.",
            valueName: "file"
        )
    )
    public var handoffPlaces: String?

    @Option(
        name: .customLong("oidc-issuer"),
        help: ArgumentHelp(
            "An OpenID Connect issuer whose ID tokens log users in (LogInWithIdToken), exactly as the tokens' iss. "
                + "Repeatable; the n-th --oidc-client-id and --oidc-jwks go with the n-th issuer.",
            valueName: "url"
        )
    )
    public var oidcIssuers: [String] = []

    @Option(
        name: .customLong("oidc-client-id"),
        help: ArgumentHelp("This server's client id at the issuer (the tokens' aud).", valueName: "id")
    )
    public var oidcClientIDs: [String] = []

    @Option(
        name: .customLong("oidc-jwks"),
        help: ArgumentHelp(
            "The issuer's signing keys: a JWKS file, or an https URL read once at start.",
            valueName: "file-or-url"
        )
    )
    public var oidcJWKS: [String] = []

    @Option(help: .hidden)
    public var passwordHashRounds: Int = 600_000

    @Option(
        help: ArgumentHelp(
            "The most password hashes waiting for a hashing thread (sign-ups, log-ins); past it those calls get "
                + "RESOURCE_EXHAUSTED with retry-after. Default: 64.",
            valueName: "count"
        )
    )
    public var passwordHashQueue: Int?

    @Option(
        help: ArgumentHelp(
            "Seconds of the first log-in back-off once an account's or an address's free failures are used up; "
                + "it doubles with each further failure, up to 15 minutes. Default: 1.",
            valueName: "seconds"
        )
    )
    public var loginBackoff: Double?

    @Option(
        help: ArgumentHelp(
            "Multiply the per-user write rate limits (posting listings, uploading images, saving, bidding) "
                + "and the per-address limits of sign-ups, password resets and verification e-mails "
                + "by this factor; 0 turns them off, e.g. for skiff-load.",
            valueName: "factor"
        )
    )
    public var rateLimitScale: Double = 1

    @Option(
        help: ArgumentHelp(
            "The secret Skiff services present when they call each other (at least 16 characters); "
                + "give every process the same one when the services run apart. Default: a new one at each start.",
            valueName: "secret"
        )
    )
    public var serviceToken: String?

    @Option(
        help: ArgumentHelp(
            "The services this process runs, comma-separated: accounts, listings, bids, chat, lostfound, "
                + "bucketlist (all by default). The ones they call but this process does not run need --upstream.",
            valueName: "names"
        )
    )
    public var services: String?

    @Option(
        name: .customLong("upstream"),
        help: ArgumentHelp(
            "Where a service this process does not run lives: SERVICE=HOST:PORT[,HOST:PORT…], e.g. "
                + "listings=10.0.0.2:7700. Several addresses are used round-robin, skipping unhealthy ones. "
                + "Repeatable. Calls go over skiff/1 with --service-token.",
            valueName: "service=address"
        )
    )
    public var upstreams: [String] = []

    @Option(
        help: ArgumentHelp(
            "Log level: trace, debug, info, notice, warning, error, critical; then optionally levels by "
                + "logger label, e.g. info,skiff.mail=debug (mail bodies, with their tokens, are logged at "
                + "debug by skiff.mail; each call's end at debug by skiff.server).",
            valueName: "level[,label=level…]"
        )
    )
    public var logLevel: String = "info"

    /// `--log-level`, parsed.
    public func logLevels() throws -> LogLevels {
        do {
            return try LogLevels(parsing: logLevel)
        } catch {
            throw ValidationError(error.description)
        }
    }

    @Option(help: "Serve Prometheus metrics over HTTP on this port (127.0.0.1 by default host).")
    public var metricsPort: Int?

    @Option(help: "Most connections open at once.")
    public var maxConnections: Int = 10_000

    @Option(help: "Most concurrent streams per connection.")
    public var maxConcurrentStreams: UInt32 = 1_000

    @Option(help: "Largest frame payload accepted, in bytes (16384…16777216).")
    public var maxFrameSize: UInt32 = 65_536

    @Option(help: "Largest request message accepted, in bytes.")
    public var maxMessageSize: UInt32 = 4 * 1024 * 1024

    @Option(help: "Largest request metadata block accepted, in bytes.")
    public var maxHeaderListSize: UInt32 = 8_192

    @Option(help: "Seconds a new connection has to send its preface and SETTINGS.")
    public var prefaceTimeout: Double = 5

    @Option(help: "Seconds any one frame may take to arrive.")
    public var frameTimeout: Double = 10

    @Option(help: "Seconds an idle connection is kept (calls still waiting for their request do not count).")
    public var idleTimeout: Double = 300

    @Option(
        help: ArgumentHelp(
            "Seconds a request may take to arrive (unary and server-streaming: from its HEADERS; "
                + "client-streaming: between messages); then the call ends with DEADLINE_EXCEEDED."
        )
    )
    public var requestTimeout: Double = 60

    @Option(
        help: ArgumentHelp(
            "Bytes of responses one connection may hold for a client that does not read them "
                + "before handlers' writes wait (and no new call starts)."
        )
    )
    public var maxBufferedResponseBytes: Int = 4 * 1024 * 1024

    @Option(
        help: ArgumentHelp(
            "Bytes of responses one connection may hold, beyond --max-buffered-response-bytes, for calls "
                + "whose client holds back their stream window (so they do not stop its other calls)."
        )
    )
    public var maxWindowHeldResponseBytes: Int = 4 * 1024 * 1024

    @Option(
        help: ArgumentHelp(
            "Seconds a connection's socket may stay full, its client reading nothing, before the "
                + "connection is closed."
        )
    )
    public var sendStallTimeout: Double = 60

    @Option(
        help: ArgumentHelp(
            "Bytes of incomplete request messages one connection may have over all its streams; "
                + "the stream going beyond fails with RESOURCE_EXHAUSTED."
        )
    )
    public var maxBufferedRequestBytes: Int = 64 * 1024 * 1024

    @Option(
        help: ArgumentHelp(
            "Seconds the server keeps serving after SIGTERM while its health service reports NOT_SERVING, "
                + "before it drains: time for load balancers' health checks to take it out (0…300; default 0).",
            valueName: "seconds"
        )
    )
    public var shutdownDelay: Double = 0

    @Option(help: "Seconds a graceful drain waits for calls in flight.")
    public var drainGracePeriod: Double = 10

    @Option(help: "Milliseconds: the shortest PING interval tolerated while no call is open.")
    public var keepaliveMinInterval: UInt32 = 300_000

    public init() {}

    public mutating func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535.") }
        _ = try logLevels()
        do {
            try configuration().settings.validate()
        } catch {
            throw ValidationError("Invalid limits: \(error.reason).")
        }
        do {
            _ = try StorageSelection.parse(storage)
        } catch {
            throw ValidationError(error.description)
        }
        guard rateLimitScale >= 0, rateLimitScale.isFinite else {
            throw ValidationError("--rate-limit-scale must be 0 or more.")
        }
        guard requestTimeout > 0, requestTimeout.isFinite else {
            throw ValidationError("--request-timeout must be more than 0 seconds.")
        }
        guard maxBufferedResponseBytes >= 64 * 1024 else {
            throw ValidationError("--max-buffered-response-bytes must be at least 65536.")
        }
        guard maxWindowHeldResponseBytes >= 0 else {
            throw ValidationError("--max-window-held-response-bytes must be 0 or more.")
        }
        guard sendStallTimeout > 0, sendStallTimeout.isFinite else {
            throw ValidationError("--send-stall-timeout must be more than 0 seconds.")
        }
        guard maxBufferedRequestBytes >= Int(maxMessageSize) else {
            throw ValidationError("--max-buffered-request-bytes must be at least --max-message-size.")
        }
        if let serviceToken, serviceToken.count < 16 {
            throw ValidationError("--service-token must be at least 16 characters.")
        }
        do {
            try ServiceDeployment.parse(services: services, upstreams: upstreams).validate(serviceToken: serviceToken)
        } catch {
            throw ValidationError(error.description)
        }
        guard shutdownDelay >= 0, shutdownDelay <= 300 else {
            throw ValidationError("--shutdown-delay must be 0…300 seconds.")
        }
        if let loginBackoff, !(loginBackoff > 0 && loginBackoff <= 900) {
            throw ValidationError("--login-backoff must be more than 0 and at most 900 seconds.")
        }
        if let passwordHashQueue, passwordHashQueue < 0 {
            throw ValidationError("--password-hash-queue must be 0 or more.")
        }
        if let handoffPlaces {
            do {
                _ = try HandoffPlaces.load(path: handoffPlaces)
            } catch {
                throw ValidationError("--handoff-places: \(error.description).")
            }
        }
        do {
            _ = try identityProviders()
        } catch {
            throw ValidationError("\(error)")
        }
        guard passwordHashRounds >= 1_000 else {
            throw ValidationError("--password-hash-rounds must be at least 1000.")
        }
    }

    /// The OpenID Connect providers of `--oidc-issuer`, `--oidc-client-id` and `--oidc-jwks` (JWKS read
    /// now), or `nil` when none is given.
    public func identityProviders() throws -> IdentityTokenVerifier? {
        guard !(oidcIssuers.isEmpty && oidcClientIDs.isEmpty && oidcJWKS.isEmpty) else { return nil }
        guard oidcIssuers.count == oidcClientIDs.count, oidcIssuers.count == oidcJWKS.count else {
            throw IdentityProviderConfiguration.InvalidProvider(
                "give --oidc-issuer, --oidc-client-id and --oidc-jwks once per provider, in the same order "
                    + "(got \(oidcIssuers.count), \(oidcClientIDs.count) and \(oidcJWKS.count))"
            )
        }
        var providers: [IdentityProviderConfiguration] = []
        for index in oidcIssuers.indices {
            guard !providers.contains(where: { $0.issuer == oidcIssuers[index] }) else {
                throw IdentityProviderConfiguration.InvalidProvider(
                    "--oidc-issuer \(oidcIssuers[index]) is given twice"
                )
            }
            providers.append(
                IdentityProviderConfiguration(
                    issuer: oidcIssuers[index],
                    clientID: oidcClientIDs[index],
                    jwksJSON: try IdentityProviderConfiguration.loadJWKS(from: oidcJWKS[index])
                )
            )
        }
        return try IdentityTokenVerifier(providers: providers)
    }

    /// The server configuration these options describe.
    /// The application these options describe: reads the TLS files, the hand-off places file and the
    /// identity providers' keys, and checks every value.
    ///
    /// - Throws: when a value is out of range or a file cannot be read.
    public func applicationConfiguration() throws -> ApplicationConfiguration {
        var server = try configuration()
        if let cert = tlsCert, let key = tlsKey {
            server.tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        }
        var result = ApplicationConfiguration(server: server, storage: try StorageSelection.parse(storage))
        result.enableTestService = enableTestService
        result.deployment = try ServiceDeployment.parse(services: services, upstreams: upstreams)
        result.shutdownDelay = .milliseconds(Int64(shutdownDelay * 1000))
        result.serviceToken = serviceToken
        result.accounts.allowedEmailDomains = emailDomains
        if let passwordHashQueue { result.accounts.maximumQueuedPasswordHashes = passwordHashQueue }
        if let loginBackoff { result.accounts.loginBackoffInitialDelay = .milliseconds(Int64(loginBackoff * 1000)) }
        result.identityProviders = try identityProviders()
        result.passwordHashRounds = passwordHashRounds
        if let handoffPlaces { result.handoffPlaces = try HandoffPlaces.load(path: handoffPlaces) }
        result.rateLimitScale = rateLimitScale
        if let protocols { result.protocols = try Self.protocolNames(protocols) }
        result.corsOrigins = corsOrigins
        return result
    }

    /// The protocols `--protocols` names.
    static func protocolNames(_ text: String) throws -> [WireProtocolName] {
        var names: [WireProtocolName] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let word = part.trimmingCharacters(in: .whitespaces)
            guard let name = WireProtocolName(rawValue: word) else {
                throw ValidationError(
                    "--protocols: \"\(word.prefix(40))\" is not a protocol; use skiff, grpc, grpc-web, connect (comma-separated)."
                )
            }
            guard !names.contains(name) else { throw ValidationError("--protocols names \(word) twice.") }
            names.append(name)
        }
        return names
    }

    public func configuration() throws(ProtocolViolation) -> ServerConfiguration {
        var config = ServerConfiguration()
        config.host = host
        config.port = port
        config.maxConnections = maxConnections
        config.settings.maxConcurrentStreams = maxConcurrentStreams
        config.settings.maxFrameSize = maxFrameSize
        config.settings.maxMessageSize = maxMessageSize
        config.settings.maxHeaderListSize = maxHeaderListSize
        config.settings.keepaliveMinIntervalMS = keepaliveMinInterval
        if config.settings.initialStreamWindow < maxMessageSize {
            config.settings.initialStreamWindow = maxMessageSize
        }
        config.prefaceTimeout = .milliseconds(Int64(prefaceTimeout * 1000))
        config.frameTimeout = .milliseconds(Int64(frameTimeout * 1000))
        config.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        config.requestTimeout = .milliseconds(Int64(requestTimeout * 1000))
        config.maxBufferedResponseBytes = maxBufferedResponseBytes
        config.maxBufferedRequestBytes = maxBufferedRequestBytes
        config.maxWindowHeldResponseBytes = maxWindowHeldResponseBytes
        config.sendStallTimeout = .milliseconds(Int64(sendStallTimeout * 1000))
        config.drainGracePeriod = .milliseconds(Int64(drainGracePeriod * 1000))
        try config.settings.validate()
        return config
    }
}
