public import NIOSSL
public import SkiffWire

/// Everything a server can be configured with. Each limit has a safe default and is enforced
/// before memory is spent on what it limits.
public struct ServerConfiguration: Sendable {
    /// Where to listen.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks any free port (read the bound one from ``SkiffServer/localAddress``).
    public var port: Int = 7700

    /// What the server advertises in its SETTINGS (frame size, windows, message and metadata
    /// limits, concurrent streams per connection, keepalive interval).
    public var settings: ConnectionSettings = {
        var s = ConnectionSettings()
        s.maxConcurrentStreams = 1_000
        return s
    }()

    /// Most connections open at once; further connections are closed at once.
    public var maxConnections: Int = 10_000
    /// How long a new connection may take to send its preface and SETTINGS.
    public var prefaceTimeout: Duration = .seconds(5)
    /// How long any one frame may take to arrive once its first byte has (no slowloris).
    public var frameTimeout: Duration = .seconds(10)
    /// How long a connection with no running call is kept before it is drained and closed. Calls
    /// still waiting for their request (see ``requestTimeout``) do not keep a connection busy.
    public var idleTimeout: Duration = .seconds(300)
    /// How long a request may take to arrive: a unary or server-streaming request must be
    /// complete this long after its HEADERS, and a client-streaming request may not pause longer
    /// than this between messages; otherwise the call ends with DEADLINE_EXCEEDED. Bidirectional
    /// calls are exempt. Sized for a 4 MiB request over a slow mobile link.
    public var requestTimeout: Duration = .seconds(60)
    /// How long a draining connection waits for its calls before resetting them.
    public var drainGracePeriod: Duration = .seconds(10)
    /// The rapid-reset defence: how many resets of streams that had barely begun (no response
    /// yet, under 50 ms since their handler started, or since their HEADERS before that) a client
    /// may send per second, beyond a burst of MAX_CONCURRENT_STREAMS + this number, before it gets
    /// GOAWAY. Cancelling calls that were running longer, had an answer under way or had ended is
    /// free.
    public var maxResetsPerSecond: Int = 200
    /// Most PING frames per second a client may send while it has no stream open (with a
    /// KEEPALIVE_MIN_INTERVAL_MS of 0, where strikes never happen) before it gets GOAWAY.
    public var maxPingsPerSecond: Int = 50
    /// Response bytes queued per stream above which a handler's `write` waits for the client.
    public var streamWriteBufferHighWater: Int = 256 * 1024
    /// Response bytes one connection may hold for its client (queued behind flow control or a
    /// socket that does not drain) before handlers' writes wait; unary responses included. The
    /// socket's own buffer adds at most ``socketWriteBufferHighWater``, and a message being
    /// queued may overshoot by its own size.
    public var maxBufferedResponseBytes: Int = 4 * 1024 * 1024
    /// Response bytes one connection may hold, beyond ``maxBufferedResponseBytes``, for streams
    /// whose client holds back the stream's own window while the connection's window and socket
    /// are open (a call whose results the app does not consume yet). Such bytes do not stop the
    /// connection's other calls; beyond this bound they count toward ``maxBufferedResponseBytes``
    /// like any other. Each stream holds at most ``streamWriteBufferHighWater`` plus one message.
    public var maxWindowHeldResponseBytes: Int = 4 * 1024 * 1024
    /// How long the socket may stay full (above ``socketWriteBufferHighWater``, not drained below
    /// half of it: its client reads nothing, or too little) before the connection is closed and
    /// everything it holds is freed.
    public var sendStallTimeout: Duration = .seconds(60)
    /// Bytes of incomplete request messages (fragments waiting for their last one) one
    /// connection may have over all its streams; the stream whose fragment would go beyond it
    /// fails with RESOURCE_EXHAUSTED. Complete messages are bounded by the stream windows.
    public var maxBufferedRequestBytes: Int = 64 * 1024 * 1024
    /// NIO's write-buffer high-water mark: above it the socket counts as not draining, no
    /// response bytes move to it, no new handler starts and the connection is not read from.
    public var socketWriteBufferHighWater: Int = 1024 * 1024

    /// Where handlers run: on the connection's event loop (no thread hop; handlers must not
    /// block) or on Swift's global concurrent executor.
    public var handlerExecutor: HandlerExecutor = .eventLoop

    /// TLS, when set: TLS 1.2 minimum; ALPN offers the name of every protocol the server serves
    /// (`skiff/1` by default).
    public var tls: TLS?

    public init() {}

    /// Where handler tasks run.
    public enum HandlerExecutor: Sendable {
        /// The connection's event loop thread.
        case eventLoop
        /// Swift's global concurrent executor.
        case globalConcurrent
    }

    /// TLS settings.
    public struct TLS: Sendable {
        /// The certificate chain, leaf first.
        public var certificateChain: [NIOSSLCertificate]
        /// The private key.
        public var privateKey: NIOSSLPrivateKey

        public init(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }

        /// Loads a PEM certificate chain and PEM private key from files.
        public init(certificatePath: String, keyPath: String) throws {
            self.certificateChain = try NIOSSLCertificate.fromPEMFile(certificatePath)
            self.privateKey = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        }

        func makeContext(protocols: [String]) throws -> NIOSSLContext {
            var config = TLSConfiguration.makeServerConfiguration(
                certificateChain: certificateChain.map { .certificate($0) },
                privateKey: .privateKey(privateKey)
            )
            config.minimumTLSVersion = .tlsv12
            config.applicationProtocols = protocols
            return try NIOSSLContext(configuration: config)
        }
    }
}
