import NIOCore
import NIOHPACK
import NIOHTTP2
import SkiffCore

/// Turns the frames of one HTTP/2 response into a call's events, for any of the three protocols,
/// with no I/O: feed frames with ``receive(_:)`` and ``streamClosed()``, and take events with
/// ``next()`` until it returns `nil`.
///
/// Events come in order: the initial metadata (none for a response that is only a status), the
/// messages, then exactly one end.
struct HTTPResponseDecoder: Sendable {
    enum Event: Sendable, Equatable {
        case metadata(Metadata)
        case message(ByteBuffer)
        case end(CallStatus)
    }

    let callProtocol: HTTPClientProtocol
    /// A Connect unary call: the body is the message itself, the status is the HTTP status.
    let plainBody: Bool
    private var reader: EnvelopeReader
    private var headersSeen = false
    private var metadata: Metadata?
    /// Connect unary: the `trailer-` headers, and the body collected so far.
    private var trailers = Metadata()
    private var body: ByteBuffer?
    /// Connect: the HTTP status of a response that is an error (its body is the error's JSON).
    private var errorStatus: Int?
    private var errorMetadata = Metadata()
    private var end: CallStatus?
    /// The status arrived inside the body (gRPC-Web trailers frame, Connect end of stream):
    /// nothing after it counts.
    private var endedInBody = false
    private var endDelivered = false

    init(protocol callProtocol: HTTPClientProtocol, kind: RPCKind, maxMessageSize: Int) {
        self.callProtocol = callProtocol
        self.plainBody = callProtocol == .connect && kind == .unary
        self.reader = EnvelopeReader(maxMessageSize: maxMessageSize)
    }

    /// Whether the end has been handed out.
    var isFinished: Bool { endDelivered }

    private mutating func finish(_ status: CallStatus) {
        if end == nil { end = status }
    }

    /// Takes one frame of the response.
    mutating func receive(_ payload: HTTP2Frame.FramePayload) {
        guard end == nil else { return }
        switch payload {
        case .headers(let frame):
            if headersSeen {
                trailersReceived(frame.headers)
            } else {
                headersSeen = true
                responseHeaders(frame.headers, endStream: frame.endStream)
            }
            if frame.endStream { streamClosed() }
        case .data(let frame):
            guard case .byteBuffer(let bytes) = frame.data else { return }
            dataReceived(bytes)
            if frame.endStream { streamClosed() }
        case .rstStream(let code):
            finish(HTTPClientResponse.status(reset: code))
        default:
            break
        }
    }

    private mutating func responseHeaders(_ headers: HPACKHeaders, endStream: Bool) {
        let status = headers.first(name: ":status").flatMap { Int($0) } ?? 0
        let contentType = headers.first(name: "content-type")?.lowercased() ?? ""
        switch callProtocol {
        case .grpc, .grpcWeb:
            if headers.first(name: "grpc-status") != nil, status == 200 || status == 0 || endStream {
                // Trailers-only: the status, and the metadata as trailers.
                return finish(HTTPClientResponse.grpcStatus(headers))
            }
            guard status == 200 else {
                return finish(
                    CallStatus(
                        HTTPClientResponse.code(httpStatus: status),
                        "The server answered HTTP \(status).",
                        metadata: HTTPClientResponse.metadata(headers)
                    )
                )
            }
            let expected = callProtocol == .grpc ? "application/grpc" : "application/grpc-web"
            guard contentType.hasPrefix(expected) else {
                return finish(CallStatus(.unknown, "The response's content type is '\(contentType.prefix(64))'."))
            }
            metadata = HTTPClientResponse.metadata(headers)
        case .connect:
            guard status == 200 else {
                errorStatus = status
                errorMetadata = HTTPClientResponse.metadata(headers, excludingPrefix: "trailer-")
                errorMetadata.add(contentsOf: HTTPClientResponse.metadata(headers, onlyPrefix: "trailer-"))
                body = ByteBuffer()
                return
            }
            let expected = plainBody ? "application/proto" : "application/connect+proto"
            guard contentType.hasPrefix(expected) else {
                return finish(CallStatus(.unknown, "The response's content type is '\(contentType.prefix(64))'."))
            }
            if plainBody {
                metadata = HTTPClientResponse.metadata(headers, excludingPrefix: "trailer-")
                trailers = HTTPClientResponse.metadata(headers, onlyPrefix: "trailer-")
                body = ByteBuffer()
            } else {
                metadata = HTTPClientResponse.metadata(headers)
            }
        }
    }

    private mutating func trailersReceived(_ headers: HPACKHeaders) {
        switch callProtocol {
        case .grpc, .grpcWeb:
            finish(HTTPClientResponse.grpcStatus(headers))
        case .connect:
            // Connect carries no HTTP trailers; any are trailing metadata.
            trailers.add(contentsOf: HTTPClientResponse.metadata(headers))
        }
    }

    private mutating func dataReceived(_ bytes: ByteBuffer) {
        guard headersSeen else { return finish(CallStatus(.internal, "The response sent DATA before HEADERS.")) }
        if var collected = body {
            guard collected.readableBytes + bytes.readableBytes <= reader.maxMessageSize else {
                return finish(
                    CallStatus(.resourceExhausted, "The response exceeds the \(reader.maxMessageSize)-byte limit.")
                )
            }
            body = nil  // keep the buffer uniquely referenced while appending
            collected.writeImmutableBuffer(bytes)
            body = collected
        } else if !endedInBody {
            reader.append(bytes)
        }
    }

    /// The stream has ended (END_STREAM, or the inbound side closed): a call without a status yet
    /// ends with one that says so.
    mutating func streamClosed() {
        guard end == nil else { return }
        if let errorStatus {
            return finish(
                HTTPClientResponse.connectUnaryError(
                    httpStatus: errorStatus,
                    body: body ?? ByteBuffer(),
                    metadata: errorMetadata
                )
            )
        }
        if plainBody, let collected = body {
            body = nil
            plainMessage = collected
            return finish(CallStatus(.ok, metadata: trailers))
        }
        if callProtocol == .grpcWeb || (callProtocol == .connect && !plainBody) {
            // The status may still be in the body.
            pendingClose = true
            return
        }
        finish(CallStatus(.internal, "The server ended the response without a status."))
    }

    /// The stream ended with its status still to come from the body.
    private var pendingClose = false
    /// Connect unary: the whole body, once it has arrived.
    private var plainMessage: ByteBuffer?

    /// The next event, or `nil` until more frames arrive.
    mutating func next() -> Event? {
        if let metadata {
            self.metadata = nil
            return .metadata(metadata)
        }
        if let plainMessage {
            self.plainMessage = nil
            return .message(plainMessage)
        }
        while !endedInBody {
            switch reader.next() {
            case .needMoreData:
                if pendingClose {
                    pendingClose = false
                    finish(
                        CallStatus(
                            .internal,
                            reader.isMidMessage
                                ? "The response ended in the middle of a message."
                                : "The server ended the response without a status."
                        )
                    )
                }
                return deliverEnd()
            case .tooLarge(let length):
                endedInBody = true
                end = CallStatus(
                    .resourceExhausted,
                    "A response message of \(length) bytes exceeds the \(reader.maxMessageSize)-byte limit."
                )
            case .message(let flags, let bytes):
                if callProtocol == .grpcWeb, flags & 0x80 != 0 {
                    endedInBody = true
                    end = HTTPClientResponse.grpcWebTrailers(bytes)
                } else if callProtocol == .connect, !plainBody, flags & 0x02 != 0 {
                    endedInBody = true
                    end = HTTPClientResponse.connectEndOfStream(bytes)
                } else if flags & 0x01 != 0 {
                    endedInBody = true
                    end = CallStatus(
                        .internal,
                        "The server sent a compressed message; this client reads identity only."
                    )
                } else {
                    return .message(bytes)
                }
            }
        }
        return deliverEnd()
    }

    private mutating func deliverEnd() -> Event? {
        guard let end, !endDelivered else { return nil }
        endDelivered = true
        return .end(end)
    }
}
