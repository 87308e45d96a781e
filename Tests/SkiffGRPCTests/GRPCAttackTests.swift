import NIOCore
import NIOHPACK
import NIOPosix
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import Testing

/// Bytes an attacker sends over HTTP/2, on a real socket: each costs only its own connection.
@Suite("gRPC endpoint under malformed input")
struct GRPCAttackTests {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// An HTTP/2 frame: 9-byte header, then the payload.
    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + withUnsafeBytes(of: stream.bigEndian, Array.init) + payload
    }

    /// Sends `bytes` on a new connection and returns what the server sent until it closed (or 5 s).
    static func send(_ bytes: [UInt8], port: Int) async throws -> [UInt8] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await withTimeout(.seconds(5)) {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(bytes: bytes))
                var received: [UInt8] = []
                for try await chunk in inbound { received += Array(chunk.readableBytesView) }
                return received
            }
        }
    }

    /// The type bytes of the frames in `bytes` (after the server's SETTINGS and so on).
    static func frameTypes(_ bytes: [UInt8]) -> [UInt8] {
        var types: [UInt8] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            types.append(bytes[index + 3])
            index += 9 + length
        }
        return types
    }

    @Test(
        "bad frames and a bad HPACK block get GOAWAY and a close; a skiff/1 client on the same port carries on",
        arguments: [
            ("SETTINGS of a length not a multiple of 6", Self.frame(type: 0x4, payload: [0, 0, 0, 0, 0])),
            ("DATA on stream 0", Self.frame(type: 0x0, payload: [1, 2, 3])),
            (
                "HEADERS with a broken HPACK block",
                Self.frame(type: 0x1, flags: 0x5, stream: 1, payload: [0xFF, 0xFF, 0xFF, 0xFF])
            ),
            ("a WINDOW_UPDATE of 0 on the connection", Self.frame(type: 0x8, payload: [0, 0, 0, 0])),
        ]
    )
    func malformed(_ name: String, _ bad: [UInt8]) async throws {
        try await withTestServer(services: [TestService()], protocols: [SkiffWireProtocol(), HTTP2Protocol()]) {
            _,
            port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { bystander in
                let client = Skiff_Testing_V1_TestService.Client(transport: bystander)
                _ = try await client.emptyCall(.init())
                let settings = Self.frame(type: 0x4, payload: [])
                let received = try await Self.send(Self.preface + settings + bad, port: port)
                #expect(Self.frameTypes(received).contains(0x7), "\(name): no GOAWAY in \(received.prefix(64))")
                _ = try await client.emptyCall(.init())  // the other connection is untouched
            }
        }
    }

    @Test("a request that is not gRPC gets its HTTP status; the connection serves the next stream")
    func notGRPC() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol()],
            configure: { $0.idleTimeout = .milliseconds(300) }  // then the server closes, ending `send`
        ) { _, port in
            // HEADERS (end of stream): :method GET, :path /, :scheme http (indexed), :authority x (literal).
            let block: [UInt8] = [0x82, 0x84, 0x86, 0x01, 0x01, 0x78]
            let headers = Self.frame(type: 0x1, flags: 0x5, stream: 1, payload: block)
            let goAway = Self.frame(type: 0x7, payload: [0, 0, 0, 0, 0, 0, 0, 0])
            let received = try await Self.send(
                Self.preface + Self.frame(type: 0x4, payload: []) + headers + goAway,
                port: port
            )
            // The server answered stream 1 with HEADERS (its :status 404: no call), not a connection error.
            #expect(Self.frameTypes(received).contains(0x1), "\(received.prefix(64))")
        }
    }

    @Test("a connection that sends only the preface is closed after the idle timeout")
    func idle() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol()],
            configure: { $0.idleTimeout = .milliseconds(200) }
        ) { _, port in
            let received = try await Self.send(Self.preface + Self.frame(type: 0x4, payload: []), port: port)
            #expect(Self.frameTypes(received).contains(0x7))  // GOAWAY, then the close ended `send`
        }
    }

    /// The header blocks of the HEADERS frames in `bytes` on `stream`, decoded in order.
    static func headerBlocks(_ bytes: [UInt8], stream: UInt8) throws -> [(HPACKHeaders, endStream: Bool)] {
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var blocks: [(HPACKHeaders, endStream: Bool)] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            if bytes[index + 3] == 0x1, bytes[index + 8] == stream {
                var block = ByteBuffer(bytes: bytes[(index + 9)..<(index + 9 + length)])
                blocks.append((try decoder.decodeHeaders(from: &block), bytes[index + 4] & 0x1 != 0))
            }
            index += 9 + length
        }
        return blocks
    }

    @Test("a unary request whose message never comes ends with DEADLINE_EXCEEDED after the request timeout")
    func requestNeverCompletes() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol()],
            configure: {
                $0.requestTimeout = .milliseconds(200)
                $0.idleTimeout = .milliseconds(400)  // then the connection closes, ending `send`
            }
        ) { _, port in
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
            var block = ByteBuffer()
            try encoder.encode(
                headers: [
                    ":method": "POST", ":scheme": "http", ":path": "/skiff.testing.v1.TestService/UnaryCall",
                    ":authority": "localhost", "content-type": "application/grpc", "te": "trailers",
                ],
                to: &block
            )
            // HEADERS with END_HEADERS but not END_STREAM: the request message is due, and never sent.
            let headers = Self.frame(type: 0x1, flags: 0x4, stream: 1, payload: Array(block.readableBytesView))
            let received = try await Self.send(Self.preface + Self.frame(type: 0x4, payload: []) + headers, port: port)
            let blocks = try Self.headerBlocks(received, stream: 1)
            let status = blocks.last.flatMap { $0.0.first(name: "grpc-status") }
            #expect(status == "4", "\(blocks.map(\.0))")  // DEADLINE_EXCEEDED
            #expect(blocks.last?.endStream == true)
        }
    }
}
