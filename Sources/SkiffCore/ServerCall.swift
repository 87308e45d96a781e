public import SwiftProtobuf

/// One call as a transport presents it to the router. Implemented by each server transport.
///
/// Implementation requirements: `receive` returns request messages in order and `nil` once the
/// client's side has ended; `send` writes response HEADERS before the first message and suspends
/// while the client's window is closed; `finish` sends TRAILERS once, and later calls do nothing.
public protocol ServerCallStream: ResponseMetadataSink {
    /// The next request message, or `nil` when the client's side has ended.
    func receive<Message: SwiftProtobuf.Message>(_ type: Message.Type) async throws -> Message?
    /// Writes one response message.
    func send<Message: SwiftProtobuf.Message>(_ message: Message) async throws
    /// Writes one response message and the OK trailers together (the unary fast path).
    func sendLast<Message: SwiftProtobuf.Message>(_ message: Message) async throws
    /// Ends the call with a status.
    func finish(_ status: StatusCode, message: String, metadata: Metadata)
    /// Ends the call at once with an error status, as when its deadline passes (``CallRunner``
    /// calls it): responses not yet written may be dropped, and the handler is cancelled. Does
    /// nothing to a response that has ended, but still cancels the handler.
    func abort(_ status: StatusCode, message: String)
}

extension ServerCallStream {
    /// Receives exactly one request message, as unary and server-streaming methods need.
    ///
    /// - Throws: ``RPCError`` with `INTERNAL` when the client sent zero or more than one message.
    @inlinable
    public func receiveSingle<Message: SwiftProtobuf.Message>(_ type: Message.Type) async throws -> Message {
        guard let message = try await receive(type) else {
            throw RPCError(code: .internal, message: "The method expects exactly one request message; none was sent.")
        }
        guard try await receive(type) == nil else {
            throw RPCError(code: .internal, message: "The method expects exactly one request message; more were sent.")
        }
        return message
    }
}
