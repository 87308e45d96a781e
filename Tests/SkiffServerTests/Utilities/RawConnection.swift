import NIOCore
import NIOPosix
import SkiffCore
import SkiffTesting
import SkiffWire

/// A bare frame-level connection for testing the server against the contract byte by byte.
struct RawConnection {
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let inbound: AsyncQueue<Frame>

    /// Sends raw bytes built by `build`.
    func send(_ build: (inout ByteBuffer) -> Void) async throws {
        var buffer = ByteBuffer()
        build(&buffer)
        try await outbound.write(buffer)
    }

    /// Sends the preface and a SETTINGS frame, reads the server's preface+SETTINGS, and ACKs both ways.
    mutating func handshake(_ settings: [(SettingsID, UInt32)] = []) async throws -> [(UInt16, UInt32)] {
        try await send {
            $0.writePreface()
            $0.writeSettings(settings)
        }
        let first = try await next()
        precondition(first?.type == .settings, "expected SETTINGS, got \(String(describing: first))")
        try await send { $0.writeSettingsAck() }
        var serverSettings = try FramePayload.settings(first!)
        // The server's ACK of our SETTINGS.
        let ack = try await next()
        precondition(
            ack?.type == .settings && ack!.flags.contains(.ack),
            "expected SETTINGS ACK, got \(String(describing: ack))"
        )
        serverSettings.sort { $0.0 < $1.0 }
        return serverSettings
    }

    /// The next frame, or `nil` when the server closed the connection.
    mutating func next(timeout: Duration = .seconds(30)) async throws -> Frame? {
        let inbound = self.inbound
        return try await withThrowingTaskGroup(of: Frame?.self) { group in
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TestTimeout()
            }
            group.addTask { try await inbound.next() }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Reads frames until one matches, failing on close.
    mutating func next(where predicate: (Frame) -> Bool) async throws -> Frame {
        while let frame = try await next() {
            if predicate(frame) { return frame }
        }
        throw ConnectionClosed()
    }

    /// Reads until the server closes, returning every frame seen.
    mutating func drainUntilClosed() async throws -> [Frame] {
        var frames: [Frame] = []
        while let frame = try await next() { frames.append(frame) }
        return frames
    }
}

struct ConnectionClosed: Error {}

/// Opens a raw TCP connection to the server, expecting its preface first.
func withRawConnection<R: Sendable>(
    port: Int,
    _ body: (inout RawConnection) async throws -> R
) async throws -> R {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(FrameDecoder(maxFrameSize: 16 * 1024 * 1024, expectPreface: true))
                )
                return try NIOAsyncChannel<Frame, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        let queue = AsyncQueue<Frame>()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await frame in inbound { queue.push(frame) }
                    queue.finish()
                } catch {
                    queue.finish()
                }
            }
            defer { group.cancelAll() }
            var connection = RawConnection(outbound: outbound, inbound: queue)
            return try await body(&connection)
        }
    }
}

extension Frame {
    var goAway: (lastStreamID: UInt32, status: StatusCode, debug: String)? { try? FramePayload.goAway(self) }
    var trailers: (status: StatusCode, message: String, metadata: DecodedMetadata)? { try? FramePayload.trailers(self) }
    var rst: (status: StatusCode, reason: String)? { try? FramePayload.rstStream(self) }
}

extension ByteBuffer {
    /// Appends a MESSAGE frame carrying a serialized message.
    mutating func writeMessage(streamID: UInt32, bytes: [UInt8], flags: FrameFlags = .endStream) {
        writeMessageFrame(streamID: streamID, flags: flags, bytes: ByteBuffer(bytes: bytes))
    }
}
