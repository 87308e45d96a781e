import Foundation
import NIOCore
import NIOPosix
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffServer

private let unaryCall = "/skiff.testing.v1.TestService/UnaryCall"
private let flood = ProbeService.flood.path

/// The bounds of issue 9 must not turn on legitimate clients: a call whose results the app does
/// not consume yet, a client that stops reading for a while, a refused client that talks first.
@Suite("Hardening: bounds that hold up the offender only")
struct HardeningWindowTests {
    /// MESSAGE payload bytes of `stream` among `frames`.
    private func messageBytes(_ frames: [Frame], stream: UInt32) -> Int {
        frames.filter { $0.streamID == stream && $0.type == .message }.reduce(0) { $0 + $1.payload.readableBytes }
    }

    @Test("a call whose client holds back its stream window does not stop the connection's other calls")
    func heldStreamWindowDoesNotStallTheConnection() async throws {
        let probe = ProbeService()
        let observer = ServerObserver()
        try await withTestServer(
            services: [TestService(), probe],
            observer: observer,
            configure: { $0.maxBufferedResponseBytes = 128 * 1024 }
        ) { _, port in
            try await withRawConnection(port: port) { conn in
                // A stream window of 128 KiB: the flood's stream stops after two messages and the
                // server queues up to its 256 KiB high-water mark more for it: more than the
                // connection's 128 KiB budget.
                _ = try await conn.handshake([(.maxMessageSize, 128 * 1024), (.initialStreamWindow, 128 * 1024)])
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: flood, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                try await waitUntil { probe.written.load(ordering: .relaxed) >= 4 }
                var previous = -1
                while probe.written.load(ordering: .relaxed) != previous {
                    previous = probe.written.load(ordering: .relaxed)
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(previous < 10, "the flood wrote \(previous) messages into a 128 KiB window")
                // Another call on the same connection is answered meanwhile.
                try await conn.send {
                    $0.writeHeaders(streamID: 3, path: unaryCall, metadata: [:])
                    $0.writeMessage(
                        streamID: 3,
                        bytes: try! Skiff_Testing_V1_SimpleRequest.with {
                            $0.responseSize = 10
                        }.serializedBytes() as [UInt8]
                    )
                }
                var frames: [Frame] = []
                while true {
                    let frame = try await conn.next { _ in true }
                    frames.append(frame)
                    if frame.streamID == 3 && frame.type == .trailers { break }
                }
                #expect(frames.last?.trailers?.status == .ok)
                // Once the client grants the window the flood goes on (and on: not just what was queued).
                try await conn.send { $0.writeWindowUpdate(streamID: 1, increment: 4 * 1024 * 1024) }
                var received = 0
                while received < 2 * 1024 * 1024 {
                    let frame = try await conn.next { $0.streamID == 1 }
                    received += frame.payload.readableBytes
                }
                #expect(probe.written.load(ordering: .relaxed) > previous + 20)
                try await conn.send { $0.writeRSTStream(streamID: 1, status: .cancelled) }
            }
            try await waitUntil { observer.bufferedResponseBytes == 0 && observer.liveConnectionHandlers == 0 }
        }
    }

    @Test("a client that does not read for the send-stall timeout is disconnected and its memory returned")
    func sendStallClosesTheConnection() async throws {
        let probe = ProbeService()
        let observer = ServerObserver()
        try await withTestServer(
            services: [TestService(), probe],
            observer: observer,
            configure: { $0.sendStallTimeout = .milliseconds(500) }
        ) { _, port in
            try await withNonReadingConnection(port: port, settings: hugeWindows) { attacker in
                try await attacker.send {
                    $0.writeHeaders(streamID: 1, path: flood, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                try await waitUntil { probe.written.load(ordering: .relaxed) > 20 }
                // The attacker still holds its socket open; the server lets go of its side.
                try await waitUntil { observer.liveConnectionHandlers == 0 && observer.bufferedResponseBytes == 0 }
                #expect(observer.connections == 0)
            }
        }
    }

    @Test("a refused client that has already sent a burst still reads the GOAWAY, not a reset")
    func refusalReachesATalkativeClient() async throws {
        try await withTestServer(configure: { $0.maxConnections = 1 }) { server, port in
            try await withRawConnection(port: port) { first in
                _ = try await first.handshake()
                try await waitUntil { server.observer.connections == 1 }
                // The refused client sends 200 KiB the server will never read, and reads only later.
                let collector = FrameCollector()
                let channel = try await connectCollecting(port: port, collector)
                defer { channel.close(promise: nil) }
                var burst = ByteBuffer()
                burst.writePreface()
                burst.writeSettings([])
                for i in 0..<200 {
                    burst.writeHeaders(streamID: UInt32(2 * i + 1), path: unaryCall, metadata: [:])
                    burst.writeMessage(streamID: UInt32(2 * i + 1), bytes: Array(repeating: 7, count: 1_000))
                }
                try await channel.writeAndFlush(burst)
                try await Task.sleep(for: .milliseconds(300))
                try await channel.setOption(.autoRead, value: true).get()
                channel.read()
                try? await waitUntil { collector.frames.withLock { $0.contains { $0.type == .goAway } } }
                let frames = collector.frames.withLock { $0 }
                #expect(frames.contains { $0.goAway?.status == .unavailable }, "frames: \(frames.map(\.type))")
            }
        }
    }
}

/// Keeps every frame a test connection receives (MESSAGE frames without their payload).
private final class FrameCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = Frame
    let frames = Mutex<[Frame]>([])

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        if frame.type == .message { frame.payload = ByteBuffer() }
        frames.withLock { $0.append(frame) }
    }
}

/// A connection that reads nothing until its test turns `autoRead` on, then keeps every frame.
private func connectCollecting(port: Int, _ collector: FrameCollector) async throws -> any Channel {
    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelOption(.autoRead, value: false)
        .channelOption(.socketOption(.so_rcvbuf), value: 16 * 1024)
        .channelOption(.allowRemoteHalfClosure, value: true)  // a server's half-close is read, not a close
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandlers(
                    ByteToMessageHandler(FrameDecoder(maxFrameSize: 16 * 1024 * 1024, expectPreface: true)),
                    collector
                )
            }
        }
        .connect(host: "127.0.0.1", port: port)
        .get()
}
