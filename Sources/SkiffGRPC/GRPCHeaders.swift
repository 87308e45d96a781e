import Foundation
public import NIOHPACK
import NIOHTTP1
public import SkiffCore
import SkiffWire

/// The HTTP/2 headers of gRPC calls (the gRPC over HTTP/2 spec) to and from Skiff's ``Metadata``.
public enum GRPCHeaders {
    /// A request's HEADERS, read.
    public struct Request: Sendable {
        /// `:path`, `/package.Service/Method`.
        public var path: String
        /// The call's metadata: every header but the pseudo-headers, `te`, `content-type` and
        /// `grpc-accept-encoding`; `-bin` values base64-decoded.
        public var metadata: Metadata
    }

    /// Why a request's HEADERS were refused, before any gRPC status could be sent.
    public enum Refusal: Error, Sendable, Equatable {
        /// Not a POST: HTTP 405.
        case methodNotAllowed
        /// No `application/grpc` content type: HTTP 415 (the spec's answer to a non-gRPC request).
        case unsupportedMediaType
        /// No `:path`, or one that is not `/Service/Method`-shaped: HTTP 400.
        case badPath
        /// A `-bin` value that is not base64, or a text value that is not printable ASCII: a
        /// gRPC INTERNAL with this message.
        case invalidMetadata(String)
    }

    /// Whether a header is not the call's metadata.
    static func isReserved(_ name: String) -> Bool {
        switch name {
        case "te", "content-type", "grpc-accept-encoding", "connection": true
        default: name.utf8.first == UInt8(ascii: ":")
        }
    }

    /// Reads a request's HEADERS.
    public static func request(_ headers: HPACKHeaders) -> Result<Request, Refusal> {
        guard headers.first(name: ":method") == "POST" else { return .failure(.methodNotAllowed) }
        guard let contentType = headers.first(name: "content-type"), isGRPC(contentType) else {
            return .failure(.unsupportedMediaType)
        }
        guard let path = headers.first(name: ":path"), path.utf8.first == UInt8(ascii: "/"), path.utf8.count > 1 else {
            return .failure(.badPath)
        }
        var metadata = Metadata()
        for (name, value, _) in headers {
            if isReserved(name) { continue }
            if name.hasSuffix("-bin") {
                guard let bytes = decodeBase64(value) else {
                    return .failure(.invalidMetadata("metadata \(name.prefix(64)) is not base64"))
                }
                metadata.add(name, binary: bytes)
            } else {
                guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
                    return .failure(.invalidMetadata("metadata \(name.prefix(64)) is not printable ASCII"))
                }
                metadata.add(name, value)
            }
        }
        return .success(Request(path: path, metadata: metadata))
    }

    /// Whether `contentType` names gRPC: `application/grpc`, `application/grpc+proto`, or either
    /// with parameters.
    public static func isGRPC(_ contentType: String) -> Bool {
        MediaType.base(of: contentType, is: "application/grpc", or: "application/grpc+proto")
    }

    /// The response HEADERS: `:status` 200, the content type, then the initial metadata.
    public static func response(_ metadata: Metadata) -> HPACKHeaders {
        var headers: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
        append(metadata, to: &headers)
        return headers
    }

    /// The TRAILERS (or, for a trailers-only response, the only HEADERS: then with `:status` and
    /// the content type first).
    public static func trailers(
        status: StatusCode,
        message: String,
        metadata: Metadata,
        trailersOnly: Bool
    ) -> HPACKHeaders {
        var headers: HPACKHeaders = trailersOnly ? [":status": "200", "content-type": "application/grpc"] : [:]
        headers.add(name: "grpc-status", value: String(status.rawValue))
        if !message.isEmpty { headers.add(name: "grpc-message", value: GRPCStatusMessage.encode(message)) }
        append(metadata, to: &headers)
        return headers
    }

    /// A response that refuses a request before gRPC applies (``Refusal``), as HTTP statuses.
    public static func refusal(_ refusal: Refusal) -> HPACKHeaders {
        switch refusal {
        case .methodNotAllowed: [":status": "405"]
        case .unsupportedMediaType: [":status": "415"]
        case .badPath: [":status": "400"]
        case .invalidMetadata(let message):
            trailers(status: .internal, message: message, metadata: [:], trailersOnly: true)
        }
    }

    static func append(_ metadata: Metadata, to headers: inout HPACKHeaders) {
        for entry in metadata {
            switch entry.value {
            case .string(let text): headers.add(name: entry.key, value: text)
            case .binary(let bytes): headers.add(name: entry.key, value: Data(bytes).base64EncodedString())
            }
        }
    }

    /// Adds metadata to HTTP/1 headers, each name after `prefix` (Connect's `trailer-`).
    static func append(_ metadata: Metadata, to headers: inout HTTPHeaders, prefix: String) {
        for entry in metadata {
            switch entry.value {
            case .string(let text): headers.add(name: prefix + entry.key, value: text)
            case .binary(let bytes): headers.add(name: prefix + entry.key, value: Data(bytes).base64EncodedString())
            }
        }
    }

    /// Base64 with or without padding (the spec lets senders omit it).
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var padded = text
        let remainder = padded.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { padded += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: padded).map(Array.init)
    }
}

/// Media types (`type/subtype; parameter=value`) read without Foundation: this runs on every call.
enum MediaType {
    /// Whether `value`'s type (before any `;`, without surrounding spaces and tabs) is `first` or
    /// `second` (lower case), compared case-insensitively, without allocating.
    static func base(of value: String, is first: StaticString, or second: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
            var start = bytes.startIndex
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            let base = UnsafeBufferPointer(rebasing: bytes[start..<end])
            func matches(_ candidate: StaticString) -> Bool {
                candidate.withUTF8Buffer { expected in
                    expected.count == base.count && zip(expected, base).allSatisfy { $0 == lowered($1) }
                }
            }
            return matches(first) || matches(second)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// `value` split at `;` (at most `limit` parts, the rest dropped), each part without its
    /// surrounding spaces and tabs and in ASCII lower case.
    static func parts(_ value: String, limit: Int = .max) -> [String] {
        var parts: [String] = []
        for part in value.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            guard parts.count < limit else { break }
            guard let start = part.firstIndex(where: { !isBlank($0) }),
                let end = part.lastIndex(where: { !isBlank($0) })
            else {
                parts.append("")
                continue
            }
            parts.append(String(decoding: part[start...end].lazy.map(lowered), as: UTF8.self))
        }
        return parts
    }
}
