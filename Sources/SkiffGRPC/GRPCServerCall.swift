import NIOCore
import SkiffCore
import SkiffServer
import SkiffWire
import SwiftProtobuf
import Synchronization

/// The router's view of one gRPC call (``SkiffCore/ServerCallStream``): requests from the stream's
/// DATA, responses to its handler on the event loop, the response rules kept in a
/// ``SkiffCore/ResponseState``.
final class GRPCServerCall: ServerCallStream, @unchecked Sendable {
    /// Whole request messages, in order; finished when the client's side ends.
    let inbound = AsyncQueue<ByteBuffer>()
    private let handler: NIOLoopBound<GRPCStreamHandler>
    private let eventLoop: any EventLoop
    private let response = Mutex(ResponseState())
    /// The largest response message the call sends.
    private let maxMessageSize: Int

    /// The connection's bound on unread responses: each message is reserved before it is handed over.
    private let budget: ResponseBudget

    init(
        handler: NIOLoopBound<GRPCStreamHandler>,
        eventLoop: any EventLoop,
        maxMessageSize: Int,
        budget: ResponseBudget
    ) {
        self.budget = budget
        self.handler = handler
        self.eventLoop = eventLoop
        self.maxMessageSize = maxMessageSize
    }

    func setInitialMetadata(_ metadata: Metadata) {
        response.withLock { $0.setInitialMetadata(metadata) }
    }

    func addTrailingMetadata(_ metadata: Metadata) {
        response.withLock { $0.addTrailingMetadata(metadata) }
    }

    func receive<M: Message>(_ type: M.Type) async throws -> M? {
        guard let bytes = try await inbound.next() else { return nil }
        return try M(request: bytes)
    }

    func send<M: Message>(_ message: M) async throws {
        try Task.checkCancellation()
        let bytes = try message.serializedBuffer()
        guard bytes.readableBytes <= maxMessageSize else {
            throw RPCError(
                code: .resourceExhausted,
                message:
                    "The response message of \(bytes.readableBytes) bytes exceeds the limit of \(maxMessageSize) bytes."
            )
        }
        // Room in the connection's budget first (waiting while its client does not read), then the
        // HEADERS are due if this is the first message.
        guard await budget.reserve(bytes.readableBytes) else { throw CancellationError() }
        let headers: Metadata?
        do {
            headers = try response.withLock { response in
                guard !response.ended else { throw CancellationError() }
                return response.willSendMessage()
            }
        } catch {
            budget.release(bytes.readableBytes)
            throw error
        }
        let written = eventLoop.makePromise(of: Void.self)
        let handler = self.handler
        eventLoop.execute { handler.value.write(headers: headers, message: bytes, written: written) }
        try await written.futureResult.get()
    }

    func sendLast<M: Message>(_ message: M) async throws {
        try await send(message)
        finish(.ok, message: "", metadata: [:])
    }

    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        guard let end = response.withLock({ $0.end(status, message: message, metadata: metadata) }) else { return }
        let handler = self.handler
        if eventLoop.inEventLoop {
            handler.value.finish(end)
        } else {
            eventLoop.execute { handler.value.finish(end) }
        }
    }

    func abort(_ status: StatusCode, message: String) {
        let handler = self.handler
        if eventLoop.inEventLoop {
            handler.value.abort(status, message)
        } else {
            eventLoop.execute { handler.value.abort(status, message) }
        }
    }

    /// The stream went away: nothing more is read or written.
    func closed() {
        _ = response.withLock { $0.end(.cancelled, message: "", metadata: [:]) }
        inbound.fail(CancellationError())
    }
}
