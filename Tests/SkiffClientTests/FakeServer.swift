import NIOCore
import NIOPosix
import SkiffCore
import SkiffWire
import Synchronization

/// A frame the fake server received, with the index of the connection it came on.
struct ReceivedFrame: Sendable {
    var connection: Int
    var frame: Frame
}

/// A scripted Skiff server for client tests: it sends its preface and SETTINGS, ACKs the
/// client's SETTINGS, records every frame, reassembles requests, and hands each frame to a script.
final class FakeServer: Sendable {
    typealias Script = @Sendable (FakeConnection, Frame) -> Void

    let channel: any Channel
    let shared: Shared
    var port: Int { channel.localAddress!.port! }
    var connectionCount: Int { shared.connectionCount.load(ordering: .relaxed) }

    private init(channel: any Channel, shared: Shared) {
        self.channel = channel
        self.shared = shared
    }

    static func start(
        settings: [(SettingsID, UInt32)] = [],
        script: @escaping Script
    ) async throws -> FakeServer {
        let state = Shared()
        let pairs = settings.map { SettingsPair(id: $0.0, value: $0.1) }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let index = state.connectionCount.wrappingAdd(1, ordering: .relaxed).oldValue
                let connection = FakeConnection(index: index, channel: channel)
                state.connections.withLock { $0.append(connection) }
                let handler = FakeServerHandler(connection: connection, settings: pairs, shared: state, script: script)
                return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return FakeServer(channel: channel, shared: state)
    }

    var frames: [ReceivedFrame] { shared.received.withLock { $0 } }

    /// Waits (up to `timeout`) until the recorded frames satisfy `condition`.
    func waitFor(
        timeout: Duration = .seconds(30),
        _ condition: ([ReceivedFrame]) -> Bool
    ) async throws {
        let start = ContinuousClock.now
        while !condition(frames) {
            guard ContinuousClock.now - start < timeout else { throw TestFailure("timed out waiting for frames") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func close() async throws {
        try await channel.close()
    }

    final class Shared: Sendable {
        let received = Mutex<[ReceivedFrame]>([])
        let connectionCount = Atomic<Int>(0)
        let connections = Mutex<[FakeConnection]>([])
    }
}

struct SettingsPair: Sendable {
    var id: SettingsID
    var value: UInt32
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One accepted connection of the fake server. Only touched on its channel's event loop.
final class FakeConnection: @unchecked Sendable {
    let index: Int
    let channel: any Channel
    var paths: [UInt32: String] = [:]
    var metadata: [UInt32: Metadata] = [:]
    var messages: [UInt32: [ByteBuffer]] = [:]
    var partial: [UInt32: ByteBuffer] = [:]
    var userState: [String: Int] = [:]

    init(index: Int, channel: any Channel) {
        self.index = index
        self.channel = channel
    }

    /// Writes and flushes frames.
    func send(_ body: (inout ByteBuffer) -> Void) {
        var buffer = channel.allocator.buffer(capacity: 256)
        body(&buffer)
        channel.writeAndFlush(buffer, promise: nil)
    }

    /// Sends HEADERS, one MESSAGE per buffer, and OK TRAILERS.
    func respond(
        stream: UInt32,
        headers: Metadata = [:],
        messages: [ByteBuffer],
        status: StatusCode = .ok,
        message: String = "",
        trailers: Metadata = [:]
    ) {
        send { buffer in
            buffer.writeHeaders(streamID: stream, metadata: headers)
            for m in messages { buffer.writeMessageFrame(streamID: stream, flags: [], bytes: m) }
            buffer.writeTrailers(streamID: stream, status: status, message: message, metadata: trailers)
        }
    }
}

final class FakeServerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let connection: FakeConnection
    let settings: [SettingsPair]
    let shared: FakeServer.Shared
    let script: FakeServer.Script
    var decoder = FrameDecoder(maxFrameSize: 16 * 1024 * 1024, expectPreface: true)
    var inbound = ByteBuffer()

    init(
        connection: FakeConnection,
        settings: [SettingsPair],
        shared: FakeServer.Shared,
        script: @escaping FakeServer.Script
    ) {
        self.connection = connection
        self.settings = settings
        self.shared = shared
        self.script = script
    }

    func channelActive(context: ChannelHandlerContext) {
        connection.send { buffer in
            buffer.writePreface()
            buffer.writeSettings(settings.map { ($0.id, $0.value) })
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        inbound.writeBuffer(&bytes)
        do {
            while let frame = try decoder.decodeFrame(&inbound) {
                shared.received.withLock { $0.append(ReceivedFrame(connection: connection.index, frame: frame)) }
                track(frame)
                script(connection, frame)
            }
        } catch {
            context.close(promise: nil)
        }
    }

    private func track(_ frame: Frame) {
        switch frame.type {
        case .settings where !frame.flags.contains(.ack):
            connection.send { $0.writeSettingsAck() }
        case .headers:
            if let (path, decoded) = try? FramePayload.headers(frame) {
                connection.paths[frame.streamID] = path
                connection.metadata[frame.streamID] = decoded.metadata
                connection.messages[frame.streamID] = []
            }
        case .message:
            var payload = frame.payload
            var whole = connection.partial.removeValue(forKey: frame.streamID) ?? ByteBuffer()
            whole.writeBuffer(&payload)
            if frame.flags.contains(.more) {
                connection.partial[frame.streamID] = whole
            } else {
                connection.messages[frame.streamID, default: []].append(whole)
            }
        default:
            break
        }
    }
}

@available(*, unavailable)
extension FakeServerHandler: Sendable {}

extension Frame {
    /// Whether the client's side ends with this frame.
    var endsClientSide: Bool {
        (type == .message && flags.contains(.endStream) && !flags.contains(.more))
            || (type == .headers && flags.contains(.endStream)) || type == .halfClose
    }
}
