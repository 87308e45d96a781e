import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

/// Speaks the server side of the Skiff protocol on one connection.
///
/// All state lives on the channel's event loop. Frames are parsed from an accumulated buffer
/// (so a partial frame can be timed out), responses are written into one outbound buffer and
/// flushed once per read batch or loop tick.
final class ServerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let drainPingData: UInt64 = 0x534B_4946_4452_4E31  // "SKIFDRN1"

    let configuration: ServerConfiguration
    let router: RPCRouter
    let interceptors: [any ServerInterceptor]
    let logger: Logger
    let observer: ServerObserver
    let executor: EventLoopTaskExecutor?

    var context: ChannelHandlerContext!
    var decoder: FrameDecoder
    var inboundBuffer: ByteBuffer?
    var outbound: ByteBuffer
    var flushScheduled = false
    var closing = false
    var peer = "unknown"

    // Settings
    var peerSettings = ConnectionSettings.protocolDefaults
    var receivedSettings = false
    var ourSettingsAcked = false

    // Streams
    var streams: [UInt32: ServerStream] = [:]
    var highestStreamID: UInt32 = 0
    var highestAcceptedID: UInt32 = 0
    var blocked = Deque<ServerStream>()

    // Flow control
    var connectionSendWindow = Int(ConnectionSettings.protocolDefaults.initialConnectionWindow)
    var connectionRecvWindow: Int
    var connectionCreditPending = 0

    // Keepalive and rate limits
    var lastPing: NIODeadline?
    var pingStrikes = 0
    var rateWindowStart = NIODeadline.now()
    var resetsInWindow = 0
    var pingsInWindow = 0

    // Drain
    var draining = false
    var finalLastStreamID: UInt32?

    // Timers
    var prefaceTimer: Scheduled<Void>?
    var frameTimer: Scheduled<Void>?
    var idleTimer: Scheduled<Void>?
    /// Since when the connection has had no open stream (`nil` while it has one).
    var idleSince: NIODeadline?
    var graceTimer: Scheduled<Void>?

    init(
        configuration: ServerConfiguration,
        router: RPCRouter,
        interceptors: [any ServerInterceptor],
        logger: Logger,
        observer: ServerObserver,
        eventLoop: any EventLoop
    ) {
        self.configuration = configuration
        self.router = router
        self.interceptors = interceptors
        self.logger = logger
        self.observer = observer
        self.executor = configuration.handlerExecutor == .eventLoop ? EventLoopTaskExecutor(eventLoop) : nil
        // Until the client ACKs our SETTINGS, limits below the defaults are not enforced.
        self.decoder = FrameDecoder(
            maxFrameSize: max(configuration.settings.maxFrameSize, ConnectionSettings.protocolDefaults.maxFrameSize),
            expectPreface: true
        )
        self.connectionRecvWindow = Int(configuration.settings.initialConnectionWindow)
        self.outbound = ByteBuffer()
    }

    var ours: ConnectionSettings { configuration.settings }

    func effective<T: Comparable>(_ value: KeyPath<ConnectionSettings, T>) -> T {
        ourSettingsAcked
            ? ours[keyPath: value] : max(ours[keyPath: value], ConnectionSettings.protocolDefaults[keyPath: value])
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.outbound = context.channel.allocator.buffer(capacity: 4096)
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    var started = false
    func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        peer = Self.describe(context.channel.remoteAddress)
        outbound.writePreface()
        outbound.writeSettings(ours.encodedPairs)
        flushNow()
        prefaceTimer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.prefaceTimeout.nanoseconds)
        ) {
            [self] in
            logger.debug("preface timeout", metadata: ["peer": "\(peer)"])
            self.context.close(promise: nil)
        }
        observer.connectionOpened()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        for timer in [prefaceTimer, frameTimer, idleTimer, graceTimer] { timer?.cancel() }
        for stream in streams.values {
            stream.close()
            stream.task?.cancel()
        }
        observer.connectionClosed(openStreams: streams.count)
        streams.removeAll()
        blocked.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection error", metadata: ["peer": "\(peer)", "error": "\(error)"])
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        var bytes = unwrapInboundIn(data)
        if inboundBuffer == nil {
            inboundBuffer = bytes
        } else {
            inboundBuffer!.writeBuffer(&bytes)
        }
        do {
            while !closing, let frame = try decoder.decodeFrame(&inboundBuffer!) {
                try handle(frame)
            }
        } catch let error as FrameDecodingError {
            switch error {
            case .badPreface:
                goAwayAndClose(.invalidArgument, "expected the Skiff preface 89 53 4b 46 01 00 00 00")
            case .frameTooLarge(let length, let limit):
                goAwayAndClose(.resourceExhausted, "frame of \(length) bytes exceeds MAX_FRAME_SIZE \(limit)")
            }
        } catch let violation as ProtocolViolation {
            goAwayAndClose(.internal, violation.reason)
        } catch {
            goAwayAndClose(.internal, "")
        }
        guard !closing else { return }
        if inboundBuffer!.readableBytes == 0 {
            inboundBuffer = nil
            frameTimer?.cancel()
            frameTimer = nil
        } else {
            inboundBuffer!.discardReadBytes()
            if frameTimer == nil {
                frameTimer = context.eventLoop.assumeIsolated().scheduleTask(
                    in: .nanoseconds(configuration.frameTimeout.nanoseconds)
                ) { [self] in
                    goAwayAndClose(.resourceExhausted, "a frame took longer than the frame timeout to arrive")
                }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if connectionCreditPending > 0 {
            outbound.writeWindowUpdate(streamID: 0, increment: UInt32(connectionCreditPending))
            connectionRecvWindow += connectionCreditPending
            connectionCreditPending = 0
        }
        flushNow()
        context.fireChannelReadComplete()
    }

    // MARK: Frames

    func handle(_ frame: Frame) throws {
        if !receivedSettings {
            guard frame.type == .settings, !frame.flags.contains(.ack) else {
                throw ProtocolViolation("the first frame after the preface must be SETTINGS")
            }
        }
        if frame.streamID == 0 {
            switch frame.type {
            case .settings: try handleSettings(frame)
            case .ping: try handlePing(frame)
            case .windowUpdate:
                let increment = try FramePayload.windowUpdate(frame)
                connectionSendWindow += Int(increment)
                guard connectionSendWindow <= Int(Int32.max) else {
                    throw ProtocolViolation("connection window exceeds 2^31-1")
                }
                pumpBlocked()
            case .goAway:
                _ = try FramePayload.goAway(frame)
                beginDrain()
            case .headers, .message, .trailers, .rstStream, .halfClose:
                throw ProtocolViolation("\(frame.type) on stream 0")
            default:
                return  // unknown types on stream 0 are ignored
            }
            return
        }
        guard frame.streamID & 1 == 1 else { throw ProtocolViolation("frame on even stream id \(frame.streamID)") }
        guard frame.streamID < 0x8000_0000 else { throw ProtocolViolation("stream id above 2^31-1") }
        switch frame.type {
        case .headers:
            try handleHeaders(frame)
            return
        case .settings, .ping, .goAway:
            throw ProtocolViolation("\(frame.type) on stream \(frame.streamID)")
        case .trailers:
            throw ProtocolViolation("TRAILERS from a client")
        default:
            break
        }
        guard frame.type.isKnown else { throw ProtocolViolation("unknown frame type \(frame.type) on a stream") }
        guard frame.streamID <= highestStreamID else {
            throw ProtocolViolation("\(frame.type) on never-opened stream \(frame.streamID)")
        }
        switch frame.type {
        case .message: try handleMessage(frame)
        case .halfClose:
            try FramePayload.halfClose(frame)
            if let stream = streams[frame.streamID], !stream.serverClosed { try endClientSide(stream, halfClose: true) }
        case .rstStream:
            _ = try FramePayload.rstStream(frame)
            try countReset()
            if let stream = streams[frame.streamID] { cancelStream(stream) }
        case .windowUpdate:
            // Frames for ended streams are ignored, malformed or not.
            guard let stream = streams[frame.streamID], !stream.serverClosed else { return }
            let increment = try FramePayload.windowUpdate(frame)
            stream.sendWindow += Int(increment)
            guard stream.sendWindow <= Int(Int32.max) else {
                throw ProtocolViolation("stream \(stream.id) window exceeds 2^31-1")
            }
            pump(stream)
            scheduleFlush()
        default:
            return
        }
    }

    func handleSettings(_ frame: Frame) throws {
        let pairs = try FramePayload.settings(frame)
        if frame.flags.contains(.ack) {
            ourSettingsAcked = true
            decoder.maxFrameSize = ours.maxFrameSize
            return
        }
        guard !receivedSettings else { throw ProtocolViolation("a second SETTINGS frame") }
        let settings = try ConnectionSettings.decode(pairs)
        receivedSettings = true
        prefaceTimer?.cancel()
        prefaceTimer = nil
        let streamDelta = Int(settings.initialStreamWindow) - Int(peerSettings.initialStreamWindow)
        let connectionDelta = Int(settings.initialConnectionWindow) - Int(peerSettings.initialConnectionWindow)
        peerSettings = settings
        connectionSendWindow += connectionDelta
        for stream in streams.values { stream.sendWindow += streamDelta }
        outbound.writeSettingsAck()
        armIdleTimer()
        pumpBlocked()
    }

    func handlePing(_ frame: Frame) throws {
        let data = try FramePayload.ping(frame)
        if frame.flags.contains(.ack) {
            if data == Self.drainPingData, draining, finalLastStreamID == nil { sendFinalGoAway() }
            return
        }
        try countPing()
        let now = NIODeadline.now()
        let openStreams = streams.values.contains { !($0.clientClosed && $0.serverClosed) }
        if !openStreams, let last = lastPing,
            now - last < .milliseconds(Int64(ours.keepaliveMinIntervalMS))
        {
            pingStrikes += 1
            if pingStrikes >= 2 {
                goAwayAndClose(.resourceExhausted, "too_many_pings")
                return
            }
        }
        lastPing = now
        outbound.writePing(data, ack: true)
    }

    func rotateRateWindow() {
        let now = NIODeadline.now()
        if now - rateWindowStart >= .seconds(1) {
            rateWindowStart = now
            resetsInWindow = 0
            pingsInWindow = 0
        }
    }

    func countReset() throws {
        rotateRateWindow()
        resetsInWindow += 1
        if resetsInWindow > configuration.maxResetsPerSecond {
            goAwayAndClose(.resourceExhausted, "too_many_resets")
            throw ProtocolViolation("too_many_resets")
        }
    }

    func countPing() throws {
        rotateRateWindow()
        pingsInWindow += 1
        if pingsInWindow > configuration.maxPingsPerSecond {
            goAwayAndClose(.resourceExhausted, "too_many_pings")
            throw ProtocolViolation("too_many_pings")
        }
    }
}

@available(*, unavailable)
extension ServerConnectionHandler: Sendable {}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
