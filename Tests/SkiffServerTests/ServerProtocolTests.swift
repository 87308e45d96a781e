import NIOCore
import NIOPosix
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Testing

private let emptyCall = "/skiff.testing.v1.TestService/EmptyCall"
private let unaryCall = "/skiff.testing.v1.TestService/UnaryCall"
private let streamingOutputCall = "/skiff.testing.v1.TestService/StreamingOutputCall"

private func bytes(_ message: some SwiftProtobuf.Message) throws -> [UInt8] { try message.serializedBytes() }

/// The server against the wire contract, byte by byte, over a real socket.
@Suite("Server speaks the contract")
struct ServerProtocolTests {
    @Test("server sends its preface and SETTINGS at once, advertising 1000 streams")
    func prefaceFirst() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                let first = try #require(try await conn.next())
                #expect(first.type == .settings)
                let pairs = try FramePayload.settings(first)
                #expect(pairs.contains { $0.0 == SettingsID.maxConcurrentStreams.rawValue && $0.1 == 1_000 })
            }
        }
    }

    @Test("the §6 example: unary EmptyCall with a 1 s deadline")
    func exampleVector() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeBytes([
                        0x00, 0x00, 0x00, 0x3f, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x27,
                    ])
                    $0.writeString("/skiff.testing.v1.TestService/EmptyCall")
                    $0.writeBytes([0x00, 0x01, 0x00, 0x0c])
                    $0.writeString("grpc-timeout")
                    $0.writeBytes([0x00, 0x00, 0x00, 0x02])
                    $0.writeString("1S")
                    $0.writeBytes([0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01])
                }
                var received = ByteBuffer()
                for _ in 0..<3 {
                    let frame = try #require(try await conn.next())
                    received.writeFrame(frame)
                }
                let expected: [UInt8] = [
                    0x00, 0x00, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
                    0x00, 0x00, 0x00, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00,
                ]
                #expect(Array(received.readableBytesView) == expected)
            }
        }
    }

    @Test(
        "a peer that does not speak Skiff gets GOAWAY(INVALID_ARGUMENT) and is closed",
        arguments: [
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), [0x16, 0x03, 0x01, 0x00, 0x10],
            Array("PRI * HTTP/2.0\r\n".utf8),
        ]
    )
    func badPreface(_ garbage: [UInt8]) async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                try await conn.send { $0.writeBytes(garbage) }
                let frames = try await conn.drainUntilClosed()
                #expect(frames.first?.type == .settings)
                let goAway = try #require(frames.last?.goAway)
                #expect(goAway.status == .invalidArgument)
                #expect(frames.count == 2)
            }
        }
    }

    @Test("protocol violations get GOAWAY(INTERNAL) and close", arguments: ViolationCase.allCases)
    func violations(_ violation: ViolationCase) async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send(violation.write)
                let frames = try await conn.drainUntilClosed()
                let goAway = try #require(frames.last?.goAway, "no GOAWAY for \(violation)")
                #expect(goAway.status == .internal, "\(violation): \(goAway.debug)")
            }
        }
    }

    enum ViolationCase: CaseIterable {
        case secondSettings, evenStream, unknownTypeOnStream, messageOnNeverOpened, zeroWindowUpdate
        case headersReuse, truncatedMetadata, windowOverflow, trailersFromClient

        func write(_ buffer: inout ByteBuffer) {
            switch self {
            case .secondSettings: buffer.writeSettings([])
            case .evenStream: buffer.writeHeaders(streamID: 2, path: emptyCall, metadata: [:], flags: .endStream)
            case .unknownTypeOnStream:
                buffer.writeFrameHeader(length: 0, type: FrameType(rawValue: 0x42), streamID: 1)
            case .messageOnNeverOpened: buffer.writeMessage(streamID: 9, bytes: [])
            case .zeroWindowUpdate:
                buffer.writeFrameHeader(length: 4, type: .windowUpdate, streamID: 0)
                buffer.writeInteger(UInt32(0))
            case .headersReuse:
                buffer.writeHeaders(streamID: 3, path: emptyCall, metadata: [:])
                buffer.writeHeaders(streamID: 3, path: emptyCall, metadata: [:])
            case .truncatedMetadata:
                buffer.writeFrameHeader(length: 2 + 4 + 4, type: .headers, streamID: 1)
                buffer.writeInteger(UInt16(4))
                buffer.writeString("/a/b")
                buffer.writeInteger(UInt16(3))  // three entries announced
                buffer.writeInteger(UInt16(200))  // key length past the end
            case .windowOverflow: buffer.writeWindowUpdate(streamID: 0, increment: 0x7FFF_FFFF)
            case .trailersFromClient:
                buffer.writeHeaders(streamID: 1, path: emptyCall, metadata: [:])
                buffer.writeTrailers(streamID: 1, status: .ok, message: "", metadata: [:])
            }
        }
    }

    @Test("an unknown frame type on stream 0 is ignored")
    func unknownOnStreamZero() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeFrameHeader(length: 3, type: FrameType(rawValue: 0x7F), streamID: 0)
                    $0.writeBytes([1, 2, 3])
                    $0.writeHeaders(streamID: 1, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                let trailers = try await conn.next { $0.type == .trailers }
                #expect(trailers.trailers?.status == .ok)
            }
        }
    }

    @Test("an oversize frame is refused from its header alone: GOAWAY(RESOURCE_EXHAUSTED)")
    func oversizeFrame() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send { $0.writeFrameHeader(length: 65_537, type: .message, streamID: 1) }
                let frames = try await conn.drainUntilClosed()
                #expect(frames.last?.goAway?.status == .resourceExhausted)
            }
        }
    }

    @Test("errors travel in TRAILERS, trailers-only", arguments: StreamErrorCase.allCases)
    func streamErrors(_ errorCase: StreamErrorCase) async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send { errorCase.write(&$0) }
                let frame = try await conn.next { $0.streamID == 1 }
                #expect(frame.type == .trailers, "\(errorCase): \(frame)")
                #expect(frame.trailers?.status == errorCase.expected, "\(errorCase): \(frame.trailers?.message ?? "")")
                #expect(frame.trailers?.message.isEmpty == false)
                // The connection is unaffected: another call succeeds.
                try await conn.send {
                    $0.writeHeaders(streamID: 3, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 3, bytes: [])
                }
                let ok = try await conn.next { $0.streamID == 3 && $0.type == .trailers }
                #expect(ok.trailers?.status == .ok)
            }
        }
    }

    enum StreamErrorCase: CaseIterable {
        case unknownMethod, undecodable, twoMessages, zeroMessages, badTimeout, gzip, compressedWithoutEncoding
        case badMetadataKey, nonPrintableValue, oversizeMetadata, oversizeMessage, messageAfterEnd, halfCloseMidFragment
        case handlerStatus

        var expected: StatusCode {
            switch self {
            case .unknownMethod, .gzip: .unimplemented
            case .undecodable: .invalidArgument
            case .oversizeMetadata, .oversizeMessage: .resourceExhausted
            case .handlerStatus: .notFound
            default: .internal
            }
        }

        func write(_ b: inout ByteBuffer) {
            switch self {
            case .unknownMethod:
                b.writeHeaders(streamID: 1, path: "/no.such.Service/Nope", metadata: [:])
                b.writeMessage(streamID: 1, bytes: [])
            case .undecodable:
                b.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                b.writeMessage(streamID: 1, bytes: [0xFF, 0xFF, 0xFF])
            case .twoMessages:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: [:])
                b.writeMessage(streamID: 1, bytes: [], flags: [])
                b.writeMessage(streamID: 1, bytes: [])
            case .zeroMessages:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: [:], flags: .endStream)
            case .badTimeout:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: ["grpc-timeout": "soon"])
                b.writeMessage(streamID: 1, bytes: [])
            case .gzip:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: ["grpc-encoding": "gzip"])
            case .compressedWithoutEncoding:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: [:])
                b.writeMessage(streamID: 1, bytes: [], flags: [.endStream, .compressed])
            case .badMetadataKey:
                b.writeHeaders(streamID: 1, path: emptyCall, metadata: ["Bad-Key": "x"])
                b.writeMessage(streamID: 1, bytes: [])
            case .nonPrintableValue:
                b.writeHeaders(
                    streamID: 1,
                    path: emptyCall,
                    metadata: Metadata([.init(key: "x-a", value: .string("a\u{7}b"))])
                )
                b.writeMessage(streamID: 1, bytes: [])
            case .oversizeMetadata:
                b.writeHeaders(
                    streamID: 1,
                    path: emptyCall,
                    metadata: ["x-big": .string(String(repeating: "a", count: 9_000))]
                )
            case .oversizeMessage:
                b.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                let chunk = [UInt8](repeating: 0, count: 60_000)
                for _ in 0..<70 { b.writeMessage(streamID: 1, bytes: chunk, flags: .more) }
            case .messageAfterEnd:
                b.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/StreamingInputCall", metadata: [:])
                b.writeHalfClose(streamID: 1)
                b.writeMessage(streamID: 1, bytes: [])
            case .halfCloseMidFragment:
                b.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/StreamingInputCall", metadata: [:])
                b.writeMessage(streamID: 1, bytes: [0x0A], flags: .more)
                b.writeHalfClose(streamID: 1)
            case .handlerStatus:
                let request = Skiff_Testing_V1_SimpleRequest.with {
                    $0.responseStatus = .with {
                        $0.code = 5
                        $0.message = "nothing here ✓"
                    }
                }
                b.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                b.writeMessage(streamID: 1, bytes: try! bytes(request))
            }
        }
    }

    @Test("the server enforces grpc-timeout: DEADLINE_EXCEEDED soon after the deadline")
    func serverDeadline() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                // The handler would answer after 300 s; the answer comes within next()'s 30 s.
                let request = Skiff_Testing_V1_SimpleRequest.with { $0.sleepMs = 300_000 }
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: unaryCall, metadata: ["grpc-timeout": "100m"])
                    $0.writeMessage(streamID: 1, bytes: try! bytes(request))
                }
                let frame = try await conn.next { $0.streamID == 1 }
                #expect(frame.trailers?.status == .deadlineExceeded)
            }
        }
    }

    @Test("metadata is echoed: initial in HEADERS, -bin in TRAILERS, order kept")
    func metadataEcho() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                var metadata: Metadata = ["x-skiff-echo-initial": "one", "x-other": "no"]
                metadata.add("x-skiff-echo-initial", "two")
                metadata.add("x-skiff-echo-trailing-bin", binary: [0, 1, 2, 255])
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: emptyCall, metadata: metadata)
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                let headers = try await conn.next { $0.type == .headers }
                let initial = try FramePayload.headers(headers).metadata.metadata
                #expect(initial.map(\.key) == ["x-skiff-echo-initial", "x-skiff-echo-initial"])
                #expect(initial.values("x-skiff-echo-initial") == [.string("one"), .string("two")])
                let trailers = try await conn.next { $0.type == .trailers }
                #expect(
                    trailers.trailers?.metadata.metadata.values("x-skiff-echo-trailing-bin") == [
                        .binary([0, 1, 2, 255])
                    ]
                )
            }
        }
    }

    @Test("a trailers-only error carries the echoed initial metadata before the trailing entries")
    func trailersOnlyEcho() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                let request = Skiff_Testing_V1_SimpleRequest.with { $0.responseStatus = .with { $0.code = 9 } }
                var metadata: Metadata = ["x-skiff-echo-initial": "i"]
                metadata.add("x-skiff-echo-trailing-bin", binary: [7])
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: unaryCall, metadata: metadata)
                    $0.writeMessage(streamID: 1, bytes: try! bytes(request))
                }
                let frame = try await conn.next { $0.streamID == 1 }
                #expect(frame.type == .trailers)
                let entries = try #require(frame.trailers?.metadata.metadata)
                #expect(entries.map(\.key) == ["x-skiff-echo-initial", "x-skiff-echo-trailing-bin"])
                #expect(frame.trailers?.status == .failedPrecondition)
            }
        }
    }

    @Test("two quick PINGs with no stream open: GOAWAY(RESOURCE_EXHAUSTED, too_many_pings), every PING ACKed")
    func pingStrikes() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    for i in 0..<3 { $0.writePing(UInt64(i), ack: false) }
                }
                let frames = try await conn.drainUntilClosed()
                // "Every PING gets a PING ACK", the one that ends the connection too.
                #expect(frames.filter { $0.type == .ping }.count == 3)
                let goAway = try #require(frames.last?.goAway)
                #expect(goAway.status == .resourceExhausted)
                #expect(goAway.debug == "too_many_pings")
            }
        }
    }

    @Test("over MAX_CONCURRENT_STREAMS the stream is refused with RST_STREAM(UNAVAILABLE, REFUSED)")
    func streamLimit() async throws {
        try await withTestServer(configure: { $0.settings.maxConcurrentStreams = 1 }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                let slow = Skiff_Testing_V1_SimpleRequest.with { $0.sleepMs = 300 }
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: try! bytes(slow))
                    $0.writeHeaders(streamID: 3, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 3, bytes: [])
                }
                let refused = try await conn.next { $0.streamID == 3 }
                #expect(refused.type == .rstStream)
                #expect(refused.flags.contains(.refused))
                #expect(refused.rst?.status == .unavailable)
                let first = try await conn.next { $0.streamID == 1 && $0.type == .trailers }
                #expect(first.trailers?.status == .ok)
            }
        }
    }

    @Test("flow control: the server sends no more than the client's stream window until WINDOW_UPDATE")
    func sendWindow() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake([(.maxMessageSize, 4_096), (.initialStreamWindow, 4_096)])
                let request = Skiff_Testing_V1_StreamingOutputCallRequest.with {
                    $0.responseParameters = Array(repeating: .with { $0.size = 1_000 }, count: 8)
                }
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: streamingOutputCall, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: try! bytes(request))
                }
                var received = 0
                while received < 4_096 {
                    let frame = try await conn.next { $0.type == .message }
                    received += frame.payload.readableBytes
                }
                #expect(received == 4_096)
                // Nothing more arrives while the window is closed.
                await #expect(throws: TestTimeout.self) { _ = try await conn.next(timeout: .milliseconds(300)) }
                try await conn.send { $0.writeWindowUpdate(streamID: 1, increment: 100_000) }
                while true {
                    let frame = try #require(try await conn.next())
                    if frame.type == .message { received += frame.payload.readableBytes }
                    if frame.type == .trailers {
                        #expect(frame.trailers?.status == .ok)
                        break
                    }
                }
                #expect(received > 8 * 1_000)
            }
        }
    }

    @Test("a broken connection does not affect another one")
    func isolation() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { good in
                _ = try await good.handshake()
                try await withRawConnection(port: port) { bad in
                    _ = try await bad.handshake()
                    try await bad.send { $0.writeFrameHeader(length: 1 << 24, type: .message, streamID: 1) }
                    _ = try await bad.drainUntilClosed()
                }
                try await good.send {
                    $0.writeHeaders(streamID: 1, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                let trailers = try await good.next { $0.type == .trailers }
                #expect(trailers.trailers?.status == .ok)
            }
        }
    }

    @Test("graceful drain: GOAWAY(2^31-1), PING, final GOAWAY; calls in flight complete, later ones are refused")
    func drain() async throws {
        try await withTestServer { server, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                // A call in flight that lasts until the client ends it (however slow the machine).
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/FullDuplexCall", metadata: [:])
                }
                try await waitUntil { server.observer.streams == 1 }
                server.beginGracefulShutdown()
                var statuses: [UInt32: StatusCode] = [:]
                var refused5 = false
                func note(_ frame: Frame) {
                    if let t = frame.trailers, frame.type == .trailers { statuses[frame.streamID] = t.status }
                    if frame.type == .rstStream, frame.streamID == 5, frame.flags.contains(.refused) { refused5 = true }
                }
                let first = try await conn.next {
                    note($0)
                    return $0.type == .goAway
                }
                #expect(first.goAway?.lastStreamID == 0x7FFF_FFFF)
                // The listener closed before the GOAWAY went out: a client reconnecting on it is
                // refused at once, not queued by the kernel and reset later.
                await #expect(throws: (any Error).self) {
                    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .connect(host: "127.0.0.1", port: port).get().close()
                }
                let ping = try await conn.next {
                    note($0)
                    return $0.type == .ping
                }
                try await conn.send {
                    // A stream the client opened before it saw the GOAWAY is still served.
                    $0.writeHeaders(streamID: 3, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 3, bytes: [])
                    $0.writePing(try! FramePayload.ping(ping), ack: true)
                }
                let final = try await conn.next {
                    note($0)
                    return $0.type == .goAway
                }
                #expect(final.goAway?.lastStreamID == 3)
                try await conn.send {
                    $0.writeHeaders(streamID: 5, path: emptyCall, metadata: [:])
                    $0.writeMessage(streamID: 5, bytes: [])
                }
                _ = try await conn.next {
                    note($0)
                    return $0.streamID == 5
                }
                // The call in flight ends; then the connection closes.
                try await conn.send { $0.writeHalfClose(streamID: 1) }
                for frame in try await conn.drainUntilClosed() { note(frame) }
                #expect(statuses[1] == .ok)
                #expect(statuses[3] == .ok)
                #expect(refused5)
            }
        }
    }
}

@Suite("Server respects the client's limits")
struct ClientLimitTests {
    @Test("response metadata over the client's MAX_HEADER_LIST_SIZE ends the call with INTERNAL, not an oversize frame")
    func responseMetadataTooLarge() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake([(.maxHeaderListSize, 1_024)])
                let big: Metadata = ["x-skiff-echo-initial": .string(String(repeating: "e", count: 2_000))]
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/EmptyCall", metadata: big)
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                let frame = try await conn.next { $0.streamID == 1 }
                #expect(frame.type == .trailers)
                #expect(frame.trailers?.status == .internal)
                #expect(frame.trailers?.metadata.encodedSize ?? 0 <= 1_024)
            }
        }
    }
}
