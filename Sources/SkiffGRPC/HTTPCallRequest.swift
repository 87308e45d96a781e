import Foundation
import NIOCore
import NIOHTTP1
import SkiffCore

/// An answer that is not a call's: a CORS preflight's, or a refusal before a call began.
struct HTTPAnswer {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: ByteBuffer
    /// Whether the request's body is read (and dropped) before the answer, so that the HTTP/1.1
    /// connection carries on; if not, the answer goes at once and the connection closes.
    var readsBody = true

    /// A plain-text answer.
    static func text(_ status: HTTPResponseStatus, _ message: String, headers: HTTPHeaders = [:]) -> HTTPAnswer {
        var headers = headers
        headers.replaceOrAdd(name: "content-type", value: "text/plain; charset=utf-8")
        return HTTPAnswer(status: status, headers: headers, body: ByteBuffer(string: message + "\n"))
    }

    /// A call's error in its protocol's own form, before the call began.
    static func error(_ kind: HTTPExchange.Kind, _ status: StatusCode, _ message: String) -> HTTPAnswer {
        switch kind {
        case .grpcWeb(let encoding):
            // A gRPC-Web error is an HTTP 200 whose body is the trailers frame.
            var body = GRPCWebWire.trailersFrame(status: status, message: message, metadata: [:])
            if encoding == .text { body = GRPCWebWire.encodeText(body) }
            return HTTPAnswer(
                status: .ok,
                headers: ["content-type": kind.contentType],
                body: body
            )
        case .connectUnary:
            return HTTPAnswer(
                status: HTTPResponseStatus(statusCode: ConnectWire.httpStatus(status)),
                headers: ["content-type": "application/json"],
                body: ByteBuffer(string: ConnectWire.errorJSON(status, message: message))
            )
        case .connectStreaming:
            return HTTPAnswer(
                status: .ok,
                headers: ["content-type": kind.contentType],
                body: ConnectWire.endOfStreamEnvelope(status, message: message, metadata: [:])
            )
        }
    }
}

/// One HTTP request's head, read: which protocol it speaks, where it goes, its metadata. Pure:
/// no I/O, no state.
struct HTTPCallRequest {
    let head: HTTPRequestHead
    let settings: HTTPCallSettings
    /// The request's `Origin`, when the CORS policy allows it (its answer then carries CORS headers).
    let allowedOrigin: String?

    init(head: HTTPRequestHead, settings: HTTPCallSettings) {
        self.head = head
        self.settings = settings
        self.allowedOrigin = head.headers.first(name: "origin").flatMap { settings.cors.allows($0) ? $0 : nil }
    }

    /// What the request asks for.
    enum Route {
        /// A CORS preflight, answered.
        case preflight(HTTPAnswer)
        /// A request answered without a call (a wrong method or content type, a bad query).
        case answer(HTTPAnswer)
        /// A call: its kind, path, metadata, and for a Connect GET its request message.
        case call(HTTPExchange.Kind, path: String, metadata: Metadata, getMessage: [UInt8]?)
    }

    static let allowedMethods = "GET, POST, OPTIONS"

    func route() -> Route {
        let path =
            head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? ""
        switch head.method {
        case .OPTIONS:
            return .preflight(preflight())
        case .POST:
            return post(path: path)
        case .GET:
            return get(path: path)
        default:
            return .answer(
                cors(
                    .text(
                        .methodNotAllowed,
                        "Calls are POST (or GET for Connect).",
                        headers: ["allow": Self.allowedMethods]
                    )
                )
            )
        }
    }

    // MARK: Kinds

    private func post(path: String) -> Route {
        let contentType = head.headers.first(name: "content-type") ?? ""
        let kind: HTTPExchange.Kind
        if let encoding = GRPCWebWire.contentType(contentType), settings.protocols.contains(.grpcWeb) {
            kind = .grpcWeb(encoding)
        } else if let connect = ConnectWire.contentType(contentType), settings.protocols.contains(.connect) {
            switch connect {
            case .unary(let json): kind = .connectUnary(json: json)
            case .streaming(let json): kind = .connectStreaming(json: json)
            }
        } else if GRPCHeaders.isGRPC(contentType), settings.protocols.contains(.grpc) {
            return .answer(
                cors(.text(.httpVersionNotSupported, "gRPC needs HTTP/2; over HTTP/1.1 use gRPC-Web or Connect."))
            )
        } else {
            return .answer(
                cors(.text(.unsupportedMediaType, "Unsupported Content-Type. This server takes \(acceptedTypes)."))
            )
        }
        return call(kind, path: path, getMessage: nil)
    }

    private var acceptedTypes: String {
        var types: [String] = []
        if settings.protocols.contains(.grpc) { types.append("application/grpc (HTTP/2)") }
        if settings.protocols.contains(.grpcWeb) { types += ["application/grpc-web", "application/grpc-web-text"] }
        if settings.protocols.contains(.connect) {
            types += ["application/proto", "application/json", "application/connect+proto", "application/connect+json"]
        }
        return types.joined(separator: ", ")
    }

    private func get(path: String) -> Route {
        guard settings.protocols.contains(.connect) else {
            return .answer(cors(.text(.methodNotAllowed, "Calls are POST.", headers: ["allow": "POST, OPTIONS"])))
        }
        let query = head.uri.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        if query.isEmpty {
            return .answer(
                cors(.text(.notFound, "Not a call: Connect's GET is /package.Service/Method?encoding=json&message=…"))
            )
        }
        switch ConnectWire.getRequest(query: query) {
        case .success(let request):
            return call(.connectUnary(json: request.json), path: path, getMessage: request.message)
        case .failure(let refusal):
            return .answer(cors(.error(.connectUnary(json: true), .invalidArgument, refusal.message)))
        }
    }

    // MARK: The call

    private func call(_ kind: HTTPExchange.Kind, path: String, getMessage: [UInt8]?) -> Route {
        let size = head.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
        if size > settings.maxHeaderListSize {
            return refuse(
                kind,
                path: path,
                .resourceExhausted,
                "request metadata of \(size) bytes exceeds the limit of \(settings.maxHeaderListSize)"
            )
        }
        if case .connectUnary = kind,
            let length = head.headers.first(name: "content-length").flatMap(Int.init),
            length > settings.maxMessageSize
        {
            var answer = refusal(
                kind,
                path: path,
                .resourceExhausted,
                "request message of \(length) bytes exceeds the limit of \(settings.maxMessageSize) bytes"
            )
            answer.readsBody = false
            return .answer(answer)
        }
        if case .connectUnary = kind {
            if let version = head.headers.first(name: "connect-protocol-version"), version != "1" {
                return refuse(kind, path: path, .invalidArgument, "connect-protocol-version must be 1.")
            }
        }
        if let encoding = head.headers.first(name: kind.encodingHeader), encoding.lowercased() != "identity" {
            var answer = refusal(
                kind,
                path: path,
                .unimplemented,
                "\(kind.encodingHeader) \(encoding.prefix(32)) is not supported: this server reads identity only."
            )
            answer.headers.add(name: kind.acceptEncodingHeader, value: "identity")
            return .answer(answer)
        }
        switch metadata(kind) {
        case .success(let metadata):
            return .call(kind, path: path, metadata: metadata, getMessage: getMessage)
        case .failure(let refusal):
            return refuse(kind, path: path, refusal.code, refusal.message)
        }
    }

    private func refuse(_ kind: HTTPExchange.Kind, path: String, _ status: StatusCode, _ message: String) -> Route {
        .answer(refusal(kind, path: path, status, message))
    }

    /// A call refused before it began, counted, in the protocol's form.
    private func refusal(_ kind: HTTPExchange.Kind, path: String, _ status: StatusCode, _ message: String) -> HTTPAnswer
    {
        settings.runner.rejected(settings.runner.rejection(path: path, status: status, message: message))
        return cors(.error(kind, status, message))
    }

    /// Headers that are HTTP's or the protocol's, not the call's metadata.
    static let notMetadata: Set<String> = [
        "host", "content-type", "content-length", "content-encoding", "accept", "accept-encoding",
        "accept-language", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "origin", "referer",
        "grpc-accept-encoding", "grpc-encoding", "x-grpc-web", "x-user-agent", "priority", "cache-control",
        "pragma", "dnt", "proxy-connection",
    ]

    /// The call's metadata: every header but HTTP's own and the protocol's, names lower-cased,
    /// `-bin` values base64-decoded. Connect's timeout becomes the `grpc-timeout` every transport reads.
    func metadata(_ kind: HTTPExchange.Kind) -> Result<Metadata, RPCError> {
        var metadata = Metadata()
        let connect = kind.isConnect
        for (rawName, value) in head.headers {
            let name = rawName.lowercased()
            if Self.notMetadata.contains(name) || name.hasPrefix("sec-") || name.hasPrefix("access-control-")
                || name.hasPrefix(":")
            {
                continue
            }
            if connect && (name.hasPrefix("connect-") || name == "grpc-timeout") { continue }
            if name.hasSuffix("-bin") {
                guard let bytes = GRPCHeaders.decodeBase64(value) else {
                    return .failure(
                        RPCError(code: .invalidArgument, message: "metadata \(name.prefix(64)) is not base64")
                    )
                }
                metadata.add(name, binary: bytes)
            } else {
                guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
                    return .failure(
                        RPCError(code: .invalidArgument, message: "metadata \(name.prefix(64)) is not printable ASCII")
                    )
                }
                metadata.add(name, value)
            }
        }
        if connect, let timeout = head.headers.first(name: "connect-timeout-ms") {
            guard let grpcTimeout = ConnectWire.grpcTimeout(timeout) else {
                return .failure(
                    RPCError(
                        code: .invalidArgument,
                        message: "connect-timeout-ms must be a number of at most 10 digits."
                    )
                )
            }
            metadata.add("grpc-timeout", grpcTimeout)
        }
        return .success(metadata)
    }

    // MARK: CORS

    private func preflight() -> HTTPAnswer {
        guard head.headers.first(name: "origin") != nil,
            let method = head.headers.first(name: "access-control-request-method")
        else {
            return .text(.noContent, "", headers: ["allow": Self.allowedMethods]).withoutBody
        }
        guard let origin = allowedOrigin else {
            return .text(.forbidden, "This origin may not call the server (see --cors-origin).")
        }
        guard method == "POST" || method == "GET" else {
            return cors(.text(.methodNotAllowed, "Calls are POST or GET.", headers: ["allow": Self.allowedMethods]))
        }
        let requested = head.headers[canonicalForm: "access-control-request-headers"].joined(separator: ", ")
        guard requested.utf8.count <= CORSPolicy.maximumRequestHeadersList else {
            return .text(.requestHeaderFieldsTooLarge, "Access-Control-Request-Headers is too long.")
        }
        var headers: HTTPHeaders = [
            "access-control-allow-origin": origin,
            "access-control-allow-methods": "GET, POST",
            "access-control-max-age": CORSPolicy.preflightMaxAge,
            "vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        ]
        if !requested.isEmpty { headers.add(name: "access-control-allow-headers", value: requested) }
        return HTTPAnswer(status: .noContent, headers: headers, body: ByteBuffer())
    }

    /// `answer` with the CORS headers of an allowed origin.
    func cors(_ answer: HTTPAnswer) -> HTTPAnswer {
        var answer = answer
        addCORS(to: &answer.headers)
        return answer
    }

    /// Adds the CORS headers of an allowed origin to a response's headers, exposing all of them.
    func addCORS(to headers: inout HTTPHeaders) {
        Self.addCORS(origin: allowedOrigin, to: &headers)
    }

    static func addCORS(origin: String?, to headers: inout HTTPHeaders) {
        guard let origin else { return }
        var exposed = CORSPolicy.exposedHeaders
        for (name, _) in headers where !exposed.contains(name.lowercased()) { exposed.append(name.lowercased()) }
        headers.replaceOrAdd(name: "access-control-allow-origin", value: origin)
        headers.add(name: "vary", value: "Origin")
        headers.replaceOrAdd(name: "access-control-expose-headers", value: exposed.joined(separator: ", "))
    }
}

extension HTTPAnswer {
    fileprivate var withoutBody: HTTPAnswer {
        var answer = self
        answer.body.clear()
        answer.headers.remove(name: "content-type")
        return answer
    }
}

extension ConnectWire {
    /// The end-of-stream message of a Connect stream: flag 0x02 and its JSON.
    static func endOfStreamEnvelope(_ status: StatusCode, message: String, metadata: Metadata) -> ByteBuffer {
        let json = endOfStreamJSON(status, message: message, metadata: metadata)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(5 + json.utf8.count)
        buffer.writeInteger(UInt8(0x02))
        buffer.writeInteger(UInt32(json.utf8.count))
        buffer.writeString(json)
        return buffer
    }
}
