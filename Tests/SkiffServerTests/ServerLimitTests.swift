import NIOCore
import SkiffCore
import SkiffServer
import SkiffTesting
import SkiffWire
import Testing

/// Limits that protect the server from bad and slow clients; breaking one costs only the offender.
@Suite("Server limits")
struct ServerLimitTests {
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
