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
    /// How long a connection with no open stream is kept before it is drained and closed.
    public var idleTimeout: Duration = .seconds(300)
    /// How long a draining connection waits for its calls before resetting them.
    public var drainGracePeriod: Duration = .seconds(10)
    /// Most RST_STREAM frames a client may send per second before it is disconnected.
    public var maxResetsPerSecond: Int = 200
    /// Most PING frames a client may send per second before it is disconnected.
    public var maxPingsPerSecond: Int = 50
    /// Response bytes queued per stream above which a handler's `write` waits for the client.
    public var streamWriteBufferHighWater: Int = 256 * 1024

    /// Where handlers run: on the connection's event loop (no thread hop; handlers must not
    /// block) or on Swift's global concurrent executor.
    public var handlerExecutor: HandlerExecutor = .eventLoop

    /// TLS, when set: TLS 1.2 minimum, ALPN `skiff/1`.
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

        func makeContext() throws -> NIOSSLContext {
            var config = TLSConfiguration.makeServerConfiguration(
                certificateChain: certificateChain.map { .certificate($0) },
                privateKey: .privateKey(privateKey)
            )
            config.minimumTLSVersion = .tlsv12
            config.applicationProtocols = ["skiff/1"]
            return try NIOSSLContext(configuration: config)
        }
    }
}
