import Foundation
public import NIOCore
public import SkiffCore
import SkiffWire

/// The wire rules of gRPC-Web (the gRPC-Web spec, PROTOCOL-WEB) as pure functions: its content
/// types, the trailers frame that ends a response, and the base64 of `application/grpc-web-text`.
public enum GRPCWebWire {
    /// How a gRPC-Web body is written.
    public enum Encoding: Sendable, Equatable {
        /// `application/grpc-web` (`+proto`): the bytes themselves.
        case binary
        /// `application/grpc-web-text` (`+proto`): base64, for clients that cannot read binary.
        case text
    }

    /// Reads a gRPC-Web content type; `nil` for anything else (`+json` included: this server
    /// speaks the Protobuf form).
    public static func contentType(_ value: String) -> Encoding? {
        let base = MediaType.parts(value, limit: 1).first
        switch base {
        case "application/grpc-web", "application/grpc-web+proto": return .binary
        case "application/grpc-web-text", "application/grpc-web-text+proto": return .text
        default: return nil
        }
    }

    /// The flag of the frame that carries the trailers.
    public static let trailersFlag: UInt8 = 0x80

    /// The trailers frame: flag 0x80, a 4-byte length, then `grpc-status`, `grpc-message` and the
    /// trailing metadata as HTTP/1 header lines (lower-case names, `-bin` values in base64).
    public static func trailersFrame(status: StatusCode, message: String, metadata: Metadata) -> ByteBuffer {
        var block = "grpc-status:\(status.rawValue)\r\n"
        if !message.isEmpty { block += "grpc-message:\(GRPCStatusMessage.encode(message))\r\n" }
        for entry in metadata {
            switch entry.value {
            case .string(let text): block += "\(entry.key.lowercased()):\(text)\r\n"
            case .binary(let bytes): block += "\(entry.key.lowercased()):\(Data(bytes).base64EncodedString())\r\n"
            }
        }
        var frame = ByteBuffer()
        frame.reserveCapacity(5 + block.utf8.count)
        frame.writeInteger(trailersFlag)
        frame.writeInteger(UInt32(block.utf8.count))
        frame.writeString(block)
        return frame
    }

    /// Base64 for `application/grpc-web-text` responses: every chunk written is encoded on its own,
    /// padded, which the spec allows (a reader decodes each 4-character group).
    public static func encodeText(_ bytes: ByteBuffer) -> ByteBuffer {
        ByteBuffer(string: Data(bytes.readableBytesView).base64EncodedString())
    }
}

/// Decodes the base64 body of an `application/grpc-web-text` request as it arrives, in any
/// chunking: each whole 4-character group is decoded (a padded group may end a chunk the client
/// encoded on its own, and another may follow). Holds at most 3 characters between calls.
public struct Base64TextDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Whether characters of an unfinished group are held.
    public var isMidGroup: Bool { !pending.isEmpty }

    /// Decodes what `bytes` completes; `nil` if they are not base64.
    public mutating func decode(_ bytes: ByteBufferView) -> ByteBuffer? {
        var out = ByteBuffer()
        out.reserveCapacity((pending.count + bytes.count) / 4 * 3)
        for byte in bytes {
            if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") { continue }
            pending.append(byte)
            guard pending.count == 4 else { continue }
            guard Self.decodeGroup(pending, into: &out) else { return nil }
            pending.removeAll(keepingCapacity: true)
        }
        return out
    }

    private static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }

    private static func decodeGroup(_ group: [UInt8], into out: inout ByteBuffer) -> Bool {
        let padding = group[3] == UInt8(ascii: "=") ? (group[2] == UInt8(ascii: "=") ? 2 : 1) : 0
        var bits: UInt32 = 0
        for index in 0..<(4 - padding) {
            guard let value = value(group[index]) else { return false }
            bits |= UInt32(value) << (18 - 6 * UInt32(index))
        }
        if padding == 1, group[2] == UInt8(ascii: "=") { return false }
        out.writeInteger(UInt8(truncatingIfNeeded: bits >> 16))
        if padding < 2 { out.writeInteger(UInt8(truncatingIfNeeded: bits >> 8)) }
        if padding < 1 { out.writeInteger(UInt8(truncatingIfNeeded: bits)) }
        return true
    }
}

/// Which browser origins may call the server (CORS, the Fetch standard), and the headers of its
/// answers. Nothing is allowed unless listed; `*` allows every origin.
public struct CORSPolicy: Sendable, Hashable {
    /// The allowed origins (`https://app.example.edu`), lower-cased, without a trailing `/`.
    public let allowedOrigins: Set<String>

    /// A policy allowing `origins` (`*` for any).
    public init(allowedOrigins: some Sequence<String>) {
        self.allowedOrigins = Set(allowedOrigins.map(Self.normalize))
    }

    /// A policy allowing no origin: browsers on other origins cannot read any answer.
    public static let none = CORSPolicy(allowedOrigins: [])

    static func normalize(_ origin: String) -> String {
        var origin = origin.lowercased()
        while origin.hasSuffix("/") { origin.removeLast() }
        return origin
    }

    /// Whether a request from `origin` may read the answer.
    public func allows(_ origin: String) -> Bool {
        allowedOrigins.contains("*") || allowedOrigins.contains(Self.normalize(origin))
    }

    /// Request headers a browser may send: every header is allowed (the call's metadata is the
    /// application's); this bounds only how long the list may be.
    static let maximumRequestHeadersList = 2048

    /// Response headers scripts may read besides the safelisted ones.
    static let exposedHeaders = [
        "grpc-status", "grpc-message", "grpc-status-details-bin", "connect-content-encoding",
        "connect-accept-encoding", "content-encoding", "grpc-encoding", "grpc-accept-encoding",
    ]

    /// How long a browser may cache a preflight's answer.
    static let preflightMaxAge = "7200"
}
