import Foundation
import NIOCore
import Prometheus
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffClient
@testable import SkiffServer

private let unaryCall = "/skiff.testing.v1.TestService/UnaryCall"
private let fullDuplex = "/skiff.testing.v1.TestService/FullDuplexCall"
private let flood = ProbeService.flood.path
private let big = ProbeService.big.path

/// Attacks of issue 9 over a real socket: every cost a client can cause has a bound, and
/// breaking one costs only the offender.
@Suite("Hardening: bounded memory, no leaks, no stalls, guards aimed at attacks")
struct HardeningTests {
    /// A control call on its own connection: the server still serves others.
    private func controlCallSucceeds(port: Int) async throws {
        try await withTimeout(.seconds(30)) {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                let response = try await client.unaryCall(.with { $0.responseSize = 10 })
                #expect(response.payload.body.count == 10)
            }
        }
    }

    @Test("a client that stops reading with 2^31−1 windows cannot make streaming handlers buffer without bound")
    func slowReaderStreaming() async throws {
        let probe = ProbeService()
        let observer = ServerObserver()
        try await withTestServer(services: [TestService(), probe], observer: observer) { server, port in
            try await withNonReadingConnection(port: port, settings: hugeWindows) { attacker in
                // 20 streams × 1,000 × 64 KiB = 1.3 GB if nothing bounded the writers.
                try await attacker.send {
                    for i in 0..<20 {
                        let id = UInt32(2 * i + 1)
                        $0.writeHeaders(streamID: id, path: flood, metadata: [:])
                        $0.writeMessage(streamID: id, bytes: [])
                    }
                }
                try await waitUntil { probe.written.load(ordering: .relaxed) > 20 }
                // Let the handlers run into the bound; each write that returned was accepted.
                var previous = -1
                while probe.written.load(ordering: .relaxed) != previous {
                    previous = probe.written.load(ordering: .relaxed)
                    try await Task.sleep(for: .milliseconds(300))
                }
                let written = probe.written.load(ordering: .relaxed)
                // The budget (4 MiB) + NIO's buffer (1 MiB) + the kernel's + a message per stream.
                #expect(written * 64 * 1024 < 48 * 1024 * 1024, "handlers wrote \(written) × 64 KiB")
                #expect(observer.bufferedResponseBytes <= 4 * 1024 * 1024 + 20 * 64 * 1024)
                try await controlCallSucceeds(port: port)
            }
            // The connection's memory is returned once it ends.
            try await waitUntil { observer.bufferedResponseBytes == 0 && observer.liveConnectionHandlers == 0 }
            try await waitUntil { server.observer.streams == 0 }
        }
    }

    @Test("a client that stops reading cannot make unary handlers buffer without bound either")
    func slowReaderUnary() async throws {
        let probe = ProbeService()
        let observer = ServerObserver()
        try await withTestServer(services: [TestService(), probe], observer: observer) { server, port in
            try await withNonReadingConnection(port: port) { attacker in
                // 500 × 1 MiB responses = 500 MiB if every handler ran and queued its answer.
                try await attacker.send {
                    for i in 0..<500 {
                        let id = UInt32(2 * i + 1)
                        $0.writeHeaders(streamID: id, path: big, metadata: [:])
                        $0.writeMessage(streamID: id, bytes: [])
                    }
                }
                try await waitUntil { probe.bigMade.load(ordering: .relaxed) > 2 }
                var previous = -1
                while probe.bigMade.load(ordering: .relaxed) != previous {
                    previous = probe.bigMade.load(ordering: .relaxed)
                    try await Task.sleep(for: .milliseconds(300))
                }
                let made = probe.bigMade.load(ordering: .relaxed)
                // Default windows let ~16 MiB through to the socket; beyond that, handlers wait
                // to start while the client does not read.
                #expect(made < 64, "\(made) responses of 1 MiB were made")
                #expect(observer.bufferedResponseBytes <= 4 * 1024 * 1024 + 1024 * 1024 + 64)
                try await controlCallSucceeds(port: port)
            }
            try await waitUntil { observer.bufferedResponseBytes == 0 && observer.liveConnectionHandlers == 0 }
            try await waitUntil { server.observer.streams == 0 }
        }
    }

    @Test("connections that come and go leave nothing behind: handlers and streams are freed")
    func connectionChurnLeaksNothing() async throws {
        let observer = ServerObserver()
        try await withTestServer(observer: observer) { _, port in
            for round in 0..<160 {
                try await withRawConnection(port: port) { conn in
                    switch round % 4 {
                    case 0:
                        // A call, then the client closes.
                        _ = try await conn.handshake()
                        try await conn.send {
                            $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                            $0.writeMessage(streamID: 1, bytes: [])
                        }
                        _ = try await conn.next { $0.type == .trailers }
                    case 1:
                        // A protocol violation: GOAWAY, then the server closes.
                        _ = try await conn.handshake()
                        try await conn.send { $0.writeFrameHeader(length: 0, type: .message, streamID: 2) }
                        _ = try await conn.drainUntilClosed()
                    case 2:
                        // Streams still waiting for their request when the client goes away.
                        _ = try await conn.handshake()
                        try await conn.send {
                            for i in 0..<5 {
                                $0.writeHeaders(streamID: UInt32(2 * i + 1), path: unaryCall, metadata: [:])
                            }
                            $0.writePing(1, ack: false)
                        }
                        _ = try await conn.next { $0.type == .ping }
                    default:
                        // A bad preface.
                        try await conn.send { $0.writeBytes(Array("GET / HTTP/1.1\r\n\r\n".utf8)) }
                        _ = try await conn.drainUntilClosed()
                    }
                }
            }
            try await waitUntil { observer.liveConnectionHandlers == 0 && observer.connections == 0 }
            try await waitUntil { observer.streams == 0 }
        }
    }

    @Test("client connections that come and go leave no connection handler behind")
    func clientChurnLeaksNothing() async throws {
        try await withTestServer { _, port in
            let before = ClientConnectionHandler.live.load(ordering: .relaxed)
            for _ in 0..<100 {
                try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                    _ = try await TestClient(transport: connection).emptyCall(.init())
                }
            }
            // Other tests' connections may come and go meanwhile: a leak would leave 100 more.
            try await waitUntil { ClientConnectionHandler.live.load(ordering: .relaxed) - before < 30 }
        }
    }

    @Test("a client-streaming request that pauses longer than the request timeout is ended")
    func stalledClientStream() async throws {
        try await withTestServer(configure: { $0.requestTimeout = .milliseconds(300) }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeHeaders(
                        streamID: 1,
                        path: "/skiff.testing.v1.TestService/StreamingInputCall",
                        metadata: [:]
                    )
                    $0.writeMessage(streamID: 1, bytes: [], flags: [])
                }
                let trailers = try await conn.next { $0.streamID == 1 }
                #expect(trailers.trailers?.status == .deadlineExceeded)
            }
        }
    }

    @Test("incomplete request messages are bounded per connection: the stream that goes beyond fails alone")
    func incompleteRequestsAreBounded() async throws {
        try await withTestServer(configure: { $0.maxBufferedRequestBytes = 256 * 1024 }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                let request: [UInt8] = try Skiff_Testing_V1_SimpleRequest.with {
                    $0.payload.body = Data(count: 180_000)
                }.serializedBytes()
                let pieces = stride(from: 0, to: request.count, by: 60_000).map {
                    Array(request[$0..<min($0 + 60_000, request.count)])
                }
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                    for piece in pieces.dropLast() { $0.writeMessage(streamID: 1, bytes: piece, flags: .more) }
                    // A second stream's fragments would take the connection past 256 KiB.
                    $0.writeHeaders(streamID: 3, path: unaryCall, metadata: [:])
                    for _ in 0..<2 {
                        $0.writeMessage(streamID: 3, bytes: Array(repeating: 0, count: 60_000), flags: .more)
                    }
                }
                let refused = try await conn.next { $0.streamID == 3 }
                #expect(refused.trailers?.status == .resourceExhausted)
                // The first stream completes its message and its call.
                try await conn.send { $0.writeMessage(streamID: 1, bytes: pieces.last!, flags: .endStream) }
                let done = try await conn.next { $0.streamID == 1 && $0.type == .trailers }
                #expect(done.trailers?.status == .ok)
            }
        }
    }

    @Test("a client that cancels all 1,000 of its open streams at once keeps its connection and its other calls")
    func cancellingManyStreamsIsNotAnAttack() async throws {
        try await withTestServer { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                // A slow call that must survive, then 999 long-lived streams, cancelled together.
                let slow = Skiff_Testing_V1_SimpleRequest.with { $0.sleepMs = 500 }
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: try! slow.serializedBytes() as [UInt8])
                    for i in 1..<1_000 { $0.writeHeaders(streamID: UInt32(2 * i + 1), path: fullDuplex, metadata: [:]) }
                }
                try await conn.send {
                    for i in 1..<1_000 { $0.writeRSTStream(streamID: UInt32(2 * i + 1), status: .cancelled) }
                }
                let end = try await conn.next { ($0.streamID == 1 && $0.type == .trailers) || $0.type == .goAway }
                #expect(end.type == .trailers, "got \(end)")
                #expect(end.trailers?.status == .ok)
            }
        }
    }

    @Test("a PING burst while a stream is open is answered, not punished, with keepalive-min-interval 0")
    func pingsWithStreamsOpen() async throws {
        try await withTestServer(configure: { $0.settings.keepaliveMinIntervalMS = 0 }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: fullDuplex, metadata: [:])
                    for i in 0..<300 { $0.writePing(UInt64(i), ack: false) }
                    $0.writeHalfClose(streamID: 1)
                }
                var acks = 0
                while acks < 300 {
                    let frame = try await conn.next { $0.type == .ping || $0.type == .goAway }
                    #expect(frame.type == .ping)
                    if frame.type == .goAway { break }
                    acks += 1
                }
                #expect(try await conn.next { $0.streamID == 1 && $0.type == .trailers }.trailers?.status == .ok)
            }
        }
    }

    @Test("calls rejected before routing are counted under one \"unknown\" label, never the client's path")
    func rejectedPathsDoNotAddMetricLabels() async throws {
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(factory: PrometheusMetricsFactory(registry: registry))
        try await withTestServer(observer: observer, configure: { $0.settings.maxHeaderListSize = 1_024 }) {
            _,
            port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                var oversize = Metadata()
                oversize.add("x-big", String(repeating: "a", count: 2_000))
                try await conn.send {
                    for i in 0..<20 {
                        let id = UInt32(2 * i + 1)
                        $0.writeHeaders(streamID: id, path: "/random.Path\(i)/M", metadata: oversize)
                        $0.writeMessage(streamID: id, bytes: [])
                    }
                    $0.writeHeaders(streamID: 41, path: "/made.Up/Method", metadata: ["grpc-timeout": "bad"])
                }
                _ = try await conn.next { $0.streamID == 41 }
            }
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            let text = String(decoding: buffer, as: UTF8.self)
            #expect(!text.contains("random.Path"))
            #expect(!text.contains("made.Up"))
            #expect(text.contains("method=\"unknown\""))
        }
    }

    @Test(
        "the conformance service validates like any service: status codes outside 0…16 and sizes out of range",
        arguments: [
            Skiff_Testing_V1_SimpleRequest.with { $0.responseStatus = .with { $0.code = 17 } },
            .with { $0.responseStatus = .with { $0.code = Int32.max } },
            .with { $0.responseStatus = .with { $0.code = -1 } },
            .with { $0.responseSize = Int32.max },
            .with { $0.responseSize = -1 },
            .with { $0.sleepMs = -5 },
        ]
    )
    func conformanceServiceValidates(request: Skiff_Testing_V1_SimpleRequest) async throws {
        try await withTestServer { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                let error = await #expect(throws: RPCError.self) { _ = try await client.unaryCall(request) }
                #expect(error?.code == .invalidArgument)
                // A valid code is still echoed exactly.
                let echoed = await #expect(throws: RPCError.self) {
                    _ = try await client.unaryCall(.with { $0.responseStatus = .with { $0.code = 16 } })
                }
                #expect(echoed?.code == .unauthenticated)
            }
        }
    }

    @Test("streaming responses of the conformance service are bounded too")
    func conformanceStreamingValidates() async throws {
        try await withTestServer { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                let error = await #expect(throws: RPCError.self) {
                    _ = try await client.streamingOutputCall(
                        .with { $0.responseParameters = [.with { $0.size = Int32.max }] }
                    ) { try await $0.messages.collect().count }
                }
                #expect(error?.code == .invalidArgument)
            }
        }
    }
}
