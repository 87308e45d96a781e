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

    private var context: ChannelHandlerContext!
    private var decoder: FrameDecoder
    private var inboundBuffer: ByteBuffer?
    private var outbound: ByteBuffer
    private var flushScheduled = false
    private var closing = false
    private var peer = "unknown"

    // Settings
    private var peerSettings = ConnectionSettings.protocolDefaults
    private var receivedSettings = false
    private var ourSettingsAcked = false

    // Streams
    private var streams: [UInt32: ServerStream] = [:]
    private var highestStreamID: UInt32 = 0
    private var highestAcceptedID: UInt32 = 0
    private var blocked = Deque<ServerStream>()

    // Flow control
    private var connectionSendWindow = Int(ConnectionSettings.protocolDefaults.initialConnectionWindow)
    private var connectionRecvWindow: Int
    private var connectionCreditPending = 0

    // Keepalive and rate limits
    private var lastPing: NIODeadline?
    private var pingStrikes = 0
    private var rateWindowStart = NIODeadline.now()
    private var resetsInWindow = 0
    private var pingsInWindow = 0

    // Drain
    private var draining = false
    private var finalLastStreamID: UInt32?

    // Timers
    private var prefaceTimer: Scheduled<Void>?
    private var frameTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?
    private var graceTimer: Scheduled<Void>?

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

    private var ours: ConnectionSettings { configuration.settings }

    private func effective<T: Comparable>(_ value: KeyPath<ConnectionSettings, T>) -> T {
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

    private var started = false
    private func start(context: ChannelHandlerContext) {
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

    private func handle(_ frame: Frame) throws {
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

    private func handleSettings(_ frame: Frame) throws {
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

    private func handlePing(_ frame: Frame) throws {
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

    private func rotateRateWindow() {
        let now = NIODeadline.now()
        if now - rateWindowStart >= .seconds(1) {
            rateWindowStart = now
            resetsInWindow = 0
            pingsInWindow = 0
        }
    }

    private func countReset() throws {
        rotateRateWindow()
        resetsInWindow += 1
        if resetsInWindow > configuration.maxResetsPerSecond {
            goAwayAndClose(.resourceExhausted, "too_many_resets")
            throw ProtocolViolation("too_many_resets")
        }
    }

    private func countPing() throws {
        rotateRateWindow()
        pingsInWindow += 1
        if pingsInWindow > configuration.maxPingsPerSecond {
            goAwayAndClose(.resourceExhausted, "too_many_pings")
            throw ProtocolViolation("too_many_pings")
        }
    }

    private func handleHeaders(_ frame: Frame) throws {
        let id = frame.streamID
        guard id > highestStreamID else { throw ProtocolViolation("HEADERS reuse stream id \(id)") }
        let (path, decoded) = try FramePayload.headers(frame)
        highestStreamID = id
        // Refusals: nothing processed, the client may retry.
        if let last = finalLastStreamID, id > last {
            outbound.writeRSTStream(streamID: id, status: .unavailable, reason: "server is draining", refused: true)
            return
        }
        if let limit = effectiveStreamLimit, streams.count >= limit {
            outbound.writeRSTStream(
                streamID: id,
                status: .unavailable,
                reason: "MAX_CONCURRENT_STREAMS \(limit) reached",
                refused: true
            )
            return
        }
        highestAcceptedID = id
        pingStrikes = 0
        idleTimer?.cancel()
        idleTimer = nil

        func reject(_ status: StatusCode, _ message: String) {
            outbound.writeTrailers(streamID: id, status: status, message: message, metadata: [:])
            observer.callRejected(path: path, status: status)
        }
        if decoded.encodedSize > Int(effective(\.maxHeaderListSize)) {
            return reject(
                .resourceExhausted,
                "request metadata of \(decoded.encodedSize) bytes exceeds MAX_HEADER_LIST_SIZE \(effective(\.maxHeaderListSize))"
            )
        }
        if let invalid = decoded.invalidEntry { return reject(.internal, invalid) }
        let metadata = decoded.metadata
        guard let handler = router.handler(forPath: path) else {
            return reject(.unimplemented, "Method \(path) is not implemented by this server.")
        }
        if let encoding = metadata.first("grpc-encoding"), encoding != "identity" {
            return reject(.unimplemented, "grpc-encoding \"\(encoding)\" is not supported; use identity.")
        }
        var deadline: ContinuousClock.Instant?
        var timeout: Duration?
        if let text = metadata.first("grpc-timeout") {
            guard let parsed = GRPCTimeout.parse(text) else {
                return reject(.internal, "grpc-timeout \"\(text)\" is malformed.")
            }
            timeout = parsed
            deadline = ContinuousClock.now.advanced(by: parsed)
        }

        let stream = ServerStream(
            id: id,
            eventLoop: context.eventLoop,
            connection: NIOLoopBound(self, eventLoop: context.eventLoop),
            handler: handler,
            highWater: configuration.streamWriteBufferHighWater,
            peerMaxMessageSize: Int(peerSettings.maxMessageSize),
            recvWindow: Int(ours.initialStreamWindow),
            sendWindow: Int(peerSettings.initialStreamWindow)
        )
        stream.context = ServerContext(
            descriptor: handler.descriptor,
            metadata: metadata,
            peer: peer,
            deadline: deadline,
            streamID: id,
            sink: stream
        )
        streams[id] = stream
        observer.streamOpened()
        if let timeout {
            stream.deadlineTimer = context.eventLoop.assumeIsolated().scheduleTask(
                in: .nanoseconds(timeout.nanoseconds)
            ) {
                [self] in
                deadlinePassed(stream)
            }
        }
        if !handler.descriptor.kind.hasSingleRequest { startHandler(stream) }
        if frame.flags.contains(.endStream) { try endClientSide(stream, halfClose: false) }
    }

    private var effectiveStreamLimit: Int? {
        guard let limit = ours.maxConcurrentStreams else { return nil }
        return ourSettingsAcked ? Int(limit) : nil
    }

    private func handleMessage(_ frame: Frame) throws {
        let length = frame.payload.readableBytes
        connectionRecvWindow -= length
        guard connectionRecvWindow >= 0 else { throw ProtocolViolation("connection window overrun") }
        connectionCreditPending += length
        if connectionCreditPending >= Int(ours.initialConnectionWindow) / 4 {
            outbound.writeWindowUpdate(streamID: 0, increment: UInt32(connectionCreditPending))
            connectionRecvWindow += connectionCreditPending
            connectionCreditPending = 0
        }
        guard let stream = streams[frame.streamID], !stream.serverClosed else { return }
        guard !stream.clientClosed else {
            return failStream(stream, .internal, "MESSAGE after the client's side of the stream ended")
        }
        stream.recvWindow -= length
        guard stream.recvWindow >= 0 else { throw ProtocolViolation("stream \(stream.id) window overrun") }
        if stream.partial == nil {
            if frame.flags.contains(.compressed) {
                return failStream(stream, .internal, "COMPRESSED message without a grpc-encoding")
            }
            stream.partial = frame.payload
        } else {
            var payload = frame.payload
            stream.partial!.writeBuffer(&payload)
        }
        let size = stream.partial!.readableBytes
        guard size <= Int(effective(\.maxMessageSize)) else {
            stream.partial = nil
            return failStream(
                stream,
                .resourceExhausted,
                "request message exceeds MAX_MESSAGE_SIZE of \(effective(\.maxMessageSize)) bytes"
            )
        }
        if frame.flags.contains(.more) { return }
        let message = stream.partial!
        stream.partial = nil
        stream.messagesReceived += 1
        if stream.handler.descriptor.kind.hasSingleRequest && stream.messagesReceived > 1 {
            return failStream(stream, .internal, "The method expects exactly one request message; more were sent.")
        }
        stream.inbound.push(message)
        if frame.flags.contains(.endStream) { try endClientSide(stream, halfClose: false) }
    }

    private func endClientSide(_ stream: ServerStream, halfClose: Bool) throws {
        guard !stream.clientClosed else {
            return failStream(stream, .internal, "HALF_CLOSE after the client's side of the stream ended")
        }
        if stream.partial != nil {
            stream.partial = nil
            return failStream(stream, .internal, "HALF_CLOSE in the middle of a fragmented message")
        }
        stream.clientClosed = true
        stream.inbound.finish()
        if stream.handler.descriptor.kind.hasSingleRequest {
            guard stream.messagesReceived == 1 else {
                return failStream(
                    stream,
                    .internal,
                    "The method expects exactly one request message; \(stream.messagesReceived) were sent."
                )
            }
            startHandler(stream)
        }
    }

    // MARK: Handlers

    private func startHandler(_ stream: ServerStream) {
        guard !stream.handlerStarted else { return }
        stream.handlerStarted = true
        stream.handlerRunning = true
        let context = stream.context!
        let interceptors = self.interceptors
        let handler = stream.handler
        let loopBound = stream.connection
        let eventLoop = stream.eventLoop
        let body: @Sendable () async -> Void = {
            let hidden = await handler.execute(call: stream, context: context, interceptors: interceptors)
            if eventLoop.inEventLoop {
                loopBound.value.handlerFinished(stream, hidden: hidden)
            } else {
                eventLoop.execute { loopBound.value.handlerFinished(stream, hidden: hidden) }
            }
        }
        // One unstructured task per call: the connection handler lives on the event loop and
        // cannot own a task group; the task is cancelled on RST_STREAM, deadline and close.
        if let executor {
            stream.task = Task(executorPreference: executor, operation: body)
        } else {
            stream.task = Task(operation: body)
        }
    }

    func handlerFinished(_ stream: ServerStream, hidden: (any Error)?) {
        stream.handlerRunning = false
        stream.task = nil
        if let hidden {
            logger.error(
                "handler failed",
                metadata: [
                    "method": "\(stream.handler.descriptor.path)", "stream": "\(stream.id)", "error": "\(hidden)",
                ]
            )
        }
        if !stream.serverClosed {
            // The handler ended without TRAILERS reaching the queue (cannot normally happen).
            finish(stream, .internal, "The handler ended without a status.", [:])
        }
        retireIfDone(stream)
    }

    private func retireIfDone(_ stream: ServerStream) {
        guard stream.serverClosed, !stream.handlerRunning, stream.outbound.isEmpty else { return }
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        stream.close()
        let status = stream.finalStatus ?? .cancelled
        let duration = ContinuousClock.now - stream.startTime
        observer.callFinished(path: stream.handler.descriptor.path, status: status, duration: duration)
        logger.debug(
            "call finished",
            metadata: [
                "method": "\(stream.handler.descriptor.path)", "stream": "\(stream.id)", "peer": "\(peer)",
                "status": "\(status)", "duration": "\(duration)",
            ]
        )
        if streams.isEmpty {
            armIdleTimer()
            if finalLastStreamID != nil { closeNow() }
        }
    }

    private func deadlinePassed(_ stream: ServerStream) {
        stream.deadlineTimer = nil
        guard !stream.serverClosed else { return }
        failStream(stream, .deadlineExceeded, "The deadline passed before the call finished.")
        scheduleFlush()
    }

    /// Ends a stream from the server side at once with an error: queued responses are dropped.
    private func failStream(_ stream: ServerStream, _ status: StatusCode, _ message: String) {
        guard !stream.serverClosed else { return }
        for case .message(let bytes) in stream.outbound { stream.didWrite(bytes.readableBytes) }
        stream.outbound.removeAll()
        stream.outbound.append(.trailers(status, message, [:]))
        stream.task?.cancel()
        pump(stream)
    }

    private func cancelStream(_ stream: ServerStream) {
        stream.clientClosed = true
        if !stream.serverClosed {
            stream.serverClosed = true
            stream.finalStatus = .cancelled
            stream.outbound.removeAll()
        }
        stream.close()
        stream.task?.cancel()
        retireIfDone(stream)
    }

    func returnStreamCredit(_ stream: ServerStream, _ credit: Int) {
        guard streams[stream.id] === stream, !stream.clientClosed, !stream.serverClosed else { return }
        stream.recvWindow += credit
        outbound.writeWindowUpdate(streamID: stream.id, increment: UInt32(credit))
        scheduleFlush()
    }

    // MARK: Responses

    func enqueue(_ stream: ServerStream, _ item: ServerStream.Outbound, flush: Bool) {
        guard !stream.serverClosed, streams[stream.id] === stream else {
            if case .message(let bytes) = item { stream.didWrite(bytes.readableBytes) }
            return
        }
        stream.outbound.append(item)
        if !stream.isBlocked { pump(stream) }
        if flush { scheduleFlush() }
    }

    func finish(_ stream: ServerStream, _ status: StatusCode, _ message: String, _ metadata: Metadata) {
        enqueue(stream, .trailers(status, message, metadata), flush: true)
    }

    /// Writes what the windows allow of a stream's queued responses.
    private func pump(_ stream: ServerStream) {
        while let item = stream.outbound.first {
            switch item {
            case .trailers(let status, let message, let extra):
                var metadata = Metadata()
                if !stream.headersWritten {
                    metadata.add(contentsOf: stream.takeInitialMetadata())  // trailers-only
                }
                metadata.add(contentsOf: stream.takeTrailingMetadata())
                metadata.add(contentsOf: extra)
                if let problem = metadata.validationFailure() {
                    logger.error("invalid response metadata", metadata: ["problem": "\(problem)"])
                    outbound.writeTrailers(
                        streamID: stream.id,
                        status: .internal,
                        message: "Internal server error.",
                        metadata: [:]
                    )
                } else {
                    outbound.writeTrailers(streamID: stream.id, status: status, message: message, metadata: metadata)
                }
                stream.outbound.removeFirst()
                stream.outbound.removeAll()
                stream.serverClosed = true
                stream.clientClosed = true
                stream.finalStatus = status
                stream.deadlineTimer?.cancel()
                stream.deadlineTimer = nil
                stream.close()
                retireIfDone(stream)
                return
            case .message(var bytes):
                let window = min(stream.sendWindow, connectionSendWindow)
                let remaining = bytes.readableBytes
                if remaining > 0 && window <= 0 {
                    markBlocked(stream)
                    return
                }
                writeHeadersIfNeeded(stream)
                let chunk = min(remaining, window, Int(peerSettings.maxFrameSize))
                let slice = bytes.readSlice(length: chunk)!
                let last = bytes.readableBytes == 0
                outbound.writeMessageFrame(streamID: stream.id, flags: last ? [] : .more, bytes: slice)
                stream.sendWindow -= chunk
                connectionSendWindow -= chunk
                stream.didWrite(chunk)
                if last {
                    stream.outbound.removeFirst()
                } else {
                    stream.outbound[stream.outbound.startIndex] = .message(bytes)
                }
            }
        }
    }

    private func writeHeadersIfNeeded(_ stream: ServerStream) {
        guard !stream.headersWritten else { return }
        stream.headersWritten = true
        let metadata = stream.takeInitialMetadata()
        if metadata.validationFailure() != nil {
            outbound.writeHeaders(streamID: stream.id, metadata: [:])
        } else {
            outbound.writeHeaders(streamID: stream.id, metadata: metadata)
        }
    }

    private func markBlocked(_ stream: ServerStream) {
        guard !stream.isBlocked else { return }
        stream.isBlocked = true
        blocked.append(stream)
    }

    private func pumpBlocked() {
        var rounds = blocked.count
        while rounds > 0, connectionSendWindow > 0, let stream = blocked.popFirst() {
            rounds -= 1
            stream.isBlocked = false
            if streams[stream.id] === stream { pump(stream) }
        }
        scheduleFlush()
    }

    // MARK: Writing

    private func scheduleFlush() {
        guard !flushScheduled, !closing else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushScheduled = false
            flushNow()
        }
    }

    private func flushNow() {
        guard outbound.readableBytes > 0, !closing || context.channel.isActive else { return }
        let bytes = outbound
        outbound = context.channel.allocator.buffer(capacity: 4096)
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Connection life

    private func armIdleTimer() {
        guard streams.isEmpty, idleTimer == nil, !closing else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.idleTimeout.nanoseconds)
        ) {
            [self] in
            idleTimer = nil
            if streams.isEmpty { beginDrain() }
        }
    }

    /// Starts a graceful drain: GOAWAY(2^31-1), PING, then on its ACK the final GOAWAY.
    func beginDrain() {
        guard !draining, !closing else { return }
        draining = true
        outbound.writeGoAway(lastStreamID: 0x7FFF_FFFF, status: .ok, debug: "server draining")
        outbound.writePing(Self.drainPingData, ack: false)
        flushNow()
        graceTimer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.drainGracePeriod.nanoseconds)
        ) {
            [self] in
            graceExpired()
        }
    }

    private func sendFinalGoAway() {
        finalLastStreamID = highestAcceptedID
        outbound.writeGoAway(lastStreamID: highestAcceptedID, status: .ok, debug: "server draining")
        flushNow()
        if streams.isEmpty { closeNow() }
    }

    private func graceExpired() {
        if finalLastStreamID == nil {
            finalLastStreamID = highestAcceptedID
            outbound.writeGoAway(lastStreamID: highestAcceptedID, status: .ok, debug: "server draining")
        }
        for stream in streams.values where !stream.serverClosed {
            outbound.writeRSTStream(streamID: stream.id, status: .unavailable, reason: "server shut down")
            stream.serverClosed = true
            stream.finalStatus = .unavailable
            stream.close()
            stream.task?.cancel()
        }
        closeNow()
    }

    private func goAwayAndClose(_ status: StatusCode, _ debug: String) {
        guard !closing else { return }
        logger.debug("closing connection", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(debug)"])
        outbound.writeGoAway(lastStreamID: highestAcceptedID, status: status, debug: debug)
        closeNow()
    }

    private func closeNow() {
        guard !closing else { return }
        flushNow()
        closing = true
        for stream in streams.values { stream.task?.cancel() }
        context.close(promise: nil)
    }

    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return address.pathname ?? "unix"
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
