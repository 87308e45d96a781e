import Foundation
import NIOCore
import NIOPosix
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Testing

/// A raw HTTP/1.1 client on a real socket: what is sent is exactly the test's bytes.
struct RawHTTP {
    let port: Int

    /// What came back: the bytes, and whether the server closed the connection.
    struct Reply {
        var bytes: [UInt8]
        var closed: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status codes of the responses, in order.
        var statuses: [Int] {
            text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        }
        /// The body of the last response (after its blank line).
        var lastBody: String { text.components(separatedBy: "\r\n\r\n").last ?? "" }
    }

    /// Sends `requests` (one write each) and reads until `done` holds, the server closes, or 5 s pass.
    func exchange(_ requests: [[UInt8]], until done: @escaping @Sendable (Reply) -> Bool) async throws -> Reply {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await withTimeout(.seconds(5)) {
            try await channel.executeThenClose { inbound, outbound in
                var reply = Reply(bytes: [], closed: false)
                do {
                    for request in requests { try await outbound.write(ByteBuffer(bytes: request)) }
                    var iterator = inbound.makeAsyncIterator()
                    while !done(reply) {
                        guard let chunk = try await iterator.next() else {
                            reply.closed = true
                            break
                        }
                        reply.bytes += Array(chunk.readableBytesView)
                    }
                } catch let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode) {
                    reply.closed = true  // the server closed while the client was still sending
                }
                return reply
            }
        }
    }

    /// One request's bytes.
    static func request(
        _ path: String,
        method: String = "POST",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" || !body.isEmpty { head += "content-length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    static func json(_ path: String, _ body: String, headers: [(String, String)] = []) -> [UInt8] {
        request(path, headers: [("content-type", "application/json")] + headers, body: Array(body.utf8))
    }

    /// A 5-byte-prefixed envelope (gRPC-Web, Connect streaming).
    static func envelope(_ message: [UInt8], flag: UInt8 = 0) -> [UInt8] {
        [flag] + withUnsafeBytes(of: UInt32(message.count).bigEndian, Array.init) + message
    }
}

/// Counts of complete responses in a reply (each ends its body by content length or a last chunk).
private func responses(_ reply: RawHTTP.Reply) -> Int { reply.statuses.count }

private let unary = "/skiff.testing.v1.TestService/UnaryCall"
private let http = [SkiffWireProtocol(), HTTP2Protocol(), HTTP1Protocol()] as [any ConnectionProtocol]

/// gRPC-Web and Connect over HTTP/1.1 on a real socket, and what an attacker's HTTP/1.1 costs:
/// only its own connection.
@Suite("HTTP/1.1: Connect and gRPC-Web on a real socket")
struct HTTPSocketTests {
    @Test("keep-alive: calls, a refused call with a body, and a plain refusal share one connection")
    func keepAlive() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let reply = try await RawHTTP(port: port).exchange(
                [
                    RawHTTP.json(unary, #"{"responseSize":2}"#),
                    RawHTTP.json("/no.Such/Method", #"{"a":1}"#),
                    RawHTTP.request(unary, headers: [("content-type", "text/plain")], body: [1, 2, 3]),
                    RawHTTP.json(unary, #"{"responseSize":1}"#),
                ].map { $0 }
            ) { responses($0) == 4 && $0.text.hasSuffix("}") }
            #expect(reply.statuses == [200, 501, 415, 200], "\(reply.text)")
            #expect(!reply.closed)
            #expect(reply.text.contains(#""code":"unimplemented""#))
        }
    }

    @Test("Expect: 100-continue gets its interim answer; a body over the message limit is refused from its length")
    func expectContinue() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: http,
            configure: { $0.settings.maxMessageSize = 1024 }
        ) { _, port in
            let raw = RawHTTP(port: port)
            // The head alone: the body follows only after "100 Continue".
            let head = Array(
                "POST \(unary) HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n"
                    .utf8
            )
            let interim = try await raw.exchange([head]) { $0.text.contains("100 Continue\r\n\r\n") }
            #expect(interim.text.hasPrefix("HTTP/1.1 100 Continue"))
            let whole = try await raw.exchange([head, Array("{}".utf8)]) {
                responses($0) == 2 && $0.text.hasSuffix("}")
            }
            #expect(whole.statuses == [100, 200])

            // 10 MB announced: answered at once (429) and closed, without reading the body.
            let big = Array(
                "POST \(unary) HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 10000000\r\n\r\n"
                    .utf8
            )
            let refused = try await raw.exchange([big]) { _ in false }
            #expect(refused.statuses == [429])
            #expect(refused.closed)
            #expect(refused.text.contains("10000000 bytes exceeds the limit of 1024"))
        }
    }

    @Test("a compression the server cannot read is refused, naming the one it reads")
    func compression() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let reply = try await RawHTTP(port: port).exchange([
                RawHTTP.json(unary, "{}", headers: [("content-encoding", "gzip")])
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(reply.statuses == [501])
            #expect(reply.text.contains("accept-encoding: identity"))
        }
    }

    @Test("pipelined requests are answered in order, one at a time")
    func pipelining() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let requests = (1...3).map { RawHTTP.json(unary, "{\"responseSize\":\($0)}") }
            let reply = try await RawHTTP(port: port).exchange([requests.flatMap { $0 }]) { responses($0) == 3 }
            #expect(reply.statuses == [200, 200, 200])
            let bodies = reply.text.components(separatedBy: "\r\n\r\n").filter { $0.hasPrefix("{") }
            #expect(
                bodies.map { $0.prefix(26) } == [
                    #"{"payload":{"body":"AA=="}"#, #"{"payload":{"body":"AAA="}"#, #"{"payload":{"body":"AAAA"}"#,
                ]
            )
        }
    }

    @Test(
        "request smuggling and malformed HTTP get 400 and a close; the next connection is served",
        arguments: [
            (
                "Content-Length and Transfer-Encoding together",
                "POST \(unary) HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 4\r\n"
                    + "transfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\n\r\n"
            ),
            (
                "two different Content-Lengths",
                "POST \(unary) HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
                    + "content-length: 40\r\n\r\n{}"
            ),
            ("a broken chunk size", "POST \(unary) HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nZZ\r\n"),
            ("a header line without a colon", "POST \(unary) HTTP/1.1\r\nhost x\r\n\r\n"),
            ("a bare LF request line", "GET /\nhost: x\n\n\u{0}\u{1}"),
            // The 200 KiB value is made in the test, so that the test log does not print it.
            ("a header block of 200 KiB", "POST \(unary) HTTP/1.1\r\nhost: x\r\nx-big: <200 KiB>\r\n\r\n"),
        ]
    )
    func smuggling(name: String, bytes: String) async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let request = bytes.replacingOccurrences(of: "<200 KiB>", with: String(repeating: "a", count: 200 * 1024))
            let reply = try await RawHTTP(port: port).exchange([Array(request.utf8)]) { _ in false }
            #expect(reply.closed, "\(name)")
            #expect(reply.statuses.allSatisfy { $0 == 400 }, "\(name): \(reply.text)")
            #expect(!reply.text.contains("200 OK"), "\(name): \(reply.text)")
            let next = try await RawHTTP(port: port).exchange([RawHTTP.json(unary, "{}")]) { responses($0) == 1 }
            #expect(next.statuses == [200], "\(name)")
        }
    }

    @Test("Connect errors: invalid JSON 400, a wrong content type 415, an oversize body 429, gRPC needs HTTP/2")
    func connectErrors() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: http,
            configure: { $0.settings.maxMessageSize = 1024 }
        ) { _, port in
            let raw = RawHTTP(port: port)
            let bad = try await raw.exchange([RawHTTP.json(unary, "{\"responseSize\":")]) { responses($0) == 1 }
            #expect(bad.statuses == [400])
            #expect(bad.text.contains(#""code":"invalid_argument""#) && bad.text.contains("SimpleRequest"))

            let wrongType = try await raw.exchange([
                RawHTTP.request(unary, headers: [("content-type", "application/xml")], body: Array("<a/>".utf8))
            ]) { responses($0) == 1 }
            #expect(wrongType.statuses == [415])
            #expect(wrongType.text.contains("application/json"))

            let big = "{\"payload\":{\"body\":\"" + String(repeating: "A", count: 4000) + "\"}}"
            let oversize = try await raw.exchange([RawHTTP.json(unary, big)]) { responses($0) == 1 }
            #expect(oversize.statuses == [429], "\(oversize.text)")
            #expect(oversize.text.contains(#""code":"resource_exhausted""#))

            let grpc = try await raw.exchange([
                RawHTTP.request(unary, headers: [("content-type", "application/grpc")], body: RawHTTP.envelope([]))
            ]) { responses($0) == 1 }
            #expect(grpc.statuses == [505])
        }
    }

    @Test("a forced status: Connect maps it to its HTTP status with the message; trailing metadata as trailer- headers")
    func connectStatus() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let body = #"{"responseStatus":{"code":5,"message":"no such bike: café"}}"#
            let reply = try await RawHTTP(port: port).exchange([
                RawHTTP.json(
                    unary,
                    body,
                    headers: [("x-skiff-echo-initial", "hello"), ("x-skiff-echo-trailing-bin", "AAE")]
                )
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(reply.statuses == [404])
            #expect(reply.text.contains(#"{"code":"not_found","message":"no such bike: café"}"#), "\(reply.text)")
            #expect(reply.text.contains("x-skiff-echo-initial: hello"))
            #expect(reply.text.contains("trailer-x-skiff-echo-trailing-bin: AAE="), "\(reply.text)")
        }
    }

    @Test("Connect GET: a read-only method answers; one with side effects is refused")
    func connectGet() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let raw = RawHTTP(port: port)
            let query =
                "encoding=json&message=" + "{\"responseSize\":3}".addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics
                )!
            let reply = try await raw.exchange([RawHTTP.request(unary + "?" + query, method: "GET")]) {
                responses($0) == 1 && $0.text.hasSuffix("}")
            }
            #expect(reply.statuses == [200])
            #expect(reply.text.contains(#"{"payload":{"body":"AAAA"}"#))
            let write = try await raw.exchange([
                RawHTTP.request(
                    "/skiff.testing.v1.TestService/StreamingInputCall?encoding=json&message=%7B%7D",
                    method: "GET"
                )
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(write.statuses == [501], "\(write.text)")
        }
    }

    @Test("connect-timeout-ms: a call past it ends deadline_exceeded (504); a malformed one is refused")
    func connectTimeout() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let raw = RawHTTP(port: port)
            let slow = try await raw.exchange([
                RawHTTP.json(unary, #"{"sleepMs":2000}"#, headers: [("connect-timeout-ms", "100")])
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(slow.statuses == [504])
            #expect(slow.text.contains("deadline_exceeded"))
            let malformed = try await raw.exchange([
                RawHTTP.json(unary, "{}", headers: [("connect-timeout-ms", "12345678901")])
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(malformed.statuses == [400])
        }
    }

    @Test("Connect streaming and gRPC-Web over HTTP/1.1: envelopes, then the end of stream or trailers")
    func streaming() async throws {
        try await withTestServer(services: [TestService()], protocols: http) { _, port in
            let raw = RawHTTP(port: port)
            let request = Skiff_Testing_V1_StreamingOutputCallRequest.with {
                $0.responseParameters = [.with { $0.size = 1 }, .with { $0.size = 2 }]
            }
            let connect = try await raw.exchange([
                RawHTTP.request(
                    "/skiff.testing.v1.TestService/StreamingOutputCall",
                    headers: [("content-type", "application/connect+proto")],
                    body: RawHTTP.envelope(try request.serializedBytes())
                )
            ]) { $0.text.contains("\r\n0\r\n\r\n") }
            #expect(connect.statuses == [200])
            #expect(connect.text.contains("application/connect+proto"))
            #expect(connect.text.contains("\u{2}\u{0}\u{0}\u{0}\u{2}{}"), "end of stream: \(connect.text)")

            let web = try await raw.exchange([
                RawHTTP.request(
                    "/skiff.testing.v1.TestService/StreamingOutputCall",
                    headers: [("content-type", "application/grpc-web-text")],
                    body: Array(Data(RawHTTP.envelope(try request.serializedBytes())).base64EncodedString().utf8)
                )
            ]) { $0.text.contains("\r\n0\r\n\r\n") }
            #expect(web.statuses == [200])
            #expect(web.text.contains("application/grpc-web-text+proto"))
            // The trailers frame, base64: 0x80, length 15, "grpc-status:0\r\n".
            #expect(
                web.text.contains(Data([0x80, 0, 0, 0, 15] + Array("grpc-status:0\r\n".utf8)).base64EncodedString())
            )
        }
    }

    @Test("bad envelopes: an oversize length prefix, a compressed flag, a truncated message, junk base64")
    func badEnvelopes() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: http,
            configure: { $0.settings.maxMessageSize = 1024 }
        ) { _, port in
            let raw = RawHTTP(port: port)
            let path = "/skiff.testing.v1.TestService/StreamingInputCall"
            let cases: [(String, [UInt8], String)] = [
                ("application/connect+proto", [0, 0x7F, 0xFF, 0xFF, 0xFF], "resource_exhausted"),
                ("application/connect+proto", RawHTTP.envelope([1, 2], flag: 1), "internal"),
                ("application/connect+proto", [0, 0, 0, 0, 9, 1], "invalid_argument"),
                ("application/grpc-web", [0, 0x7F, 0xFF, 0xFF, 0xFF], "grpc-status:8"),
                ("application/grpc-web-text", Array("AA*=".utf8), "grpc-status:3"),
            ]
            for (type, body, expected) in cases {
                let reply = try await raw.exchange([
                    RawHTTP.request(path, headers: [("content-type", type)], body: body)
                ]) {
                    $0.text.contains(expected) || $0.text.contains(Data(expected.utf8).base64EncodedString().prefix(12))
                }
                let decoded = type.hasSuffix("-text") ? Self.decodeTextBody(reply.text) : reply.text
                #expect(decoded.contains(expected), "\(type) \(body.prefix(8)): \(reply.text)")
            }
        }
    }

    /// The decoded body of a grpc-web-text response (chunked: each chunk's base64 on its own).
    static func decodeTextBody(_ text: String) -> String {
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        var decoder = Base64TextDecoder()
        var out = ""
        for line in body.components(separatedBy: "\r\n") where !line.isEmpty && Int(line, radix: 16) == nil {
            if let bytes = decoder.decode(ByteBuffer(string: line).readableBytesView) { out += String(buffer: bytes) }
        }
        return out
    }

    @Test("a request body that never ends is cut at the request timeout; an idle connection is closed")
    func slowAndIdle() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: http,
            configure: {
                $0.requestTimeout = .milliseconds(200)
                $0.idleTimeout = .milliseconds(300)
            }
        ) { _, port in
            let raw = RawHTTP(port: port)
            let partial = RawHTTP.request(
                unary,
                headers: [("content-type", "application/json")],
                body: Array("{\"resp".utf8)
            ).map { $0 }
            // Claims 40 bytes more than it sends.
            let head = String(decoding: partial, as: UTF8.self).replacingOccurrences(
                of: "content-length: 6",
                with: "content-length: 46"
            )
            let slow = try await raw.exchange([Array(head.utf8)]) { _ in false }
            #expect(slow.statuses == [504], "\(slow.text)")
            #expect(slow.closed)

            let start = ContinuousClock.now
            let idle = try await raw.exchange([RawHTTP.json(unary, "{}")]) { _ in false }
            #expect(idle.statuses == [200])
            #expect(idle.closed)
            #expect(ContinuousClock.now - start >= .milliseconds(250))
        }
    }

    @Test("CORS: an allowed origin's preflight and answers carry the headers; another origin's do not")
    func cors() async throws {
        let cors = CORSPolicy(allowedOrigins: ["http://app.test"])
        try await withTestServer(
            services: [TestService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol(cors: cors), HTTP1Protocol(cors: cors)]
        ) { _, port in
            let raw = RawHTTP(port: port)
            let preflight = { (origin: String) in
                RawHTTP.request(
                    unary,
                    method: "OPTIONS",
                    headers: [
                        ("origin", origin), ("access-control-request-method", "POST"),
                        ("access-control-request-headers", "content-type, x-skiff-echo-initial"),
                    ]
                )
            }
            let allowed = try await raw.exchange([preflight("http://app.test")]) { responses($0) == 1 }
            #expect(allowed.statuses == [204])
            #expect(allowed.text.contains("access-control-allow-origin: http://app.test"))
            #expect(allowed.text.contains("access-control-allow-headers: content-type, x-skiff-echo-initial"))
            #expect(allowed.text.contains("access-control-allow-methods: GET, POST"))
            let refused = try await raw.exchange([preflight("http://evil.test")]) { responses($0) == 1 }
            #expect(refused.statuses == [403])
            #expect(!refused.text.lowercased().contains("access-control-allow-origin"))

            let call = try await raw.exchange([
                RawHTTP.json(unary, "{}", headers: [("origin", "http://app.test"), ("x-skiff-echo-initial", "v")])
            ]) { responses($0) == 1 && $0.text.hasSuffix("}") }
            #expect(call.text.contains("access-control-allow-origin: http://app.test"))
            #expect(call.text.contains("access-control-expose-headers: grpc-status, grpc-message"))
            #expect(call.text.contains("x-skiff-echo-initial"))
            let other = try await raw.exchange([RawHTTP.json(unary, "{}", headers: [("origin", "http://evil.test")])]) {
                responses($0) == 1 && $0.text.hasSuffix("}")
            }
            #expect(other.statuses == [200])
            #expect(!other.text.contains("access-control-allow-origin"))
        }
    }

    @Test("drain: a Connect watch over HTTP/1.1 ends with its end-of-stream message, idle connections close")
    func drain() async throws {
        try await withTestServer(services: [TestService(), HealthService()], protocols: http) { server, port in
            let raw = RawHTTP(port: port)
            let watch = Task {
                try await raw.exchange([
                    RawHTTP.request(
                        "/skiff.health.v1.Health/Watch",
                        headers: [("content-type", "application/connect+json")],
                        body: RawHTTP.envelope(Array(#"{"service":""}"#.utf8))
                    )
                ]) { _ in false }
            }
            let idle = Task { try await raw.exchange([RawHTTP.json(unary, "{}")]) { _ in false } }
            try await Task.sleep(for: .milliseconds(300))
            let start = ContinuousClock.now
            server.beginGracefulShutdown()
            let watched = try await watch.value
            let idled = try await idle.value
            #expect(ContinuousClock.now - start < .seconds(3))
            #expect(watched.text.contains(#"{"status":"SERVING"}"#), "\(watched.text)")
            // The end-of-stream message (flag 2) ends the response before the close.
            #expect(watched.text.contains("\u{2}\u{0}\u{0}\u{0}"), "\(watched.text)")
            #expect(watched.closed && watched.text.hasSuffix("\r\n0\r\n\r\n"))
            #expect(idled.statuses == [200] && idled.closed)
        }
    }

    @Test("a client that stops reading a stream holds at most the connection's budget, then is cut off")
    func slowReader() async throws {
        let observer = ServerObserver()
        let budget = 256 * 1024
        try await withTestServer(
            services: [TestService()],
            observer: observer,
            protocols: http,
            configure: {
                $0.maxBufferedResponseBytes = budget
                $0.socketWriteBufferHighWater = 64 * 1024  // the socket counts as full below the budget
                $0.sendStallTimeout = .milliseconds(800)
            }
        ) { _, port in
            // 2,000 responses of 64 KiB (125 MiB), over Connect streaming; the client never reads.
            let request = Skiff_Testing_V1_StreamingOutputCallRequest.with {
                $0.responseParameters = Array(repeating: .with { $0.size = 64 * 1024 }, count: 2_000)
            }
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.autoRead, value: false)
                .connect(host: "127.0.0.1", port: port).get()
            let bytes = RawHTTP.request(
                "/skiff.testing.v1.TestService/StreamingOutputCall",
                headers: [("content-type", "application/connect+proto")],
                body: RawHTTP.envelope(try request.serializedBytes())
            )
            try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
            // The server fills the socket, then holds at most its budget (plus one message) for it.
            var peak = 0
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(2) {
                peak = max(peak, observer.bufferedResponseBytes)
                // Meanwhile another client is served.
                let other = try await RawHTTP(port: port).exchange([RawHTTP.json(unary, "{}")]) { responses($0) == 1 }
                #expect(other.statuses == [200])
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(peak > 0)
            #expect(peak <= budget + 64 * 1024 + 16, "held \(peak) bytes")
            // Cut off after the stall timeout (the server closed it), and everything it held freed.
            try await waitUntil { observer.streams == 0 && observer.bufferedResponseBytes == 0 }
            try? await channel.close().get()
        }
    }

    @Test("garbage and random bytes on the port close only their own connections")
    func randomBytes() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: http,
            configure: { $0.idleTimeout = .milliseconds(300) }  // a head that never ends waits no longer
        ) { _, port in
            var generator = SeededGenerator(seed: 0x5EED)
            for round in 0..<40 {
                var bytes = (0..<Int.random(in: 1...300, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                // Half the rounds start like HTTP/1.1 and go wrong later.
                if round % 2 == 0 { bytes = Array("POST / HTTP/1.1\r\n".utf8) + bytes }
                let reply = try await RawHTTP(port: port).exchange([bytes]) { _ in false }
                #expect(reply.closed)
            }
            let fine = try await RawHTTP(port: port).exchange([RawHTTP.json(unary, "{}")]) { responses($0) == 1 }
            #expect(fine.statuses == [200])
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                _ = try await Skiff_Testing_V1_TestService.Client(transport: connection).emptyCall(.init())
            }
        }
    }
}
