import DequeModule
import NIOCore
import SkiffCore
import SkiffWire
import Synchronization

/// The client side of one Skiff connection, on its event loop.
///
/// It owns the connection's state: the handshake, the stream table, both directions of flow
/// control, and one outbound buffer that every frame is written into and that is flushed once
/// per read batch or loop tick. Inbound bytes are split into frames with
/// `FrameDecoder.decodeFrame(_:)` straight from the read buffers, so message payloads are slices
/// of them, not copies.
///
/// Everything here runs on the channel's event loop: pipeline events, and calls from
/// ``ClientStream`` and ``ConnectionManager``, which live on the same loop.
final class ClientConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let manager: ConnectionManager
    let loop: any EventLoop
    let configuration: ClientConfiguration
    /// Our SETTINGS and the server's (protocol defaults until they arrive).
    var settings: SettingsExchange
    var local: ConnectionSettings { settings.local }
    var remote: ConnectionSettings { settings.remote }
    /// Connecting, active, taking new streams or not, closing, closed.
    var state = ClientConnectionState()
    var context: ChannelHandlerContext?
    let readyPromise: EventLoopPromise<Void>

    var decoder: FrameDecoder
    var inbound = ByteBuffer()
    var outbound = ByteBuffer()
    var flushScheduled = false
    var inReadBatch = false
    var needsFlush = false
    var hasUnflushedWrites = false

    var streams: [UInt32: ClientStream] = [:]
    var waiting: Deque<ClientStream> = []
    var nextStreamID: UInt32 = 1
    var highestOpened: UInt32 = 0
    var connSendWindow = OutboundWindow(size: Int(ConnectionSettings.protocolDefaults.initialConnectionWindow))
    var connRecvWindow: InboundWindow
    var connBlocked: Deque<ClientStream> = []
    /// Inbound limits in force: the defaults until the server ACKs our SETTINGS, ours after.
    var maxMessageSize: Int { settings.enforcedMaxMessageSize }
    var maxHeaderListSize: Int { settings.enforcedMaxHeaderListSize }

    /// Ends an attempt whose server has not sent its SETTINGS within the connect timeout.
    private var settingsTimer: Scheduled<Void>?
    private var keepaliveTimer: Scheduled<Void>?
    private var pingTimeoutTimer: Scheduled<Void>?
    private let pingData: UInt64 = 0x534B_4946_4B41_4C56

    /// Handlers alive now, for leak tests.
    static let live = Atomic<Int>(0)

    deinit { Self.live.wrappingSubtract(1, ordering: .relaxed) }

    init(manager: ConnectionManager) {
        Self.live.wrappingAdd(1, ordering: .relaxed)
        self.manager = manager
        self.loop = manager.loop
        self.configuration = manager.configuration
        let local = manager.configuration.settings
        self.settings = SettingsExchange(local: local)
        self.readyPromise = manager.loop.makePromise()
        let defaults = ConnectionSettings.protocolDefaults
        self.decoder = FrameDecoder(maxFrameSize: max(local.maxFrameSize, defaults.maxFrameSize), expectPreface: true)
        self.connRecvWindow = InboundWindow(size: Int(local.initialConnectionWindow))
    }

    // MARK: Pipeline events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        outbound = context.channel.allocator.buffer(capacity: 16 * 1024)
        // TCP, TLS and the server's SETTINGS together take at most the connect timeout: calls wait
        // for the SETTINGS before they are sent, so a server that never sends them must not hold
        // them.
        let timeout = configuration.connectTimeout
        settingsTimer = loop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            settingsTimer = nil
            guard !state.everReady else { return }
            shutdown(
                RPCError(
                    code: .unavailable,
                    message: "The server did not complete the connection (its SETTINGS) within \(timeout)."
                )
            )
            self.context?.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        shutdown(RPCError(code: .unavailable, message: "The connection was closed."))
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        guard state.connected() else {
            context.close(promise: nil)  // closed while connecting
            return
        }
        outbound.writePreface()
        outbound.writeSettings(local.encodedPairs)
        // Queued calls open once the server's SETTINGS arrive (see ``ClientConnectionState``).
        flushNow()
        closeIfIdle()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        shutdown(RPCError(code: .unavailable, message: "The connection was closed."))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        shutdown(RPCError(code: .unavailable, message: "The connection failed: \(error)"))
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state.isActive else { return }
        var buffer = unwrapInboundIn(data)
        if inbound.readableBytes == 0 {
            inbound = buffer
        } else {
            inbound.writeBuffer(&buffer)
        }
        inReadBatch = true
        do {
            while state.isActive, let frame = try decoder.decodeFrame(&inbound) {
                try process(frame)
            }
        } catch FrameDecodingError.frameTooLarge(let length, let limit) {
            connectionError(.resourceExhausted, "frame of \(length) bytes exceeds MAX_FRAME_SIZE \(limit)")
        } catch FrameDecodingError.badPreface {
            connectionError(.internal, "the server did not send the Skiff preface")
        } catch let violation as ProtocolViolation {
            connectionError(.internal, violation.reason)
        } catch {
            connectionError(.internal, "\(error)")
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inReadBatch = false
        if needsFlush { flushNow() }
    }

    // MARK: Frames

    private func process(_ frame: Frame) throws(ProtocolViolation) {
        if frame.streamID == 0 {
            switch frame.type {
            case .settings: try receiveSettings(frame)
            case .ping:
                let data = try FramePayload.ping(frame)
                if frame.flags.contains(.ack) {
                    if data == pingData {
                        pingTimeoutTimer?.cancel()
                        pingTimeoutTimer = nil
                    }
                } else {
                    outbound.writePing(data, ack: true)
                    scheduleFlush()
                }
            case .goAway:
                let (last, status, debug) = try FramePayload.goAway(frame)
                receiveGoAway(lastStreamID: last, status: status, debug: debug)
            case .windowUpdate:
                do { try connSendWindow.grant(FramePayload.windowUpdate(frame)) } catch {
                    throw ProtocolViolation("connection send window exceeds 2^31-1")
                }
                resumeBlockedStreams()
            case .headers, .message, .trailers, .rstStream, .halfClose:
                throw ProtocolViolation("\(frame.type) on stream 0")
            default:
                break  // unknown frame types on stream 0 are ignored
            }
            return
        }
        guard frame.streamID & 1 == 1 else { throw ProtocolViolation("frame for even stream \(frame.streamID)") }
        guard frame.streamID <= highestOpened else {
            throw ProtocolViolation("frame for stream \(frame.streamID), which was never opened")
        }
        switch frame.type {
        case .settings, .ping, .goAway: throw ProtocolViolation("\(frame.type) on stream \(frame.streamID)")
        case _ where !frame.type.isKnown: throw ProtocolViolation("unknown frame type \(frame.type) on a stream")
        case .message: try consumeConnectionWindow(frame.payload.readableBytes)
        default: break
        }
        guard let stream = streams[frame.streamID] else { return }  // ended: ignored
        switch frame.type {
        case .headers: try receiveHeaders(frame, on: stream)
        case .message: try receiveMessage(frame, on: stream)
        case .trailers: try receiveTrailers(frame, on: stream)
        case .rstStream: try receiveReset(frame, on: stream)
        case .windowUpdate:
            let increment = try FramePayload.windowUpdate(frame)
            do { try stream.sendWindow.grant(increment) } catch {
                throw ProtocolViolation("stream \(stream.streamID) send window exceeds 2^31-1")
            }
            sendPending(stream)
        default:
            break  // HALF_CLOSE means nothing from a server
        }
    }

    private func receiveSettings(_ frame: Frame) throws(ProtocolViolation) {
        switch try settings.receive(frame) {
        case .localAcked:
            // The server knows our limits now: enforce them even where they are below the defaults.
            decoder.maxFrameSize = local.maxFrameSize
            return
        case .remote(let streamDelta, let connectionDelta):
            connSendWindow.adjust(by: connectionDelta)
            for stream in streams.values { stream.sendWindow.adjust(by: streamDelta) }
        }
        outbound.writeSettingsAck()
        state.ready()
        settingsTimer?.cancel()
        settingsTimer = nil
        for stream in streams.values { sendPending(stream) }
        resumeBlockedStreams()
        startWaiting()
        scheduleFlush()
        // Calls that ended while they waited for the SETTINGS may have been all a closing
        // connection waited for.
        closeIfIdle()
        armKeepalive()
        manager.handlerReady(self)
        readyPromise.succeed()
    }

    private func receiveGoAway(lastStreamID: UInt32, status: StatusCode, debug: String) {
        let reason =
            "The server is going away (\(status)\(debug.isEmpty ? "" : ": \(debug)"))."
        stopAcceptingStreams()
        manager.handlerReceivedGoAway(self)
        let refused = streams.keys.filter { $0 > lastStreamID }.sorted()
        for id in refused {
            guard let stream = streams.removeValue(forKey: id) else { continue }
            stream.detach()
            stream.retryUnprocessed(reason: reason)
        }
        closeIfIdle()
    }

    /// No new streams on this connection: queued calls go to another connection.
    func stopAcceptingStreams() {
        if state.stopTakingStreams() { manager.handlerUnusable(self) }
        let queued = waiting
        waiting.removeAll()
        for stream in queued where !stream.finished {
            stream.detach()
            manager.route(stream)
        }
    }

    /// The server broke the contract: GOAWAY, close, fail the calls.
    func connectionError(_ code: StatusCode, _ reason: String) {
        guard state.isActive else { return }
        outbound.writeGoAway(lastStreamID: 0, status: code, debug: reason)
        flushNow()
        shutdown(RPCError(code: .internal, message: "Protocol violation by the server: \(reason)"))
        context?.close(promise: nil)
    }

    /// Ends the connection's state once: open calls fail with `error`, queued ones move on.
    func shutdown(_ error: RPCError) {
        guard let (wasActive, everReady) = state.shutdown() else { return }
        settingsTimer?.cancel()
        keepaliveTimer?.cancel()
        pingTimeoutTimer?.cancel()
        manager.handlerUnusable(self)
        let open = streams.sorted { $0.key < $1.key }.map(\.value)
        streams.removeAll()
        connBlocked.removeAll()
        for stream in open {
            stream.detach()
            stream.fail(error)
        }
        let queued = waiting
        waiting.removeAll()
        for stream in queued where !stream.finished {
            stream.detach()
            if everReady && wasActive { manager.route(stream) } else { stream.fail(error) }
        }
        if !everReady { readyPromise.fail(error) }
        manager.handlerClosed(self)
    }

    /// Starts a graceful close: no new calls; the connection closes once the last one ends.
    func beginGracefulClose() {
        dropEndedWaitingCalls()
        if state.beginGracefulClose(nothingQueued: waiting.isEmpty) {
            shutdown(RPCError(code: .unavailable, message: "The connection was closed."))
            context?.close(promise: nil)
            return
        }
        closeIfIdle()
    }

    /// Forgets queued calls that ended while they waited (cancelled, past their deadline): they
    /// must not keep a closing connection open.
    private func dropEndedWaitingCalls() {
        if !waiting.isEmpty { waiting.removeAll { $0.finished } }
    }

    /// Closes the connection if it takes no new streams and none is left.
    func closeIfIdle() {
        // Only with no stream open can the queue hold up a close; a busy connection (calls queued
        // behind MAX_CONCURRENT_STREAMS) is not scanned at every call's end.
        if streams.isEmpty { dropEndedWaitingCalls() }
        guard state.closeIfIdle(idle: streams.isEmpty && waiting.isEmpty) else { return }
        flushNow()
        context?.close(promise: nil)
    }

    // MARK: Keepalive

    private func armKeepalive() {
        guard let keepalive = configuration.keepalive, state.isActive else { return }
        keepaliveTimer = loop.assumeIsolated().scheduleTask(in: TimeAmount(keepalive.interval)) {
            self.keepaliveFired(keepalive)
        }
    }

    private func keepaliveFired(_ keepalive: ClientConfiguration.Keepalive) {
        guard state.isActive else { return }
        let permitted =
            !streams.isEmpty
            || (keepalive.permitWithoutCalls
                && keepalive.interval >= .milliseconds(Int64(remote.keepaliveMinIntervalMS)))
        if permitted, pingTimeoutTimer == nil {
            outbound.writePing(pingData, ack: false)
            scheduleFlush()
            pingTimeoutTimer = loop.assumeIsolated().scheduleTask(in: TimeAmount(keepalive.timeout)) {
                self.pingTimeoutTimer = nil
                self.shutdown(RPCError(code: .unavailable, message: "The server did not answer a keepalive ping."))
                self.context?.close(promise: nil)
            }
        }
        armKeepalive()
    }

    // MARK: Writing

    /// Flushes at the end of the read batch, or once on the next loop tick.
    func scheduleFlush() {
        if inReadBatch {
            needsFlush = true
            return
        }
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.assumeIsolated().execute {
            self.flushScheduled = false
            self.flushNow()
        }
    }

    func flushNow() {
        needsFlush = false
        guard let context, outbound.readableBytes > 0 || hasUnflushedWrites else { return }
        if outbound.readableBytes > 0 { context.write(wrapOutboundOut(outbound), promise: nil) }
        context.flush()
        hasUnflushedWrites = false
        outbound.clear()
    }

    /// Appends one MESSAGE frame. Large payloads go out as their own write, not copied.
    func writeMessageFrame(streamID: UInt32, flags: FrameFlags, payload: ByteBuffer) {
        outbound.writeFrameHeader(length: payload.readableBytes, type: .message, flags: flags, streamID: streamID)
        if payload.readableBytes >= 8 * 1024, let context {
            context.write(wrapOutboundOut(outbound), promise: nil)
            context.write(wrapOutboundOut(payload), promise: nil)
            hasUnflushedWrites = true
            outbound.clear()
        } else {
            outbound.writeImmutableBuffer(payload)
        }
    }

    private func consumeConnectionWindow(_ count: Int) throws(ProtocolViolation) {
        guard count > 0 else { return }
        let increment: UInt32?
        do { increment = try connRecvWindow.received(count) } catch {
            throw ProtocolViolation("connection window overrun")
        }
        // Credit goes back in batches of a quarter window: the server can always send, since at
        // least three quarters stay open, and small messages cost no WINDOW_UPDATE each.
        if let increment {
            outbound.writeWindowUpdate(streamID: 0, increment: increment)
            scheduleFlush()
        }
    }
}

@available(*, unavailable)
extension ClientConnectionHandler: Sendable {}
