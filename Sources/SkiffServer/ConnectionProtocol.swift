public import Logging
public import NIOCore
public import SkiffCore

/// A wire protocol a ``Server`` speaks on the connections it accepts: skiff/1 is one
/// (``SkiffWireProtocol``); others are added the same way.
///
/// The listener picks a connection's protocol from the TLS ALPN name the client and server agreed
/// on, or, without one, from the connection's first bytes (``recognize(_:)``). It then calls
/// ``configure(_:context:)`` on the channel's event loop, with the bytes read so far still to come
/// through the pipeline. The protocol's handlers present every call to ``ConnectionContext/router``
/// (see ``SkiffCore/CallAdmission`` and ``SkiffCore/ResponseState`` for the rules every transport
/// keeps) and drain when they see `ChannelShouldQuiesceEvent`: no new calls, calls in flight finish
/// within ``ServerConfiguration/drainGracePeriod``, then close.
public protocol ConnectionProtocol: Sendable {
    /// The protocol's name: its TLS ALPN identifier (`skiff/1`, `h2`), also used in logs.
    var name: String { get }

    /// Whether a connection whose first bytes are `prefix` speaks this protocol. Called with at
    /// least one byte, and again with more while the answer is ``ProtocolRecognition/needMoreBytes``.
    func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition

    /// Installs the protocol's handlers on an accepted connection. Called on the channel's event
    /// loop; when the protocol was recognized from the first bytes, they arrive once this returns.
    func configure(_ channel: any Channel, context: ConnectionContext) throws

    /// Installs handlers that turn the connection away, the way the protocol reports a connection
    /// error (the server is at its connection limit, or shutting down), and close it.
    func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws
}

/// What a protocol's recognition of a connection's first bytes says.
public enum ProtocolRecognition: Sendable, Hashable {
    /// The bytes are this protocol's.
    case match
    /// They are not.
    case noMatch
    /// Too few bytes to tell yet.
    case needMoreBytes
}

/// What a ``ConnectionProtocol`` needs from the server to serve a connection.
public struct ConnectionContext: Sendable {
    /// The server's configuration: limits, timeouts, TLS.
    public let configuration: ServerConfiguration
    /// Where calls go.
    public let router: RPCRouter
    /// Run around every handler.
    public let interceptors: [any ServerInterceptor]
    /// Where the server logs.
    public let logger: Logger
    /// Where connection and call metrics go.
    public let observer: ServerObserver
}
