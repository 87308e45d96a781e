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
final class ServerConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let configuration: ServerConfiguration
    let router: RPCRouter
    let logger: Logger
    let observer: ServerObserver
    let executor: (any TaskExecutor)?
    /// The call lifecycle every protocol shares: handler tasks, counting, logging.
    let runner: CallRunner
    let eventLoop: any EventLoop
    /// What this connection may hold of responses its client has not read (shared with its streams).
    let budget: ResponseBudget

    /// Set from `handlerAdded` to `handlerRemoved` (cleared then: the context refers back to the
    /// handler, and keeping it would keep both alive after the connection closed).
    var context: ChannelHandlerContext?
    var decoder: FrameDecoder
    var inboundBuffer: ByteBuffer?
    var outbound: ByteBuffer
    var flushScheduled = false
    var closing = false
    var peer = "unknown"
    /// The socket stopped taking bytes (NIO's write buffer is above its high-water mark): no
    /// response bytes move to it, no handler starts and nothing more is read until it drains.
    var socketBlocked = false
    /// A read was held back while the socket was blocked.
    var readPending = false
    /// MESSAGE bytes in `outbound` not yet handed to the socket (released from the budget then).
    var unflushedMessageBytes = 0
    /// Response bytes of streams waiting only for their own window, held outside the budget
    /// (at most ``ServerConfiguration/maxWindowHeldResponseBytes``).
    var heldResponseBytes = 0
    /// Since when the socket has been full (reads, the frame timer and request timers pause
    /// meanwhile: the client is not sending what it cannot, the server is not reading).
    var socketBlockedSince: NIODeadline?
    /// Closes the connection when the socket stays full longer than the send-stall timeout.
    var stallTimer: Scheduled<Void>?
    /// A partial frame's timer was stopped while reads were paused.
    var frameTimerPaused = false
    /// When the partial frame in `inboundBuffer` must be complete (moved on by paused time).
    var frameDue: NIODeadline?
    /// Closes a connection whose output was shut after its last GOAWAY, if its client does not.
    var lingerTimer: Scheduled<Void>?

    // The connection's state machines (SkiffWire): values with no I/O, fed the event loop's time.
    var settings: SettingsExchange
    var connectionSendWindow = OutboundWindow(size: Int(ConnectionSettings.protocolDefaults.initialConnectionWindow))
    var connectionRecvWindow: InboundWindow
    var keepalive: KeepalivePolicy
    /// The rapid-reset defence.
    var resets: ResetRateLimiter
    var drain = ConnectionDrain()
    /// When each stream's request is due.
    var requestTimeouts: RequestTimeouts

    // Streams
    var streams: [UInt32: ServerStream] = [:]
    var highestStreamID: UInt32 = 0
    var blocked = Deque<ServerStream>()
    /// Bytes of incomplete request messages (fragments waiting for the rest) over all streams.
    var partialRequestBytes = 0

    /// Fired when the drain begins, so that calls that never end by themselves end promptly.
    let drainSignal = DrainSignal()

    // Timers
    var prefaceTimer: Scheduled<Void>?
    var frameTimer: Scheduled<Void>?
    var idleTimer: Scheduled<Void>?
    /// Since when the connection has had no open stream (`nil` while it has one).
    var idleSince: NIODeadline?
    var graceTimer: Scheduled<Void>?
    /// Fires when the earliest request of a stream still waiting for its request is due.
    var requestTimer: Scheduled<Void>?
    /// Streams whose handler has started and that are not yet retired: the connection is idle
    /// while there are none (streams still waiting for their request do not count).
    var runningStreams = 0

    init(context: ConnectionContext, eventLoop: any EventLoop) {
        let configuration = context.configuration
        self.configuration = configuration
        self.router = context.router
        self.logger = context.logger
        self.observer = context.observer
        self.runner = context.runner
        self.executor = context.handlerExecutor(for: eventLoop)
        self.eventLoop = eventLoop
        self.budget = ResponseBudget(limit: configuration.maxBufferedResponseBytes, observer: observer)
        self.settings = SettingsExchange(local: configuration.settings)
        self.keepalive = KeepalivePolicy(
            minInterval: .milliseconds(Int64(configuration.settings.keepaliveMinIntervalMS)),
            maxPerSecond: configuration.maxPingsPerSecond
        )
        self.resets = ResetRateLimiter(
            burst: Self.resetBurst(configuration),
            perSecond: configuration.maxResetsPerSecond,
            now: eventLoop.now
        )
        self.requestTimeouts = RequestTimeouts(timeout: TimeAmount(configuration.requestTimeout))
        observer.connectionHandlerCreated()
        // Until the client ACKs our SETTINGS, limits below the defaults are not enforced.
        self.decoder = FrameDecoder(
            maxFrameSize: max(configuration.settings.maxFrameSize, ConnectionSettings.protocolDefaults.maxFrameSize),
            expectPreface: true
        )
        self.connectionRecvWindow = InboundWindow(size: Int(configuration.settings.initialConnectionWindow))
        self.outbound = ByteBuffer()
    }

    deinit { observer.connectionHandlerFreed() }

    var ours: ConnectionSettings { settings.local }
    var peerSettings: ConnectionSettings { settings.remote }

    /// The event loop's time: virtual on an `EmbeddedEventLoop`, so every timeout is testable
    /// without waiting.
    var now: NIODeadline { eventLoop.now }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.outbound = context.channel.allocator.buffer(capacity: 4096)
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closing = true
        shutDownStreams()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    var started = false
    var shutDown = false
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
            self.context?.close(promise: nil)
        }
        observer.connectionOpened()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        shutDownStreams()
        context.fireChannelInactive()
    }

    /// Ends everything the connection holds: timers, streams, their queued responses and
    /// waiting writers (memory is returned when the connection ends). Runs once.
    func shutDownStreams() {
        guard !shutDown else { return }
        shutDown = true
        for timer in [prefaceTimer, frameTimer, idleTimer, graceTimer, requestTimer, stallTimer, lingerTimer] {
            timer?.cancel()
        }
        stallTimer = nil
        lingerTimer = nil
        prefaceTimer = nil
        frameTimer = nil
        idleTimer = nil
        graceTimer = nil
        requestTimer = nil
        for stream in streams.values {
            stream.outbound.removeAll()
            stream.heldBytes = 0  // given back below, all at once
            stream.context = nil  // a stream whose handler never started holds it, and it the stream
            stream.close()
            stream.task?.cancel()
        }
        if started { observer.connectionClosed(openStreams: streams.count) }
        streams.removeAll()
        blocked.removeAll()
        budget.close()
        observer.responseBytesQueued(-heldResponseBytes)
        heldResponseBytes = 0
        unflushedMessageBytes = 0
        partialRequestBytes = 0
        inboundBuffer = nil
        outbound = ByteBuffer()
    }

    // MARK: Backpressure

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        updateSocketBlocked(!context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    /// Follows the socket's writability. Resuming is deferred to the next loop tick: this may be
    /// called from inside a flush.
    func updateSocketBlocked(_ blocked: Bool) {
        guard blocked != socketBlocked, !closing else { return }
        socketBlocked = blocked
        budget.setSocketBlocked(blocked)
        if blocked {
            pauseClocks()
            return
        }
        resumeClocks()
        eventLoop.assumeIsolated().execute { [self] in
            guard !closing, !socketBlocked else { return }
            pumpBlocked()
            if readPending, let context {
                readPending = false
                context.read()
            }
        }
    }

    /// The socket is full: the connection is not read from, so the timers that wait for the
    /// client's bytes stop; and a client that never reads again is given the send-stall timeout.
    private func pauseClocks() {
        if socketBlockedSince == nil { socketBlockedSince = now }
        if let frameTimer {
            frameTimer.cancel()
            self.frameTimer = nil
            frameTimerPaused = true
        }
        stallTimer?.cancel()
        stallTimer = eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.sendStallTimeout.nanoseconds)
        ) { [self] in
            stallTimer = nil
            logger.debug(
                "closing connection: its client has not read for the send-stall timeout",
                metadata: ["peer": "\(peer)"]
            )
            closing = true
            for stream in streams.values { stream.task?.cancel() }
            context?.close(promise: nil)
        }
    }

    /// The socket drains again: the paused time is not counted against the client.
    private func resumeClocks() {
        stallTimer?.cancel()
        stallTimer = nil
        guard let since = socketBlockedSince else { return }
        socketBlockedSince = nil
        let paused = now - since
        requestTimeouts.postpone(by: paused)
        frameDue = frameDue.map { $0 + paused }
        if let earliest = requestTimeouts.earliest {
            requestTimer?.cancel()
            scheduleRequestTimer(at: earliest)
        }
        if frameTimerPaused {
            frameTimerPaused = false
            if inboundBuffer != nil { armFrameTimer() }
        }
    }

    func armFrameTimer() {
        guard frameTimer == nil else { return }
        let due = frameDue ?? now + TimeAmount(configuration.frameTimeout)
        frameDue = due
        frameTimer = eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            goAwayAndClose(.resourceExhausted, "a frame took longer than the frame timeout to arrive")
        }
    }

    /// Reads are held back while the socket is blocked, so a client that does not read what it
    /// asked for cannot make the server queue more (PING ACKs, WINDOW_UPDATEs, new calls). A
    /// closing connection reads (and drops) what still comes, so that its last GOAWAY is not
    /// lost to a reset.
    func read(context: ChannelHandlerContext) {
        if socketBlocked && !closing {
            readPending = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The server's graceful shutdown reaches every connection as this event, whatever its protocol.
        if event is ChannelShouldQuiesceEvent { return beginDrain() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug(
            "connection error",
            metadata: ["peer": "\(peer)", "error": "\(LogText.bounded(error))"]
        )
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
            frameDue = nil
            frameTimerPaused = false
        } else {
            inboundBuffer!.discardReadBytes()
            if socketBlocked {
                frameTimerPaused = true  // armed when reads resume
            } else {
                armFrameTimer()
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let increment = connectionRecvWindow.takeOwed() {
            outbound.writeWindowUpdate(streamID: 0, increment: increment)
        }
        flushNow()
        context.fireChannelReadComplete()
    }

    // MARK: Frames

    func handle(_ frame: Frame) throws {
        if !settings.receivedRemote {
            guard frame.type == .settings, !frame.flags.contains(.ack) else {
                throw ProtocolViolation("the first frame after the preface must be SETTINGS")
            }
        }
        if frame.streamID == 0 {
            switch frame.type {
            case .settings: try handleSettings(frame)
            case .ping: try handlePing(frame)
            case .windowUpdate:
                try connectionSendWindow.grant(FramePayload.windowUpdate(frame))
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
            if let stream = streams[frame.streamID], !stream.state.isClosed {
                try endClientSide(stream, halfClose: true)
            }
        case .rstStream:
            _ = try FramePayload.rstStream(frame)
            let stream = streams[frame.streamID]
            try countReset(of: stream)
            if let stream { cancelStream(stream) }
        case .windowUpdate:
            // Frames for ended streams are ignored, malformed or not.
            guard let stream = streams[frame.streamID], !stream.state.isClosed else { return }
            try stream.sendWindow.grant(FramePayload.windowUpdate(frame))
            // Queued responses that waited for this window go now (or wait for the connection's).
            if stream.isBlocked && !stream.inBlockedList { stream.isBlocked = false }
            pump(stream)
            scheduleFlush()
        default:
            return
        }
    }

    func handleSettings(_ frame: Frame) throws {
        switch try settings.receive(frame) {
        case .localAcked:
            decoder.maxFrameSize = ours.maxFrameSize
        case .remote(let streamDelta, let connectionDelta):
            prefaceTimer?.cancel()
            prefaceTimer = nil
            connectionSendWindow.adjust(by: connectionDelta)
            for stream in streams.values { stream.sendWindow.adjust(by: streamDelta) }
            outbound.writeSettingsAck()
            armIdleTimer()
            pumpBlocked()
        }
    }

    func handlePing(_ frame: Frame) throws {
        let data = try FramePayload.ping(frame)
        if frame.flags.contains(.ack) {
            if let last = drain.pingAckReceived(data) { sendFinalGoAway(lastStreamID: last) }
            return
        }
        // Every PING is answered, also the one that ends the connection.
        outbound.writePing(data, ack: true)
        if keepalive.pingReceived(at: now, streamsOpen: !streams.isEmpty) == .answerAndClose {
            goAwayAndClose(.resourceExhausted, "too_many_pings")
        }
    }

    /// The most premature resets a connection may send at once: enough to cancel every stream it
    /// may have open, plus a second's worth.
    static func resetBurst(_ configuration: ServerConfiguration) -> Int {
        Int(configuration.settings.maxConcurrentStreams ?? 1_000) + configuration.maxResetsPerSecond
    }

    /// How long a stream must have been open, or whether its response must have started, for
    /// the client to cancel it without cost.
    static let prematureResetAge: TimeAmount = .milliseconds(50)

    /// The rapid-reset defence. A reset costs a token when it ends a stream that had barely begun:
    /// no response yet, and under ``prematureResetAge`` since its handler started (or, before
    /// that, since its HEADERS): the work a rapid reset wastes. Resets of streams that have already
    /// ended cost nothing. Tokens come back at `maxResetsPerSecond`, up to ``resetBurst(_:)``. A
    /// client cancelling what it legitimately opened never runs out; one that opens and resets
    /// streams in a loop does, and gets GOAWAY(RESOURCE_EXHAUSTED, too_many_resets).
    func countReset(of stream: ServerStream?) throws {
        guard let stream, !stream.state.isClosed, !stream.headersWritten,
            now - (stream.handlerStartTime ?? stream.startTime) < Self.prematureResetAge
        else { return }
        guard resets.prematureReset(at: now) else {
            goAwayAndClose(.resourceExhausted, "too_many_resets")
            throw ProtocolViolation("too_many_resets")
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
