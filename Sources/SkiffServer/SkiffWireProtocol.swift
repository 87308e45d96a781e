public import NIOCore
import SkiffWire

/// skiff/1 (`docs/PROTOCOL.md`) as a ``ConnectionProtocol``: every ``Server`` serves it unless
/// told otherwise.
///
/// A skiff/1 client's first byte is 0x89, the first byte of the preface, which is neither ASCII
/// (HTTP/1.x), nor a TLS record (0x16), nor the start of the HTTP/2 preface; so one byte tells it
/// apart on a listener that serves several protocols.
public struct SkiffWireProtocol: ConnectionProtocol {
    public init() {}

    public var name: String { "skiff/1" }

    public func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition {
        guard let first = prefix.first else { return .needMoreBytes }
        return first == 0x89 ? .match : .noMatch
    }

    public func configure(_ channel: any Channel, context: ConnectionContext) throws {
        try channel.pipeline.syncOperations.addHandler(
            ServerConnectionHandler(context: context, eventLoop: channel.eventLoop)
        )
    }

    public func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws {
        try channel.pipeline.syncOperations.addHandler(
            ConnectionRefuser(
                settings: context.configuration.settings,
                reason: reason,
                timeout: context.configuration.prefaceTimeout
            )
        )
    }
}
