import Foundation
public import SkiffCore

/// The wire rules of the Connect protocol (connectrpc.com/docs/protocol) as pure functions: its
/// content types, error codes and their HTTP statuses, the JSON of errors and of the end of a
/// stream, `connect-timeout-ms`, and the query of a GET request.
public enum ConnectWire {
    /// What a request's content type says about a Connect call.
    public enum ContentType: Sendable, Equatable {
        /// A unary call: `application/proto` or `application/json`.
        case unary(json: Bool)
        /// A streaming call: `application/connect+proto` or `application/connect+json`.
        case streaming(json: Bool)
    }

    /// Reads a Connect content type; `nil` for anything else (another protocol's, or JSON with a
    /// charset other than UTF-8).
    public static func contentType(_ value: String) -> ContentType? {
        let parts = MediaType.parts(value).filter { !$0.isEmpty }
        guard let base = parts.first else { return nil }
        for parameter in parts.dropFirst() where parameter.hasPrefix("charset=") {
            guard parameter == "charset=utf-8" || parameter == "charset=\"utf-8\"" else { return nil }
        }
        switch base {
        case "application/proto": return .unary(json: false)
        case "application/json": return .unary(json: true)
        case "application/connect+proto": return .streaming(json: false)
        case "application/connect+json": return .streaming(json: true)
        default: return nil
        }
    }

    /// The response content type of a call.
    public static func responseContentType(_ type: ContentType) -> String {
        switch type {
        case .unary(json: false): "application/proto"
        case .unary(json: true): "application/json"
        case .streaming(json: false): "application/connect+proto"
        case .streaming(json: true): "application/connect+json"
        }
    }

    /// A status code's Connect name (`not_found`), the `code` of an error.
    public static func codeName(_ status: StatusCode) -> String {
        switch status {
        case .cancelled: "canceled"
        case .unknown: "unknown"
        case .invalidArgument: "invalid_argument"
        case .deadlineExceeded: "deadline_exceeded"
        case .notFound: "not_found"
        case .alreadyExists: "already_exists"
        case .permissionDenied: "permission_denied"
        case .resourceExhausted: "resource_exhausted"
        case .failedPrecondition: "failed_precondition"
        case .aborted: "aborted"
        case .outOfRange: "out_of_range"
        case .unimplemented: "unimplemented"
        case .internal: "internal"
        case .unavailable: "unavailable"
        case .dataLoss: "data_loss"
        case .unauthenticated: "unauthenticated"
        default: "unknown"
        }
    }

    /// The HTTP status of a unary error response (the protocol's table).
    public static func httpStatus(_ status: StatusCode) -> Int {
        switch status {
        case .ok: 200
        case .cancelled: 499
        case .invalidArgument, .failedPrecondition, .outOfRange: 400
        case .deadlineExceeded: 504
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .permissionDenied: 403
        case .resourceExhausted: 429
        case .unimplemented: 501
        case .unavailable: 503
        case .unauthenticated: 401
        default: 500
        }
    }

    /// The JSON body of a unary error: `{"code":"not_found","message":"…"}`.
    public static func errorJSON(_ status: StatusCode, message: String) -> String {
        var json = "{\"code\":\(quote(codeName(status)))"
        if !message.isEmpty { json += ",\"message\":\(quote(message))" }
        return json + "}"
    }

    /// The JSON of a stream's end-of-stream message: the error (unless `OK`) and the trailing
    /// metadata, binary values in base64.
    public static func endOfStreamJSON(_ status: StatusCode, message: String, metadata: Metadata) -> String {
        var members: [String] = []
        if status != .ok { members.append("\"error\":\(errorJSON(status, message: message))") }
        if !metadata.isEmpty { members.append("\"metadata\":\(metadataJSON(metadata))") }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func metadataJSON(_ metadata: Metadata) -> String {
        var names: [String] = []
        var values: [String: [String]] = [:]
        for entry in metadata {
            if values[entry.key] == nil { names.append(entry.key) }
            switch entry.value {
            case .string(let text): values[entry.key, default: []].append(text)
            case .binary(let bytes): values[entry.key, default: []].append(Data(bytes).base64EncodedString())
            }
        }
        let members = names.map { name in
            "\(quote(name)):[" + values[name, default: []].map(quote).joined(separator: ",") + "]"
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Reads `connect-timeout-ms` (at most 10 digits, the protocol's bound): `nil` when malformed.
    public static func timeout(_ value: String) -> Duration? {
        guard !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let milliseconds = Int64(value)
        else { return nil }
        return .milliseconds(milliseconds)
    }

    /// The same timeout as a `grpc-timeout` value (which is what ``SkiffCore/CallAdmission`` reads):
    /// in milliseconds while they fit its 8 digits, in seconds beyond.
    static func grpcTimeout(_ value: String) -> String? {
        guard let milliseconds = Int64(value), timeout(value) != nil else { return nil }
        return milliseconds <= 99_999_999 ? "\(milliseconds)m" : "\(milliseconds / 1000)S"
    }

    /// The request of a unary call made with GET (`?encoding=json&message=…`).
    public struct GetRequest: Sendable, Equatable {
        /// Whether the message is JSON (else binary Protobuf).
        public var json: Bool
        /// The message's bytes.
        public var message: [UInt8]
    }

    /// Why a GET request's query was refused.
    public struct GetRefusal: Error, Sendable, Equatable {
        public var message: String
    }

    /// Reads the query of a GET request: `connect=v1` (optional), `encoding=proto|json`,
    /// `message` (percent-encoded; base64url when `base64=1`), `compression` (only `identity`).
    public static func getRequest(query: Substring) -> Result<GetRequest, GetRefusal> {
        var fields: [String: String] = [:]
        var message: [UInt8] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecode(parts[0]).map({ String(decoding: $0, as: UTF8.self) }),
                let value = percentDecode(parts.count > 1 ? parts[1] : "")
            else { return .failure(GetRefusal(message: "The query is not percent-encoded correctly.")) }
            if name == "message" { message = value } else { fields[name] = String(decoding: value, as: UTF8.self) }
        }
        if let version = fields["connect"], version != "v1" {
            return .failure(
                GetRefusal(message: "connect=\(version.prefix(16)) is not a version this server speaks (v1).")
            )
        }
        let json: Bool
        switch fields["encoding"] {
        case "proto": json = false
        case "json": json = true
        case nil: return .failure(GetRefusal(message: "A GET request needs encoding=proto or encoding=json."))
        case let other?: return .failure(GetRefusal(message: "encoding=\(other.prefix(16)) is not proto or json."))
        }
        if let compression = fields["compression"], compression != "identity" {
            return .failure(
                GetRefusal(message: "compression=\(compression.prefix(16)) is not supported (identity only).")
            )
        }
        if fields["base64"] == "1" {
            guard let decoded = decodeBase64URL(String(decoding: message, as: UTF8.self)) else {
                return .failure(GetRefusal(message: "The message is not base64url."))
            }
            message = decoded
        }
        return .success(GetRequest(json: json, message: message))
    }

    /// Percent-decoding of a query component (`+` is a space).
    static func percentDecode(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): out.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// base64url (or standard base64), with or without padding.
    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        GRPCHeaders.decodeBase64(text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
    }
}
