import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import SkiffCore
import Testing

@testable import SkiffHTTPClient

/// The client's wire rules without I/O: request headers, envelopes, statuses, trailers and
/// Connect's JSON.
@Suite("HTTP client wire rules")
struct WireTests {
    private static let method = MethodDescriptor(
        service: "skiff.testing.v1.TestService",
        method: "UnaryCall",
        kind: .unary
    )

    private static func headers(
        _ callProtocol: HTTPClientProtocol,
        kind: RPCKind = .unary,
        options: CallOptions
    )
        throws -> [String: String]
    {
        let headers = try HTTPClientRequest.headers(
            protocol: callProtocol,
            path: method.path,
            authority: "127.0.0.1:1",
            kind: kind,
            options: options
        )
        return Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    @Test("request headers of each protocol, with timeout and metadata (-bin in base64)")
    func requestHeaders() throws {
        var metadata = Metadata()
        metadata.add("x-a", "b")
        metadata.add("x-c-bin", binary: [0, 1, 2, 255])
        let options = CallOptions(metadata: metadata, timeout: .milliseconds(1500))

        let grpc = try Self.headers(.grpc, options: options)
        #expect(grpc[":method"] == "POST" && grpc[":path"] == "/skiff.testing.v1.TestService/UnaryCall")
        #expect(grpc["content-type"] == "application/grpc" && grpc["te"] == "trailers")
        #expect(grpc["grpc-timeout"] == "1500000u" || grpc["grpc-timeout"] == GRPCTimeout.format(.milliseconds(1500)))
        #expect(grpc["x-a"] == "b" && grpc["x-c-bin"] == "AAEC/w==")

        let web = try Self.headers(.grpcWeb, options: options)
        #expect(web["content-type"] == "application/grpc-web+proto" && web["x-grpc-web"] == "1")
        #expect(web["grpc-timeout"] != nil && web["te"] == nil)

        let unary = try Self.headers(.connect, options: options)
        #expect(unary["content-type"] == "application/proto" && unary["connect-protocol-version"] == "1")
        #expect(unary["connect-timeout-ms"] == "1500" && unary["grpc-timeout"] == nil)
        let stream = try Self.headers(.connect, kind: .bidirectionalStreaming, options: CallOptions())
        #expect(stream["content-type"] == "application/connect+proto" && stream["connect-timeout-ms"] == nil)

        // Pseudo-headers come first.
        let ordered = try HTTPClientRequest.headers(
            protocol: .grpc,
            path: "/a/b",
            authority: "h:1",
            kind: .unary,
            options: options
        )
        #expect(ordered.prefix(4).allSatisfy { $0.name.hasPrefix(":") })
    }

    @Test("metadata that cannot travel is refused before the call")
    func badMetadata() {
        #expect(throws: RPCError.self) { try Self.headers(.grpc, options: CallOptions(metadata: ["Upper": "x"])) }
        #expect(throws: RPCError.self) { try Self.headers(.grpc, options: CallOptions(metadata: ["x": "é"])) }
        #expect(throws: RPCError.self) { try Self.headers(.grpc, options: CallOptions(metadata: ["te": "x"])) }
    }

    @Test("connect-timeout-ms rounds up and saturates at 10 digits")
    func connectTimeout() {
        #expect(HTTPClientRequest.connectTimeout(.milliseconds(250)) == "250")
        #expect(HTTPClientRequest.connectTimeout(.microseconds(1)) == "1")
        #expect(HTTPClientRequest.connectTimeout(.microseconds(2001)) == "3")
        #expect(HTTPClientRequest.connectTimeout(.zero) == "0")
        #expect(HTTPClientRequest.connectTimeout(.seconds(-1)) == "0")
        #expect(HTTPClientRequest.connectTimeout(.seconds(100_000_000_000)) == "9999999999")
    }

    @Test("envelopes are read in any chunking, and oversize ones are refused by their prefix")
    func envelopes() {
        var stream = ByteBuffer()
        stream.writeImmutableBuffer(HTTPClientRequest.envelope(ByteBuffer(string: "hello")))
        stream.writeImmutableBuffer(HTTPClientRequest.envelope(ByteBuffer()))
        stream.writeImmutableBuffer(HTTPClientRequest.envelope(ByteBuffer(string: "xy"), flags: 0x80))
        for chunk in [1, 2, 3, 7, 100] {
            var reader = EnvelopeReader(maxMessageSize: 100)
            var out: [EnvelopeReader.Next] = []
            var rest = stream
            while rest.readableBytes > 0 {
                reader.append(rest.readSlice(length: min(chunk, rest.readableBytes))!)
                while case let next = reader.next(), next != .needMoreData { out.append(next) }
            }
            #expect(
                out == [
                    .message(flags: 0, ByteBuffer(string: "hello")), .message(flags: 0, ByteBuffer()),
                    .message(flags: 0x80, ByteBuffer(string: "xy")),
                ]
            )
            #expect(!reader.isMidMessage)
        }
        var reader = EnvelopeReader(maxMessageSize: 4)
        reader.append(ByteBuffer(bytes: [0, 0, 0, 0, 5]))
        #expect(reader.next() == .tooLarge(length: 5))
    }

    @Test("gRPC statuses: trailers, percent-decoded messages, HTTP statuses, resets")
    func grpcStatuses() {
        let trailers: HPACKHeaders = [
            "grpc-status": "5", "grpc-message": "caf%C3%A9 %25 100%", "x-t-bin": "AAE", "x-u": "v",
        ]
        let status = HTTPClientResponse.grpcStatus(trailers)
        #expect(status.code == .notFound && status.message == "café % 100%")
        #expect(status.metadata == ["x-t-bin": .binary([0, 1]), "x-u": "v"])
        #expect(HTTPClientResponse.grpcStatus(["x": "y"]).code == .unknown)
        #expect(HTTPClientResponse.grpcStatus(["grpc-status": "zz"]).code == .unknown)
        #expect(HTTPClientResponse.code(httpStatus: 404) == .unimplemented)
        #expect(HTTPClientResponse.code(httpStatus: 503) == .unavailable)
        #expect(HTTPClientResponse.code(httpStatus: 401) == .unauthenticated)
        #expect(HTTPClientResponse.code(httpStatus: 400) == .internal)
        #expect(HTTPClientResponse.code(httpStatus: 500) == .unknown)
        #expect(HTTPClientResponse.status(reset: .cancel).code == .cancelled)
        #expect(HTTPClientResponse.status(reset: .refusedStream).code == .unavailable)
        #expect(HTTPClientResponse.status(reset: .protocolError).code == .internal)
    }

    @Test("gRPC-Web trailers frames")
    func grpcWebTrailers() {
        let block = ByteBuffer(string: "grpc-status:3\r\ngrpc-message:bad%20arg\r\nX-Meta: v\r\nx-b-bin:AAE=\r\n")
        let status = HTTPClientResponse.grpcWebTrailers(block)
        #expect(status.code == .invalidArgument && status.message == "bad arg")
        #expect(status.metadata == ["x-meta": "v", "x-b-bin": .binary([0, 1])])
    }

    @Test("Connect errors: JSON code names, HTTP fallback, end-of-stream messages")
    func connectErrors() {
        for code in (1...16).map({ StatusCode(rawValue: UInt32($0)) }) {
            let name = connectName(code)
            #expect(HTTPClientResponse.connectCode(name) == code, "\(name)")
        }
        let error = HTTPClientResponse.connectUnaryError(
            httpStatus: 404,
            body: ByteBuffer(string: #"{"code":"not_found","message":"no \u00e9 here"}"#),
            metadata: ["x": "y"]
        )
        #expect(error == CallStatus(.notFound, "no é here", metadata: ["x": "y"]))
        #expect(error.metadata == ["x": "y"])
        #expect(
            HTTPClientResponse.connectUnaryError(httpStatus: 503, body: ByteBuffer(string: "<html>"), metadata: [:])
                .code == .unavailable
        )
        #expect(
            HTTPClientResponse.connectUnaryError(
                httpStatus: 400,
                body: ByteBuffer(string: #"{"code":"nope"}"#),
                metadata: [:]
            ).code == .unknown
        )

        let ok = HTTPClientResponse.connectEndOfStream(
            ByteBuffer(string: #"{"metadata":{"x-a":["1","2"],"x-b-bin":["AAE"]}}"#)
        )
        #expect(ok.code == .ok && ok.metadata == ["x-a": "1", "x-a": "2", "x-b-bin": .binary([0, 1])])
        #expect(HTTPClientResponse.connectEndOfStream(ByteBuffer(string: "{}")).code == .ok)
        let failed = HTTPClientResponse.connectEndOfStream(
            ByteBuffer(string: #"{"error":{"code":"resource_exhausted","message":"m"}}"#)
        )
        #expect(failed.code == .resourceExhausted && failed.message == "m")
        #expect(HTTPClientResponse.connectEndOfStream(ByteBuffer(string: "[1]")).code == .internal)
    }

    private func connectName(_ code: StatusCode) -> String {
        code == .cancelled ? "canceled" : code.name.lowercased()
    }

    // MARK: The decoder

    private static func events(_ decoder: inout HTTPResponseDecoder) -> [HTTPResponseDecoder.Event] {
        var out: [HTTPResponseDecoder.Event] = []
        while let event = decoder.next() { out.append(event) }
        return out
    }

    private static func headersFrame(_ headers: HPACKHeaders, endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(HTTP2Frame.FramePayload.Headers(headers: headers, endStream: endStream))
    }

    private static func dataFrame(_ bytes: ByteBuffer, endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .data(HTTP2Frame.FramePayload.Data(data: .byteBuffer(bytes), endStream: endStream))
    }

    @Test("decoder: gRPC response, trailers-only response, HTTP error")
    func decodeGRPC() {
        var decoder = HTTPResponseDecoder(protocol: .grpc, kind: .serverStreaming, maxMessageSize: 100)
        decoder.receive(Self.headersFrame([":status": "200", "content-type": "application/grpc", "x-i": "1"]))
        var body = HTTPClientRequest.envelope(ByteBuffer(string: "a"))
        body.writeImmutableBuffer(HTTPClientRequest.envelope(ByteBuffer(string: "b")))
        decoder.receive(Self.dataFrame(body))
        decoder.receive(Self.headersFrame(["grpc-status": "0", "x-t": "2"], endStream: true))
        #expect(
            Self.events(&decoder) == [
                .metadata(["x-i": "1"]), .message(ByteBuffer(string: "a")), .message(ByteBuffer(string: "b")),
                .end(CallStatus(.ok, metadata: ["x-t": "2"])),
            ]
        )

        var only = HTTPResponseDecoder(protocol: .grpc, kind: .unary, maxMessageSize: 100)
        only.receive(
            Self.headersFrame(
                [":status": "200", "content-type": "application/grpc", "grpc-status": "12", "grpc-message": "no"],
                endStream: true
            )
        )
        #expect(Self.events(&only) == [.end(CallStatus(.unimplemented, "no"))])

        var http = HTTPResponseDecoder(protocol: .grpc, kind: .unary, maxMessageSize: 100)
        http.receive(Self.headersFrame([":status": "503"], endStream: true))
        #expect(Self.events(&http).map(\.code) == [.unavailable])

        var truncated = HTTPResponseDecoder(protocol: .grpc, kind: .unary, maxMessageSize: 100)
        truncated.receive(Self.headersFrame([":status": "200", "content-type": "application/grpc"]))
        truncated.streamClosed()
        #expect(Self.events(&truncated).map(\.code) == [nil, .internal])
    }

    @Test("decoder: gRPC-Web trailers frame, Connect unary and streaming")
    func decodeWebAndConnect() {
        var web = HTTPResponseDecoder(protocol: .grpcWeb, kind: .unary, maxMessageSize: 100)
        web.receive(Self.headersFrame([":status": "200", "content-type": "application/grpc-web+proto"]))
        var body = HTTPClientRequest.envelope(ByteBuffer(string: "m"))
        body.writeImmutableBuffer(HTTPClientRequest.envelope(ByteBuffer(string: "grpc-status:0\r\n"), flags: 0x80))
        web.receive(Self.dataFrame(body, endStream: true))
        #expect(Self.events(&web) == [.metadata([:]), .message(ByteBuffer(string: "m")), .end(CallStatus(.ok))])

        var unary = HTTPResponseDecoder(protocol: .connect, kind: .unary, maxMessageSize: 100)
        unary.receive(
            Self.headersFrame([":status": "200", "content-type": "application/proto", "x-i": "1", "trailer-x-t": "2"])
        )
        unary.receive(Self.dataFrame(ByteBuffer(string: "pa")))
        unary.receive(Self.dataFrame(ByteBuffer(string: "rt"), endStream: true))
        #expect(
            Self.events(&unary) == [
                .metadata(["x-i": "1"]), .message(ByteBuffer(string: "part")),
                .end(CallStatus(.ok, metadata: ["x-t": "2"])),
            ]
        )

        var failed = HTTPResponseDecoder(protocol: .connect, kind: .unary, maxMessageSize: 100)
        failed.receive(Self.headersFrame([":status": "404", "content-type": "application/json", "trailer-x-t": "2"]))
        failed.receive(Self.dataFrame(ByteBuffer(string: #"{"code":"not_found","message":"gone"}"#), endStream: true))
        #expect(Self.events(&failed) == [.end(CallStatus(.notFound, "gone", metadata: ["x-t": "2"]))])

        var stream = HTTPResponseDecoder(protocol: .connect, kind: .serverStreaming, maxMessageSize: 100)
        stream.receive(Self.headersFrame([":status": "200", "content-type": "application/connect+proto"]))
        var frames = HTTPClientRequest.envelope(ByteBuffer(string: "m"))
        frames.writeImmutableBuffer(
            HTTPClientRequest.envelope(ByteBuffer(string: #"{"error":{"code":"aborted","message":"x"}}"#), flags: 0x02)
        )
        stream.receive(Self.dataFrame(frames, endStream: true))
        #expect(
            Self.events(&stream) == [
                .metadata([:]), .message(ByteBuffer(string: "m")), .end(CallStatus(.aborted, "x")),
            ]
        )

        var oversize = HTTPResponseDecoder(protocol: .connect, kind: .unary, maxMessageSize: 3)
        oversize.receive(Self.headersFrame([":status": "200", "content-type": "application/proto"]))
        oversize.receive(Self.dataFrame(ByteBuffer(string: "four"), endStream: true))
        #expect(Self.events(&oversize).map(\.code) == [nil, .resourceExhausted])
    }
}

extension HTTPResponseDecoder.Event {
    /// The status code of an end; `nil` for any other event.
    var code: StatusCode? {
        if case .end(let status) = self { return status.code }
        return nil
    }
}
