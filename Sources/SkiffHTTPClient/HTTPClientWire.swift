import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import SkiffCore
import SkiffWire

/// The call protocol an ``HTTPClientTransport`` speaks over its HTTP/2 connection.
public enum HTTPClientProtocol: String, Sendable, Hashable, CaseIterable {
    /// gRPC (`application/grpc`): enveloped messages, the status in HTTP/2 trailers.
    case grpc
    /// gRPC-Web (`application/grpc-web+proto`): enveloped messages, the status in a final 0x80 frame.
    case grpcWeb = "grpc-web"
    /// Connect: unary calls as plain `application/proto` bodies, streams as `application/connect+proto`
    /// envelopes ending with a JSON end-of-stream message.
    case connect
}

/// The request side of the wire rules, as pure functions: the HEADERS of a call and the envelope
/// of a message.
enum HTTPClientRequest {
    /// Request headers that are the protocol's, never metadata.
    static let reservedKeys: Set<String> = [
        "content-type", "te", "grpc-timeout", "connect-timeout-ms", "connect-protocol-version", "x-grpc-web",
        "content-length", "connection", "host", "user-agent", "grpc-accept-encoding", "grpc-encoding",
    ]

    static let userAgent = "skiff-http-client/1"

    /// The HEADERS of a call: pseudo-headers, the protocol's headers, the timeout, then the metadata
    /// (`-bin` values in base64). Throws INTERNAL for metadata that cannot travel.
    static func headers(
        protocol callProtocol: HTTPClientProtocol,
        path: String,
        authority: String,
        kind: RPCKind,
        options: CallOptions
    ) throws(RPCError) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(9 + options.metadata.count)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "http")
        headers.add(name: ":path", value: path)
        headers.add(name: ":authority", value: authority)
        switch callProtocol {
        case .grpc:
            headers.add(name: "content-type", value: "application/grpc")
            headers.add(name: "te", value: "trailers")
            if let timeout = options.timeout { headers.add(name: "grpc-timeout", value: GRPCTimeout.format(timeout)) }
        case .grpcWeb:
            headers.add(name: "content-type", value: "application/grpc-web+proto")
            headers.add(name: "x-grpc-web", value: "1")
            if let timeout = options.timeout { headers.add(name: "grpc-timeout", value: GRPCTimeout.format(timeout)) }
        case .connect:
            headers.add(
                name: "content-type",
                value: kind == .unary ? "application/proto" : "application/connect+proto"
            )
            headers.add(name: "connect-protocol-version", value: "1")
            if let timeout = options.timeout {
                headers.add(name: "connect-timeout-ms", value: connectTimeout(timeout))
            }
        }
        headers.add(name: "user-agent", value: userAgent)
        for entry in options.metadata {
            guard Metadata.isValidKey(entry.key.utf8), !reservedKeys.contains(entry.key) else {
                throw RPCError(code: .internal, message: "Metadata key '\(entry.key.prefix(64))' cannot be sent.")
            }
            switch entry.value {
            case .string(let text):
                guard Metadata.isValidTextValue(text.utf8) else {
                    throw RPCError(
                        code: .internal,
                        message: "Metadata '\(entry.key.prefix(64))' is not printable ASCII."
                    )
                }
                headers.add(name: entry.key, value: text)
            case .binary(let bytes):
                headers.add(name: entry.key, value: Data(bytes).base64EncodedString())
            }
        }
        return headers
    }

    /// `connect-timeout-ms`: whole milliseconds, rounded up, at most 10 digits.
    static func connectTimeout(_ timeout: Duration) -> String {
        let (seconds, attoseconds) = timeout.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return "0" }
        let limit: Int64 = 9_999_999_999
        guard seconds < limit / 1000 else { return String(limit) }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return String(min(milliseconds, limit))
    }

    /// One enveloped message: a flag byte, a 4-byte big-endian length, the message.
    static func envelope(_ message: ByteBuffer, flags: UInt8 = 0) -> ByteBuffer {
        var frame = ByteBufferAllocator().buffer(capacity: 5 + message.readableBytes)
        frame.writeInteger(flags)
        frame.writeInteger(UInt32(message.readableBytes))
        frame.writeImmutableBuffer(message)
        return frame
    }
}

/// Splits a response body into enveloped messages (flag byte, 4-byte length, message) as they
/// arrive in DATA frames of any size. Never buffers a message above ``maxMessageSize``.
struct EnvelopeReader: Sendable {
    enum Next: Sendable, Equatable {
        /// A whole message and its flags.
        case message(flags: UInt8, ByteBuffer)
        /// The rest has not arrived.
        case needMoreData
        /// A length prefix above ``maxMessageSize``.
        case tooLarge(length: Int)
    }

    let maxMessageSize: Int
    private var buffer = ByteBuffer()

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    /// Whether part of a message is held.
    var isMidMessage: Bool { buffer.readableBytes > 0 }

    mutating func append(_ bytes: ByteBuffer) {
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            buffer.writeImmutableBuffer(bytes)
        }
    }

    mutating func next() -> Next {
        guard buffer.readableBytes >= 5,
            let flags = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt32.self)
        else { return .needMoreData }
        // Trailers and end-of-stream frames are bounded by the same limit.
        guard Int(length) <= maxMessageSize else { return .tooLarge(length: Int(length)) }
        guard buffer.readableBytes >= 5 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 5)
        let message = buffer.readSlice(length: Int(length))!
        if buffer.readableBytes == 0 { buffer = ByteBuffer() }
        return .message(flags: flags, message)
    }
}

/// The status a call ended with, and its trailing metadata.
struct CallStatus: Sendable, Equatable {
    var code: StatusCode
    var message: String
    var metadata: Metadata

    init(_ code: StatusCode, _ message: String = "", metadata: Metadata = [:]) {
        self.code = code
        self.message = message
        self.metadata = metadata
    }

    var error: RPCError { RPCError(code: code, message: message, metadata: metadata) }
}

/// The response side of the wire rules, as pure functions: metadata from headers, gRPC statuses,
/// HTTP statuses, gRPC-Web trailer blocks and Connect's error JSON.
enum HTTPClientResponse {
    /// Response headers that are the protocol's, never metadata.
    static let reservedKeys: Set<String> = [
        "content-type", "content-length", "grpc-status", "grpc-message", "grpc-encoding", "grpc-accept-encoding",
        "content-encoding", "accept-encoding", "connect-content-encoding", "connect-accept-encoding", "date",
        "connection", "transfer-encoding", "trailer", "te", "vary", "keep-alive",
    ]

    /// The metadata of a header block: every header but pseudo-headers and the protocol's, `-bin`
    /// values base64-decoded (values that are not base64 are dropped). With `trailerPrefix`, only
    /// headers with that prefix, which is removed (Connect's `trailer-`); without, headers with
    /// `excludingPrefix` are skipped.
    static func metadata(
        _ headers: HPACKHeaders,
        onlyPrefix: String? = nil,
        excludingPrefix: String? = nil
    ) -> Metadata {
        var metadata = Metadata()
        for (name, value, _) in headers {
            if name.hasPrefix(":") { continue }
            var key = Substring(name)
            if let onlyPrefix {
                guard name.hasPrefix(onlyPrefix) else { continue }
                key = key.dropFirst(onlyPrefix.count)
            } else if let excludingPrefix, name.hasPrefix(excludingPrefix) {
                continue
            }
            if reservedKeys.contains(String(key)) { continue }
            add(String(key), value, to: &metadata)
        }
        return metadata
    }

    /// Adds one received entry, decoding `-bin` values.
    static func add(_ key: String, _ value: String, to metadata: inout Metadata) {
        if Metadata.isBinaryKey(key.utf8) {
            if let bytes = decodeBase64(value) { metadata.add(key, binary: bytes) }
        } else {
            metadata.add(key, value)
        }
    }

    /// The gRPC status of a trailers block (or a trailers-only HEADERS): `grpc-status`,
    /// `grpc-message` percent-decoded, the rest as trailing metadata.
    static func grpcStatus(_ headers: HPACKHeaders) -> CallStatus {
        let metadata = metadata(headers)
        return grpcStatus(
            status: headers.first(name: "grpc-status"),
            message: headers.first(name: "grpc-message"),
            metadata: metadata
        )
    }

    static func grpcStatus(status: String?, message: String?, metadata: Metadata) -> CallStatus {
        guard let status else {
            return CallStatus(.unknown, "The response ended without grpc-status.", metadata: metadata)
        }
        guard let code = UInt32(status.trimmingCharacters(in: .whitespaces)) else {
            return CallStatus(.unknown, "grpc-status '\(status.prefix(16))' is not a number.", metadata: metadata)
        }
        return CallStatus(StatusCode(rawValue: code), message.map(GRPCStatusMessage.decode) ?? "", metadata: metadata)
    }

    /// The status of a gRPC or gRPC-Web response whose HTTP status is not 200 (the gRPC spec's
    /// http-grpc-status-mapping; Connect's table is the same).
    static func code(httpStatus: Int) -> StatusCode {
        switch httpStatus {
        case 400: .internal
        case 401: .unauthenticated
        case 403: .permissionDenied
        case 404: .unimplemented
        case 429, 502, 503, 504: .unavailable
        default: .unknown
        }
    }

    /// The gRPC-Web trailers frame: `name:value\r\n` lines.
    static func grpcWebTrailers(_ block: ByteBuffer) -> CallStatus {
        var status: String?
        var message: String?
        var metadata = Metadata()
        let text = String(decoding: block.readableBytesView, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "grpc-status": status = value
            case "grpc-message": message = value
            case _ where reservedKeys.contains(name) || name.isEmpty: continue
            default: add(name, value, to: &metadata)
            }
        }
        return grpcStatus(status: status, message: message, metadata: metadata)
    }

    /// A Connect code name (`not_found`) as a status code; `nil` for names the protocol lacks.
    static func connectCode(_ name: String) -> StatusCode? {
        switch name {
        case "canceled", "cancelled": .cancelled
        case "unknown": .unknown
        case "invalid_argument": .invalidArgument
        case "deadline_exceeded": .deadlineExceeded
        case "not_found": .notFound
        case "already_exists": .alreadyExists
        case "permission_denied": .permissionDenied
        case "resource_exhausted": .resourceExhausted
        case "failed_precondition": .failedPrecondition
        case "aborted": .aborted
        case "out_of_range": .outOfRange
        case "unimplemented": .unimplemented
        case "internal": .internal
        case "unavailable": .unavailable
        case "data_loss": .dataLoss
        case "unauthenticated": .unauthenticated
        default: nil
        }
    }

    /// A Connect error object, `{"code":"not_found","message":"…"}`; `nil` unless it is a JSON
    /// object with a string `code`.
    static func connectError(_ object: Any?) -> (code: StatusCode, message: String)? {
        guard let object = object as? [String: Any], let name = object["code"] as? String else { return nil }
        return (connectCode(name) ?? .unknown, object["message"] as? String ?? "")
    }

    /// The status of a Connect response whose HTTP status is not 200: the code named by the JSON
    /// error body, or the HTTP status's when the body is not one.
    static func connectUnaryError(httpStatus: Int, body: ByteBuffer, metadata: Metadata) -> CallStatus {
        let json = body.readableBytes > 0 ? try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) : nil
        if let (code, message) = connectError(json) { return CallStatus(code, message, metadata: metadata) }
        return CallStatus(code(httpStatus: httpStatus), "HTTP status \(httpStatus).", metadata: metadata)
    }

    /// The status of Connect's end-of-stream message: `{"error":{…},"metadata":{"k":["v"]}}`.
    static func connectEndOfStream(_ body: ByteBuffer) -> CallStatus {
        guard
            let object =
                (body.readableBytes == 0 ? [:] : try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)))
                as? [String: Any]
        else { return CallStatus(.internal, "The end-of-stream message is not a JSON object.") }
        var metadata = Metadata()
        if let entries = object["metadata"] as? [String: Any] {
            for key in entries.keys.sorted() {
                for value in entries[key] as? [String] ?? [] { add(key.lowercased(), value, to: &metadata) }
            }
        }
        guard let error = object["error"] else { return CallStatus(.ok, metadata: metadata) }
        guard let (code, message) = connectError(error) else {
            return CallStatus(.unknown, "The end-of-stream error has no code.", metadata: metadata)
        }
        return CallStatus(code, message, metadata: metadata)
    }

    /// The status of an RST_STREAM (the gRPC spec's HTTP/2 error code mapping).
    static func status(reset code: HTTP2ErrorCode) -> CallStatus {
        switch code {
        case .cancel: CallStatus(.cancelled, "The server cancelled the stream.")
        case .refusedStream: CallStatus(.unavailable, "The server refused the stream.")
        case .enhanceYourCalm: CallStatus(.resourceExhausted, "The server reset the stream: ENHANCE_YOUR_CALM.")
        case .inadequateSecurity: CallStatus(.permissionDenied, "The server reset the stream: INADEQUATE_SECURITY.")
        default: CallStatus(.internal, "The server reset the stream (HTTP/2 error \(code.networkCode)).")
        }
    }

    /// Base64 with or without padding.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var padded = text.trimmingCharacters(in: .whitespaces)
        let remainder = padded.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { padded += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: padded).map(Array.init)
    }
}
