import NIOCore
import SkiffCore
import SkiffServer
import SkiffWire
import SwiftProtobuf
import Synchronization

/// What writes an HTTP call's responses on its event loop: the gRPC stream handler, the handler of
/// gRPC-Web and Connect calls. Called only on that loop.
protocol ResponseWriter: AnyObject {
    /// Writes one response message (with the response's head first, if `headers`; the response's
    /// end after it, if `end`), released from the connection's budget once written. Writes are
    /// flushed once per event-loop tick.
    func write(headers: Metadata?, message: ByteBuffer, end: ResponseState.End?) -> WriteOutcome
    /// Succeeds `promise` once the call may write again (its stream or connection can take more).
    func whenWritable(_ promise: EventLoopPromise<Void>)
    /// Ends the response with the call's status.
    func finish(_ end: ResponseState.End)
    /// Ends the call at once with an error (a passed deadline, a broken request).
    func abort(_ status: StatusCode, _ message: String)
}

/// What became of a response message handed to a ``ResponseWriter``.
enum WriteOutcome {
    /// Written; more may follow at once.
    case more
    /// Written; wait for ``ResponseWriter/whenWritable(_:)`` before the next.
    case wait
    /// The call has ended: nothing was written.
    case closed
}

/// How an HTTP call's messages are encoded: Protobuf's binary form, or its JSON mapping (Connect's
/// `application/json` and `application/connect+json`).
enum MessageCodec: Sendable, Equatable {
    case proto
    case json

    /// Unknown fields in a JSON request are ignored, as Connect servers do, so older servers
    /// accept newer clients.
    static let jsonDecoding: JSONDecodingOptions = {
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        return options
    }()

    func decode<M: SwiftProtobuf.Message>(_ type: M.Type, from bytes: ByteBuffer) throws(RPCError) -> M {
        switch self {
        case .proto:
            return try M(request: bytes)
        case .json:
            do {
                return try M(jsonUTF8Bytes: ProtobufByteBuffer(bytes), options: Self.jsonDecoding)
            } catch {
                throw RPCError(
                    code: .invalidArgument,
                    message: "The request is not valid JSON for \(M.protoMessageName): \(error)"
                )
            }
        }
    }

    func encode(_ message: some SwiftProtobuf.Message) throws -> ByteBuffer {
        switch self {
        case .proto: return try message.serializedBuffer()
        case .json:
            let bytes: ProtobufByteBuffer = try message.jsonUTF8Bytes()
            return bytes.buffer
        }
    }
}

/// The router's view of one call over HTTP (gRPC, gRPC-Web, Connect), a
/// ``SkiffCore/ServerCallStream``: requests as whole messages from the protocol's reader,
/// responses to its ``ResponseWriter`` on the event loop, the response rules kept in a
/// ``SkiffCore/ResponseState``.
final class HTTPServerCall<Writer: ResponseWriter>: ServerCallStream, @unchecked Sendable {
    /// Whole request messages, in order; finished when the client's side ends.
    let inbound = AsyncQueue<ByteBuffer>()
    private let writer: NIOLoopBound<Writer>
    private let eventLoop: any EventLoop
    private let response = Mutex(ResponseState())
    /// The largest response message the call sends (encoded).
    private let maxMessageSize: Int
    private let codec: MessageCodec

    /// The connection's bound on unread responses: each message is reserved before it is handed over.
    private let budget: ResponseBudget

    init(
        writer: NIOLoopBound<Writer>,
        eventLoop: any EventLoop,
        maxMessageSize: Int,
        budget: ResponseBudget,
        codec: MessageCodec = .proto
    ) {
        self.budget = budget
        self.writer = writer
        self.eventLoop = eventLoop
        self.maxMessageSize = maxMessageSize
        self.codec = codec
    }

    func setInitialMetadata(_ metadata: Metadata) {
        response.withLock { $0.setInitialMetadata(metadata) }
    }

    func addTrailingMetadata(_ metadata: Metadata) {
        response.withLock { $0.addTrailingMetadata(metadata) }
    }

    func receive<M: SwiftProtobuf.Message>(_ type: M.Type) async throws -> M? {
        guard let bytes = try await inbound.next() else { return nil }
        return try codec.decode(M.self, from: bytes)
    }

    func send<M: SwiftProtobuf.Message>(_ message: M) async throws {
        try await send(message, last: false)
    }

    /// The last message and the OK status in one hop to the event loop (a unary response: one
    /// flush for the message and the trailers).
    func sendLast<M: SwiftProtobuf.Message>(_ message: M) async throws {
        try await send(message, last: true)
    }

    private func send<M: SwiftProtobuf.Message>(_ message: M, last: Bool) async throws {
        try Task.checkCancellation()
        let bytes = try codec.encode(message)
        guard bytes.readableBytes <= maxMessageSize else {
            throw RPCError(
                code: .resourceExhausted,
                message:
                    "The response message of \(bytes.readableBytes) bytes exceeds the limit of \(maxMessageSize) bytes."
            )
        }
        // Room in the connection's budget first (waiting while its client does not read), then the
        // head is due if this is the first message.
        let size = bytes.readableBytes
        let room = budget.tryReserve(size)
        if room == false { throw CancellationError() }
        if room == nil { guard await budget.reserve(size) else { throw CancellationError() } }
        let headers: Metadata?
        let end: ResponseState.End?
        do {
            (headers, end) = try response.withLock { response in
                guard !response.ended else { throw CancellationError() }
                let headers = response.willSendMessage()
                return (headers, last ? response.end(.ok, message: "", metadata: [:]) : nil)
            }
        } catch {
            budget.release(size)
            throw error
        }
        let writer = self.writer
        if eventLoop.inEventLoop {
            // The handler runs on the connection's loop (the default): no hop, no allocation.
            switch writer.value.write(headers: headers, message: bytes, end: end) {
            case .more: return
            case .closed: throw CancellationError()
            case .wait:
                let writable = eventLoop.makePromise(of: Void.self)
                writer.value.whenWritable(writable)
                try await writable.futureResult.get()
            }
        } else {
            let written = eventLoop.makePromise(of: Void.self)
            eventLoop.execute {
                switch writer.value.write(headers: headers, message: bytes, end: end) {
                case .more: written.succeed()
                case .closed: written.fail(CancellationError())
                case .wait: writer.value.whenWritable(written)
                }
            }
            try await written.futureResult.get()
        }
    }

    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        guard let end = response.withLock({ $0.end(status, message: message, metadata: metadata) }) else { return }
        let writer = self.writer
        if eventLoop.inEventLoop {
            writer.value.finish(end)
        } else {
            eventLoop.execute { writer.value.finish(end) }
        }
    }

    func abort(_ status: StatusCode, message: String) {
        let writer = self.writer
        if eventLoop.inEventLoop {
            writer.value.abort(status, message)
        } else {
            eventLoop.execute { writer.value.abort(status, message) }
        }
    }

    /// The stream went away: nothing more is read or written.
    func closed() {
        _ = response.withLock { $0.end(.cancelled, message: "", metadata: [:]) }
        inbound.fail(CancellationError())
    }
}
