import NIOCore
import SkiffCore
import SkiffServer
import SkiffTesting
import SkiffWire
import Testing

/// Limits that protect the server from bad and slow clients; breaking one costs only the offender.
@Suite("Server limits")
struct ServerLimitTests {
    @Test("a client that never sends its preface is closed after the preface timeout")
    func prefaceTimeout() async throws {
        try await withTestServer(configure: { $0.prefaceTimeout = .milliseconds(200) }) { _, port in
            try await withRawConnection(port: port) { conn in
                let frames = try await conn.drainUntilClosed()
                #expect(frames.map(\.type) == [.settings])
            }
        }
    }

    @Test("a frame that trickles in slower than the frame timeout closes the connection (no slowloris)")
    func slowloris() async throws {
        try await withTestServer(configure: { $0.frameTimeout = .milliseconds(200) }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send { $0.writeFrameHeader(length: 100, type: .message, streamID: 1) }
                try await conn.send { $0.writeBytes([1, 2, 3]) }
                let frames = try await conn.drainUntilClosed()
                #expect(frames.last?.goAway?.status == .resourceExhausted)
            }
        }
    }

    @Test("an idle connection is drained after the idle timeout")
    func idleTimeout() async throws {
        try await withTestServer(configure: { $0.idleTimeout = .milliseconds(200) }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                let goAway = try await conn.next { $0.type == .goAway }
                #expect(goAway.goAway?.lastStreamID == 0x7FFF_FFFF)
                let ping = try await conn.next { $0.type == .ping }
                try await conn.send { $0.writePing(try! FramePayload.ping(ping), ack: true) }
                let final = try await conn.next { $0.type == .goAway }
                #expect(final.goAway?.lastStreamID == 0)
                #expect(try await conn.drainUntilClosed().isEmpty)
            }
        }
    }

    @Test("rapid reset over a socket: opening and resetting streams in a loop gets GOAWAY(too_many_resets)")
    func resetFlood() async throws {
        // The burst is MAX_CONCURRENT_STREAMS (100) + 1 a second: 150 unary calls opened and reset in
        // one write are all premature (none has waited 50 ms), whatever the machine's speed.
        try await withTestServer(configure: {
            $0.maxResetsPerSecond = 1
            $0.settings.maxConcurrentStreams = 100
            $0.requestTimeout = .seconds(60)
        }) { _, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    for i in 0..<150 {
                        let id = UInt32(2 * i + 1)
                        $0.writeHeaders(streamID: id, path: "/skiff.testing.v1.TestService/UnaryCall", metadata: [:])
                        $0.writeRSTStream(streamID: id, status: .cancelled)
                    }
                }
                let goAway = try await conn.next { $0.type == .goAway }
                #expect(goAway.goAway?.status == .resourceExhausted)
                #expect(goAway.goAway?.debug == "too_many_resets")
            }
        }
    }

    @Test("connections over the limit get GOAWAY(UNAVAILABLE) and are closed; the others keep working")
    func connectionLimit() async throws {
        try await withTestServer(configure: { $0.maxConnections = 2 }) { _, port in
            try await withRawConnection(port: port) { first in
                _ = try await first.handshake()
                try await withRawConnection(port: port) { second in
                    _ = try await second.handshake()
                    try await withRawConnection(port: port) { third in
                        let frames = try await third.drainUntilClosed()
                        #expect(frames.map(\.type) == [.settings, .goAway])
                        #expect(frames.last?.goAway?.status == .unavailable)
                        #expect(frames.last?.goAway?.debug.contains("connection limit") == true)
                    }
                    try await second.send {
                        $0.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/EmptyCall", metadata: [:])
                        $0.writeMessage(streamID: 1, bytes: [])
                    }
                    let trailers = try await second.next { $0.type == .trailers }
                    #expect(trailers.trailers?.status == .ok)
                }
            }
        }
    }

    @Test("a cancelled stream keeps counting against MAX_CONCURRENT_STREAMS until its handler stops")
    func cancelledStreamCounts() async throws {
        try await withTestServer(configure: { $0.settings.maxConcurrentStreams = 1 }) { server, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: "/skiff.testing.v1.TestService/FullDuplexCall", metadata: [:])
                    $0.writeRSTStream(streamID: 1, status: .cancelled)
                    $0.writePing(42, ack: false)
                }
                // The PING's ACK shows the server has read the HEADERS and the RST_STREAM.
                _ = try await conn.next { $0.type == .ping && $0.flags.contains(.ack) }
                // Once the cancelled handler has stopped, a new stream is accepted.
                try await waitUntil { server.observer.streams == 0 }
                try await conn.send {
                    $0.writeHeaders(streamID: 3, path: "/skiff.testing.v1.TestService/EmptyCall", metadata: [:])
                    $0.writeMessage(streamID: 3, bytes: [])
                }
                let frame = try await conn.next { $0.streamID == 3 && ($0.type == .trailers || $0.type == .rstStream) }
                #expect(frame.trailers?.status == .ok)
            }
        }
    }
}
