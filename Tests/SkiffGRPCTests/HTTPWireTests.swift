import Foundation
import NIOCore
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Testing

@testable import SkiffGRPC

/// The wire rules of Connect, gRPC-Web and CORS, without I/O.
@Suite("Connect and gRPC-Web wire rules")
struct HTTPWireTests {
    @Test("Connect content types: unary and streaming, proto and JSON, UTF-8 only")
    func connectContentTypes() {
        #expect(ConnectWire.contentType("application/proto") == .unary(json: false))
        #expect(ConnectWire.contentType("application/json") == .unary(json: true))
        #expect(ConnectWire.contentType("Application/JSON; charset=utf-8") == .unary(json: true))
        #expect(ConnectWire.contentType("application/json; charset=latin1") == nil)
        #expect(ConnectWire.contentType("application/connect+proto") == .streaming(json: false))
        #expect(ConnectWire.contentType("application/connect+json") == .streaming(json: true))
        #expect(ConnectWire.contentType("application/grpc") == nil)
        #expect(ConnectWire.contentType("text/plain") == nil)
        #expect(ConnectWire.contentType("") == nil)
    }

    @Test("every status code has the Connect name and HTTP status of the protocol's table")
    func connectCodes() {
        let table: [(StatusCode, String, Int)] = [
            (.cancelled, "canceled", 499), (.unknown, "unknown", 500), (.invalidArgument, "invalid_argument", 400),
            (.deadlineExceeded, "deadline_exceeded", 504), (.notFound, "not_found", 404),
            (.alreadyExists, "already_exists", 409), (.permissionDenied, "permission_denied", 403),
            (.resourceExhausted, "resource_exhausted", 429), (.failedPrecondition, "failed_precondition", 400),
            (.aborted, "aborted", 409), (.outOfRange, "out_of_range", 400), (.unimplemented, "unimplemented", 501),
            (.internal, "internal", 500), (.unavailable, "unavailable", 503), (.dataLoss, "data_loss", 500),
            (.unauthenticated, "unauthenticated", 401),
        ]
        for (status, name, http) in table {
            #expect(ConnectWire.codeName(status) == name)
            #expect(ConnectWire.httpStatus(status) == http, "\(name)")
        }
        #expect(ConnectWire.httpStatus(.ok) == 200)
    }

    @Test("error and end-of-stream JSON: escaped text, metadata as arrays, binary values in base64")
    func connectJSON() throws {
        let error = ConnectWire.errorJSON(.notFound, message: "no \"bike\"\n\u{1}café ∑")
        let decoded = try JSONSerialization.jsonObject(with: Data(error.utf8)) as? [String: String]
        #expect(decoded == ["code": "not_found", "message": "no \"bike\"\n\u{1}café ∑"])
        #expect(ConnectWire.errorJSON(.internal, message: "") == #"{"code":"internal"}"#)

        var metadata = Metadata()
        metadata.add("x-a", "1")
        metadata.add("x-a", "2")
        metadata.add("x-b-bin", binary: [0, 255])
        #expect(ConnectWire.endOfStreamJSON(.ok, message: "", metadata: [:]) == "{}")
        let end = ConnectWire.endOfStreamJSON(.aborted, message: "m", metadata: metadata)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(end.utf8)) as? [String: Any])
        #expect(object["error"] as? [String: String] == ["code": "aborted", "message": "m"])
        #expect(object["metadata"] as? [String: [String]] == ["x-a": ["1", "2"], "x-b-bin": ["AP8="]])
    }

    @Test("connect-timeout-ms: up to 10 digits, becoming a grpc-timeout the runner reads")
    func connectTimeout() {
        #expect(ConnectWire.timeout("250") == .milliseconds(250))
        #expect(ConnectWire.timeout("9999999999") == .milliseconds(9_999_999_999))
        for bad in ["", "-1", "1.5", "12345678901", " 5", "5s"] { #expect(ConnectWire.timeout(bad) == nil, "\(bad)") }
        #expect(ConnectWire.grpcTimeout("250") == "250m")
        #expect(ConnectWire.grpcTimeout("9999999999") == "9999999S")
        #expect(ConnectWire.grpcTimeout("x") == nil)
    }

    @Test("a GET's query: encoding, percent-encoded or base64url message, connect=v1, identity only")
    func connectGet() {
        let json = ConnectWire.getRequest(query: "connect=v1&encoding=json&message=%7B%22a%22%3A+1%7D")
        #expect(json == .success(.init(json: true, message: Array(#"{"a": 1}"#.utf8))))
        // base64url without padding of the bytes 0x08 0x96 0x01 0xFB 0xFF.
        let proto = ConnectWire.getRequest(query: "message=CJYB-_8&base64=1&encoding=proto")
        #expect(proto == .success(.init(json: false, message: [0x08, 0x96, 0x01, 0xFB, 0xFF])))
        let empty = ConnectWire.getRequest(query: "encoding=proto")
        #expect(empty == .success(.init(json: false, message: [])))
        for bad in [
            "message=%7B%7D", "encoding=xml&message=", "encoding=json&connect=v2", "encoding=json&compression=gzip",
            "encoding=json&message=%ZZ", "encoding=proto&base64=1&message=A",
        ] {
            guard case .failure(let refusal) = ConnectWire.getRequest(query: Substring(bad)) else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(!refusal.message.isEmpty)
        }
    }

    @Test("gRPC-Web content types, and the trailers frame that ends a response")
    func grpcWeb() {
        #expect(GRPCWebWire.contentType("application/grpc-web") == .binary)
        #expect(GRPCWebWire.contentType("application/grpc-web+proto") == .binary)
        #expect(GRPCWebWire.contentType("application/grpc-web-text") == .text)
        #expect(GRPCWebWire.contentType("application/grpc-web-text+proto; charset=x") == .text)
        #expect(GRPCWebWire.contentType("application/grpc-web+json") == nil)
        #expect(GRPCWebWire.contentType("application/grpc") == nil)

        var metadata = Metadata()
        metadata.add("X-Trace", "t1")
        metadata.add("x-bin", binary: [1, 2])
        var frame = GRPCWebWire.trailersFrame(status: .notFound, message: "café", metadata: metadata)
        #expect(frame.readInteger(as: UInt8.self) == 0x80)
        let length = frame.readInteger(as: UInt32.self)
        #expect(Int(length ?? 0) == frame.readableBytes)
        #expect(
            frame.readString(length: frame.readableBytes)
                == "grpc-status:5\r\ngrpc-message:caf%C3%A9\r\nx-trace:t1\r\nx-bin:AQI=\r\n"
        )
        #expect(String(buffer: GRPCWebWire.encodeText(ByteBuffer(bytes: [0, 0, 0, 0, 1, 7]))) == "AAAAAAEH")
    }

    @Test("grpc-web-text bodies decode in any chunking, across separately padded groups; junk is refused")
    func base64Text() throws {
        let message: [UInt8] = Array(0..<200).map { UInt8($0) }
        let first = Data(message[0..<101]).base64EncodedString()  // padded
        let second = Data(message[101...]).base64EncodedString()
        let text = Array((first + second).utf8)
        for chunk in [1, 3, 4, 7, 64, text.count] {
            var decoder = Base64TextDecoder()
            var out: [UInt8] = []
            var index = 0
            while index < text.count {
                let end = min(index + chunk, text.count)
                let piece = decoder.decode(ByteBuffer(bytes: text[index..<end]).readableBytesView)
                out += Array(try #require(piece).readableBytesView)
                index = end
            }
            #expect(out == message, "chunks of \(chunk)")
            #expect(!decoder.isMidGroup)
        }
        var decoder = Base64TextDecoder()
        let junk = decoder.decode(ByteBuffer(string: "AA*A").readableBytesView)
        #expect(junk == nil)
        var half = Base64TextDecoder()
        _ = half.decode(ByteBuffer(string: "AAA").readableBytesView)
        #expect(half.isMidGroup)
    }

    @Test("CORS: only listed origins (exact, case-insensitive, trailing slash ignored), or every one with *")
    func cors() {
        let policy = CORSPolicy(allowedOrigins: ["https://Market.example.edu/", "http://127.0.0.1:8080"])
        #expect(policy.allows("https://market.example.edu"))
        #expect(policy.allows("http://127.0.0.1:8080"))
        #expect(!policy.allows("http://127.0.0.1:8081"))
        #expect(!policy.allows("https://market.example.edu.evil.test"))
        #expect(!policy.allows("null"))
        #expect(!CORSPolicy.none.allows("https://market.example.edu"))
        #expect(CORSPolicy(allowedOrigins: ["*"]).allows("https://anything.test"))
    }

    @Test("HTTP/1.1 is recognized by its request line, never the HTTP/2 preface, skiff/1 or TLS")
    func recognizeHTTP1() {
        let http1 = HTTP1Protocol()
        func recognize(_ text: [UInt8]) -> ProtocolRecognition {
            http1.recognize(ByteBuffer(bytes: text).readableBytesView)
        }
        #expect(recognize(Array("POST /a HTTP/1.1\r\n".utf8)) == .match)
        #expect(recognize(Array("OPTIONS * HTTP/1.1".utf8)) == .match)
        #expect(recognize(Array("GET ".utf8)) == .match)
        #expect(recognize(Array("OPT".utf8)) == .needMoreBytes)
        #expect(recognize(Array("P".utf8)) == .needMoreBytes)
        #expect(recognize(Array("PRI * HTTP/2.0".utf8)) == .noMatch)
        #expect(recognize([0x89, 0x53, 0x4B]) == .noMatch)
        #expect(recognize([0x16, 0x03, 0x01]) == .noMatch)
        #expect(recognize(Array("GETX".utf8)) == .noMatch)
    }

    @Test("Protobuf JSON requests: unknown fields ignored, bad JSON an INVALID_ARGUMENT naming the type")
    func jsonCodec() throws {
        let request = try MessageCodec.json.decode(
            Skiff_Testing_V1_SimpleRequest.self,
            from: ByteBuffer(string: #"{"responseSize": 3, "futureField": [1, 2]}"#)
        )
        #expect(request.responseSize == 3)
        let snake = try MessageCodec.json.decode(
            Skiff_Testing_V1_SimpleRequest.self,
            from: ByteBuffer(string: #"{"response_size": 4}"#)
        )
        #expect(snake.responseSize == 4)
        do {
            _ = try MessageCodec.json.decode(Skiff_Testing_V1_SimpleRequest.self, from: ByteBuffer(string: "{"))
            Issue.record("bad JSON was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("skiff.testing.v1.SimpleRequest"))
        }
        let encoded = try MessageCodec.json.encode(Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = 5 })
        #expect(String(buffer: encoded) == #"{"responseSize":5}"#)
    }

    @Test("bounded random input (seeded) into the protocol detector's recognizers and every decoder")
    func randomInput() throws {
        var random = SeededGenerator(seed: 0xF022)
        func bytes(_ range: ClosedRange<Int>) -> [UInt8] {
            (0..<Int.random(in: range, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        let recognizers: [any ConnectionProtocol] = [SkiffWireProtocol(), HTTP2Protocol(), HTTP1Protocol()]
        let prefixes = ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "POST ", "GET ", "\u{89}SKIFF"].map { Array($0.utf8) }
        for round in 0..<5_000 {
            // The detector: at most one protocol claims any prefix.
            var prefix = bytes(1...40)
            if round % 3 == 0 { prefix = prefixes[round % prefixes.count] + prefix }
            let view = ByteBuffer(bytes: prefix).readableBytesView
            let matches = recognizers.filter { $0.recognize(view) == .match }
            #expect(matches.count <= 1, "\(prefix)")

            // The envelope reader never holds more than one message's worth and never yields a larger one.
            var reader = GRPCMessageReader(maxMessageSize: 64)
            var input = bytes(0...200)
            if round % 2 == 0 { input = [0, 0, 0, 0, UInt8.random(in: 0...70, using: &random)] + input }
            reader.append(ByteBuffer(bytes: input))
            reading: while true {
                switch reader.next() {
                case .message(let message): #expect(message.readableBytes <= 64)
                case .needMoreData, .tooLarge, .compressed: break reading
                }
            }
            #expect(reader.bufferedBytes <= 5 + 64 || reader.next() != .needMoreData)

            // Base64 text: at most 3 bytes out per 4 characters in.
            var text = Base64TextDecoder()
            let characters = bytes(0...64)
            if let out = text.decode(ByteBuffer(bytes: characters).readableBytesView) {
                #expect(out.readableBytes <= characters.count / 4 * 3)
            }

            // A Connect GET query, and request bodies as JSON and as Protobuf: a value or a clear error.
            _ = ConnectWire.getRequest(query: Substring(String(decoding: bytes(0...80), as: UTF8.self)))
            for codec in [MessageCodec.json, .proto] {
                do {
                    _ = try codec.decode(Skiff_Testing_V1_SimpleRequest.self, from: ByteBuffer(bytes: bytes(0...48)))
                } catch {
                    #expect(error.code == .invalidArgument)
                }
            }
        }
    }
}
