public import NIOSSL
public import SkiffWire

/// How a ``ClientConnection`` behaves: what it advertises, how it connects and reconnects, and
/// how it treats calls while the server's limits are reached.
public struct ClientConfiguration: Sendable {
    /// The SETTINGS this client advertises: what it is willing to receive (frame size, windows,
    /// message size, metadata size). Protocol defaults unless changed.
    public var settings: ConnectionSettings
    /// How long one connection attempt may take: TCP, TLS and the server's SETTINGS. Calls wait
    /// for the server's SETTINGS before they are sent, so a call on a connection that fails before
    /// them was never sent.
    public var connectTimeout: Duration
    /// The delay between failed connection attempts.
    public var backoff: Backoff
    /// Keepalive pings; `nil` (the default) sends none.
    public var keepalive: Keepalive?
    /// TLS; `nil` (the default) connects in plain text.
    public var tls: TLS?
    /// How many calls may wait locally for a stream while the server's MAX_CONCURRENT_STREAMS is
    /// reached (or while the connection is being set up). Calls beyond it fail with
    /// RESOURCE_EXHAUSTED.
    public var maxQueuedCalls: Int
    /// How many times a call the server did not process (refused, or above a GOAWAY's last
    /// stream id) is retried transparently before it fails with UNAVAILABLE.
    public var maxTransparentRetries: Int
    /// How many request bytes a streaming call keeps, until the server accepts its stream, so that
    /// it can be retried transparently. A call that has sent more is not retried.
    public var retryBufferLimit: Int
    /// How many request bytes a streaming call may have queued (waiting for flow-control window)
    /// before the request writer's `write` suspends.
    public var requestBufferLimit: Int

    /// Creates a configuration; every parameter has a sensible default.
    public init(
        settings: ConnectionSettings = ConnectionSettings(),
        connectTimeout: Duration = .seconds(10),
        backoff: Backoff = Backoff(),
        keepalive: Keepalive? = nil,
        tls: TLS? = nil,
        maxQueuedCalls: Int = 100_000,
        maxTransparentRetries: Int = 3,
        retryBufferLimit: Int = 1 << 20,
        requestBufferLimit: Int = 256 << 10
    ) {
        self.settings = settings
        self.connectTimeout = connectTimeout
        self.backoff = backoff
        self.keepalive = keepalive
        self.tls = tls
        self.maxQueuedCalls = maxQueuedCalls
        self.maxTransparentRetries = maxTransparentRetries
        self.retryBufferLimit = retryBufferLimit
        self.requestBufferLimit = requestBufferLimit
    }

    /// Protocol-default SETTINGS, plain text, no keepalive, 10 s connect timeout.
    public static var defaults: ClientConfiguration { ClientConfiguration() }

    /// Exponential backoff with jitter between connection attempts.
    ///
    /// After the n-th consecutive failed attempt the next one waits
    /// `min(initial × multiplierⁿ⁻¹, maximum)`, randomised by ± `jitter` (a fraction). A connection
    /// that reached the ready state resets the sequence: the next attempt is immediate.
    public struct Backoff: Sendable, Hashable {
        /// The delay after the first failure.
        public var initial: Duration
        /// The factor applied per further failure.
        public var multiplier: Double
        /// The random spread, as a fraction of the delay (0.2 = ±20 %).
        public var jitter: Double
        /// The largest delay.
        public var maximum: Duration

        /// Creates a backoff policy (defaults: 100 ms, ×1.6, ±0.2, at most 30 s).
        public init(
            initial: Duration = .milliseconds(100),
            multiplier: Double = 1.6,
            jitter: Double = 0.2,
            maximum: Duration = .seconds(30)
        ) {
            self.initial = initial
            self.multiplier = multiplier
            self.jitter = jitter
            self.maximum = maximum
        }

        /// The delay before the next attempt after `failures` consecutive failures (0 → none).
        public func delay<R: RandomNumberGenerator>(afterFailures failures: Int, using rng: inout R) -> Duration {
            guard failures > 0 else { return .zero }
            var capped = initial.seconds
            for _ in 1..<failures where capped < maximum.seconds { capped *= multiplier }
            capped = min(capped, maximum.seconds)
            let spread = jitter > 0 ? Double.random(in: -jitter...jitter, using: &rng) : 0
            return .nanoseconds(Int64(max(0, capped * (1 + spread)) * 1e9))
        }

        /// The delay before the next attempt after `failures` consecutive failures (0 → none).
        public func delay(afterFailures failures: Int) -> Duration {
            var rng = SystemRandomNumberGenerator()
            return delay(afterFailures: failures, using: &rng)
        }
    }

    /// Keepalive pings sent on an otherwise quiet connection.
    public struct Keepalive: Sendable, Hashable {
        /// How often to ping.
        public var interval: Duration
        /// How long to wait for the PING ACK before the connection is considered dead and closed.
        public var timeout: Duration
        /// Whether to ping while no call is open. The server tolerates that only as often as its
        /// KEEPALIVE_MIN_INTERVAL_MS allows, so the client then never pings more often than that.
        public var permitWithoutCalls: Bool

        /// Creates a keepalive policy.
        public init(interval: Duration, timeout: Duration = .seconds(20), permitWithoutCalls: Bool = false) {
            self.interval = interval
            self.timeout = timeout
            self.permitWithoutCalls = permitWithoutCalls
        }
    }

    /// TLS settings. The client offers ALPN `skiff/1`.
    public struct TLS: Sendable {
        /// The certificates the server's chain is checked against.
        public var trustRoots: NIOSSLTrustRoots
        /// How the server's certificate is verified.
        public var certificateVerification: CertificateVerification
        /// The name sent in SNI and checked against the certificate; the target host when `nil`
        /// (unless it is an IP address).
        public var serverHostname: String?
        /// A client certificate chain, for mutual TLS.
        public var certificateChain: [NIOSSLCertificateSource]
        /// The private key of the client certificate, for mutual TLS.
        public var privateKey: NIOSSLPrivateKeySource?

        /// Creates TLS settings.
        public init(
            trustRoots: NIOSSLTrustRoots = .default,
            certificateVerification: CertificateVerification = .fullVerification,
            serverHostname: String? = nil,
            certificateChain: [NIOSSLCertificateSource] = [],
            privateKey: NIOSSLPrivateKeySource? = nil
        ) {
            self.trustRoots = trustRoots
            self.certificateVerification = certificateVerification
            self.serverHostname = serverHostname
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }

        /// TLS that trusts the certificates in a PEM file.
        public static func trustRootsPEMFile(
            _ path: String,
            certificateVerification: CertificateVerification = .fullVerification,
            serverHostname: String? = nil
        ) -> TLS {
            TLS(
                trustRoots: .file(path),
                certificateVerification: certificateVerification,
                serverHostname: serverHostname
            )
        }

        /// The NIOSSL configuration these settings describe.
        public func makeTLSConfiguration() -> TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = trustRoots
            configuration.certificateVerification = certificateVerification
            configuration.certificateChain = certificateChain
            configuration.privateKey = privateKey
            configuration.applicationProtocols = ["skiff/1"]
            return configuration
        }
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}
