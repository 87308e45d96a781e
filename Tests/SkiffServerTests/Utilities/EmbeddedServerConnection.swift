import NIOCore
import NIOEmbedded
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SkiffWire

@testable import SkiffServer

/// A skiff/1 server connection on an `EmbeddedChannel`: no socket, no threads, and virtual time
/// (every timer of the connection runs on the embedded loop's clock, which only the test moves).
///
/// Only for what happens on the connection itself (handshake, timers, drain, flow control,
/// refusals): a call whose handler starts runs on a Swift task, which needs a real event loop.
final class EmbeddedServerConnection {
    let loop: EmbeddedEventLoop
    let channel: EmbeddedChannel
    private var decoder = FrameDecoder(maxFrameSize: 16 * 1024 * 1024, expectPreface: true)
    private var received = ByteBuffer()

    /// Connects a client to a fresh connection handler, which sends its preface and SETTINGS.
    init(configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configure(&configuration)
        loop = EmbeddedEventLoop()
        channel = EmbeddedChannel(loop: loop)
        let context = ConnectionContext(
            configuration: configuration,
            router: RPCRouter(services: [TestService()]),
            interceptors: [],
            logger: quietLogger,
            observer: ServerObserver()
        )
        try SkiffWireProtocol().configure(channel, context: context)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    deinit { _ = try? channel.finish() }

    /// Bytes from the client.
    func send(_ build: (inout ByteBuffer) -> Void) throws {
        var buffer = ByteBuffer()
        build(&buffer)
        try channel.writeInbound(buffer)
    }

    /// Every frame the server has written since the last call.
    func frames() throws -> [Frame] {
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) { received.writeBuffer(&bytes) }
        var frames: [Frame] = []
        while let frame = try decoder.decodeFrame(&received) { frames.append(frame) }
        received.discardReadBytes()
        return frames
    }

    /// Sends the preface and SETTINGS, reads the server's, and ACKs them both ways.
    func handshake(_ settings: [(SettingsID, UInt32)] = []) throws {
        try send {
            $0.writePreface()
            $0.writeSettings(settings)
            $0.writeSettingsAck()
        }
        let frames = try frames()
        precondition(frames.map(\.type) == [.settings, .settings], "handshake got \(frames)")
    }

    /// Moves the loop's clock, running every timer that falls due.
    func advance(by amount: TimeAmount) { loop.advanceTime(by: amount) }

    var isOpen: Bool { channel.isActive }

    /// Makes the socket look full (NIO's write buffer over its high-water mark) or drained again.
    func setSocketFull(_ full: Bool) {
        channel.isWritable = !full
        channel.pipeline.fireChannelWritabilityChanged()
        loop.run()
    }
}
