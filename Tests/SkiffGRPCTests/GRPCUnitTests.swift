import NIOCore
import NIOEmbedded
import NIOHPACK
import SkiffCore
import SkiffServer
import SkiffTesting
import SkiffWire
import Testing

@testable import SkiffGRPC

@Suite("gRPC framing and headers, without I/O")
struct GRPCUnitTests {
    static func frame(_ bytes: [UInt8], compressed: Bool = false) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(compressed ? 1 : 0))
        buffer.writeInteger(UInt32(bytes.count))
        buffer.writeBytes(bytes)
        return buffer
    }

    @Test("messages split across DATA frames and several in one frame come out whole, in order")
    func reader() {
        var reader = GRPCMessageReader(maxMessageSize: 100)
        var both = Self.frame([1, 2, 3])
        var second = Self.frame([4, 5])
        both.writeBuffer(&second)
        // Feed one byte at a time: nothing comes out until a message is complete.
        var out: [[UInt8]] = []
        for index in 0..<both.readableBytes {
            reader.append(both.getSlice(at: index, length: 1)!)
            while case .message(let message) = reader.next() { out.append(Array(message.readableBytesView)) }
        }
        #expect(out == [[1, 2, 3], [4, 5]])
        #expect(!reader.isMidMessage)
        reader.append(Self.frame([]))
        #expect(reader.next() == .message(ByteBuffer()))
    }

    @Test("an oversize message is refused from its length prefix; a compressed one is refused")
    func readerLimits() {
        var reader = GRPCMessageReader(maxMessageSize: 10)
        var header = ByteBuffer()
        header.writeInteger(UInt8(0))
        header.writeInteger(UInt32(1_000_000_000))
        reader.append(header)
        #expect(reader.next() == .tooLarge(length: 1_000_000_000))
        #expect(reader.bufferedBytes == 5)  // nothing of the body was waited for
        var compressed = GRPCMessageReader(maxMessageSize: 10)
        compressed.append(Self.frame([1], compressed: true))
        #expect(compressed.next() == .compressed)
    }

    @Test("grpc-message is percent-encoded outside printable ASCII and round-trips")
    func statusMessage() {
        #expect(GRPCStatusMessage.encode("plain text") == "plain text")
        #expect(GRPCStatusMessage.encode("100%") == "100%25")
        #expect(GRPCStatusMessage.encode("héllo\n") == "h%C3%A9llo%0A")
        for text in ["", "a", "%", "héllo 100% ☃\t", String(repeating: "é", count: 300)] {
            #expect(GRPCStatusMessage.decode(GRPCStatusMessage.encode(text)) == text)
        }
        #expect(GRPCStatusMessage.decode("bad %zz escape %4") == "bad %zz escape %4")
    }

    @Test(
        "request headers: the path, metadata without the reserved headers, -bin values decoded with or without padding"
    )
    func requestHeaders() throws {
        let headers: HPACKHeaders = [
            ":method": "POST", ":scheme": "http", ":path": "/skiff.testing.v1.TestService/EmptyCall",
            ":authority": "localhost", "te": "trailers", "content-type": "application/grpc+proto",
            "grpc-timeout": "1S", "x-user": "ada", "x-token-bin": "AAH+/w", "x-other-bin": "AAH+/w==",
        ]
        let request = try GRPCHeaders.request(headers).get()
        #expect(request.path == "/skiff.testing.v1.TestService/EmptyCall")
        #expect(request.metadata.first("grpc-timeout") == "1S")
        #expect(request.metadata.first("x-user") == "ada")
        #expect(request.metadata.first("te") == nil && request.metadata.first("content-type") == nil)
        let binary = request.metadata.filter { $0.key.hasSuffix("-bin") }.map(\.value)
        #expect(binary == [.binary([0, 1, 0xFE, 0xFF]), .binary([0, 1, 0xFE, 0xFF])])
    }

    @Test("requests that are not gRPC are refused with the HTTP status the spec names")
    func refusals() {
        func refusal(_ headers: HPACKHeaders) -> GRPCHeaders.Refusal? {
            if case .failure(let refusal) = GRPCHeaders.request(headers) { return refusal }
            return nil
        }
        #expect(refusal([":method": "GET", ":path": "/a/b", "content-type": "application/grpc"]) == .methodNotAllowed)
        #expect(refusal([":method": "POST", ":path": "/a/b", "content-type": "text/html"]) == .unsupportedMediaType)
        #expect(refusal([":method": "POST", ":path": "/a/b"]) == .unsupportedMediaType)
        #expect(refusal([":method": "POST", "content-type": "application/grpc"]) == .badPath)
        let badBinary = refusal([
            ":method": "POST", ":path": "/a/b", "content-type": "application/grpc", "x-bin": "!!!",
        ])
        #expect(badBinary == .invalidMetadata("metadata x-bin is not base64"))
        #expect(GRPCHeaders.refusal(.unsupportedMediaType).first(name: ":status") == "415")
    }

    @Test(
        "trailers carry the status, the encoded message and the metadata; trailers-only adds :status and content-type"
    )
    func trailers() {
        let trailers = GRPCHeaders.trailers(
            status: .notFound,
            message: "no 100%",
            metadata: ["x-a": "1", "x-b-bin": .binary([1, 2])],
            trailersOnly: false
        )
        #expect(trailers.first(name: ":status") == nil)
        #expect(trailers.first(name: "grpc-status") == "5")
        #expect(trailers.first(name: "grpc-message") == "no 100%25")
        #expect(trailers.first(name: "x-b-bin") == "AQI=")
        let only = GRPCHeaders.trailers(status: .ok, message: "", metadata: [:], trailersOnly: true)
        #expect(only.first(name: ":status") == "200" && only.first(name: "content-type") == "application/grpc")
        #expect(only.first(name: "grpc-message") == nil)
    }

    @Test("the HTTP/2 preface is recognized a byte at a time; anything else is not")
    func recognize() {
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let grpc = HTTP2Protocol()
        for count in 1..<preface.count {
            #expect(grpc.recognize(ByteBuffer(bytes: preface.prefix(count)).readableBytesView) == .needMoreBytes)
        }
        #expect(grpc.recognize(ByteBuffer(bytes: preface).readableBytesView) == .match)
        #expect(grpc.recognize(ByteBuffer(string: "GET / HTTP/1.1\r\n").readableBytesView) == .noMatch)
        #expect(grpc.recognize(ByteBuffer(bytes: [0x89]).readableBytesView) == .noMatch)
    }

    @Test("gRPC content types: either name, any case, parameters and blanks around it; nothing longer or shorter")
    func grpcContentTypes() {
        for value in [
            "application/grpc", "application/grpc+proto", "Application/GRPC+Proto", " \tapplication/grpc ; charset=x",
            "application/grpc;", "APPLICATION/GRPC",
        ] {
            #expect(GRPCHeaders.isGRPC(value), "\(value)")
        }
        for value in [
            "", ";", "application/grpc-web", "application/grpc+json", "application/grpcx", "application/grp",
            "application/ grpc", "xapplication/grpc", "application/grpc-web-text; a=b",
        ] {
            #expect(!GRPCHeaders.isGRPC(value), "\(value)")
        }
        #expect(MediaType.parts(" A/B ;C=D;; e ") == ["a/b", "c=d", "", "e"])
        #expect(MediaType.parts("a/b; c", limit: 1) == ["a/b"])
    }

    @Test("the flushes of one event-loop tick leave as one; a close first sends what is pending")
    func flushCoalescer() throws {
        let counter = FlushCounter()
        let channel = EmbeddedChannel(handlers: [counter, FlushCoalescer()])
        for text in ["a", "b", "c"] {
            channel.write(ByteBuffer(string: text), promise: nil)
            channel.flush()
        }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(counter.flushes == 0)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        for text in ["a", "b", "c"] {
            #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: text))
        }
        channel.write(ByteBuffer(string: "goaway"), promise: nil)
        channel.flush()
        channel.close(promise: nil)
        #expect(counter.flushes == 2)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "goaway"))
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 2)
    }
}

/// Counts the flushes that reach the socket.
final class FlushCounter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    private(set) var flushes = 0

    func flush(context: ChannelHandlerContext) {
        flushes += 1
        context.flush()
    }
}
