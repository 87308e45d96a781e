import DequeModule
import NIOCore
import SkiffCore
import SkiffWire

extension ClientConnectionHandler {
    // MARK: Opening streams

    /// Takes a call routed to this connection: opens its stream now, or queues it until the
    /// connection is up or a stream slot frees.
    func enqueue(_ stream: ClientStream) {
        guard !stream.finished else { return }
        switch state.routing {
        case .fail:
            stream.fail(RPCError(code: .unavailable, message: "The connection was closed."))
        case .queue:
            queue(stream)
        case .reroute:
            stream.detach()
            manager.route(stream)
        case .openOrQueue:
            if waiting.isEmpty, canOpenStream { open(stream) } else { queue(stream) }
        }
    }

    private var canOpenStream: Bool {
        guard let limit = remote.maxConcurrentStreams else { return true }
        return streams.count < Int(limit)
    }

    private func queue(_ stream: ClientStream) {
        guard waiting.count < configuration.maxQueuedCalls else {
            stream.fail(
                RPCError(
                    code: .resourceExhausted,
                    message: "Too many calls are waiting for a stream on this connection."
                )
            )
            return
        }
        stream.handler = self
        waiting.append(stream)
    }

    /// Opens queued calls while stream slots are free.
    func startWaiting() {
        while state.opensStreams, canOpenStream, let stream = waiting.popFirst() {
            if stream.finished { continue }
            open(stream)
        }
    }

    /// Sends a call's HEADERS and whatever of its request is ready.
    private func open(_ stream: ClientStream) {
        func reject(_ code: StatusCode, _ message: String) {
            stream.detach()
            stream.fail(RPCError(code: code, message: message))
        }
        guard let metadata = stream.headerMetadata() else {
            return reject(.deadlineExceeded, "The deadline passed before the call could start.")
        }
        let size = metadata.encodedSize
        guard size <= Int(remote.maxHeaderListSize) else {
            return reject(
                .resourceExhausted,
                "The request metadata (\(size) bytes) exceeds the server's MAX_HEADER_LIST_SIZE of \(remote.maxHeaderListSize) bytes."
            )
        }
        guard 2 + stream.path.utf8.count + size <= Int(remote.maxFrameSize) else {
            return reject(.resourceExhausted, "The request HEADERS frame exceeds the server's MAX_FRAME_SIZE.")
        }
        for message in stream.unsent where message.bytes.readableBytes > Int(remote.maxMessageSize) {
            return reject(
                .resourceExhausted,
                "The request message (\(message.bytes.readableBytes) bytes) exceeds the server's MAX_MESSAGE_SIZE of \(remote.maxMessageSize) bytes."
            )
        }
        guard nextStreamID <= UInt32(Int32.max) else {
            // Stream ids are used up: this connection takes no more; the call goes to a new one.
            stream.detach()
            stopAcceptingStreams()
            manager.route(stream)
            closeIfIdle()
            return
        }
        let id = nextStreamID
        nextStreamID += 2
        highestOpened = id
        stream.handler = self
        stream.streamID = id
        stream.wire.open()
        stream.sendWindow = OutboundWindow(size: Int(remote.initialStreamWindow))
        stream.recvWindow = InboundWindow(size: Int(local.initialStreamWindow))
        stream.attempts += 1
        // From here on the server may process the call, unless it says it did not.
        stream.mayHaveBeenProcessed = true
        streams[id] = stream
        if stream.pending.isEmpty {
            // Hand the whole queue over (no new storage for `pending`).
            swap(&stream.pending, &stream.unsent)
            for message in stream.pending { stream.retain(message.bytes) }
        } else {
            while let message = stream.unsent.popFirst() {
                stream.retain(message.bytes)
                stream.pending.append(message)
            }
        }
        stream.pendingEnd = stream.requestsEnded
        let endOnHeaders = stream.pending.isEmpty && stream.pendingEnd
        outbound.writeHeaders(
            streamID: id,
            path: stream.path,
            metadata: metadata,
            flags: endOnHeaders ? .endStream : []
        )
        if endOnHeaders { stream.wire.halfClose(.local) }
        sendPending(stream)
        scheduleFlush()
    }

    // MARK: Request side

    /// A request message of an open stream.
    func enqueueMessage(_ message: OutboundMessage, on stream: ClientStream) {
        guard stream.wire.localOpen else {
            if message.gated { stream.gate?.release(message.bytes.readableBytes) }
            return
        }
        let size = message.bytes.readableBytes
        guard size <= Int(remote.maxMessageSize) else {
            if message.gated { stream.gate?.release(size) }
            resetStream(
                stream,
                code: .cancelled,
                error: RPCError(
                    code: .resourceExhausted,
                    message:
                        "The request message (\(size) bytes) exceeds the server's MAX_MESSAGE_SIZE of \(remote.maxMessageSize) bytes."
                )
            )
            return
        }
        stream.retain(message.bytes)
        stream.pending.append(message)
        sendPending(stream)
    }

    /// The request side of an open stream ended.
    func endRequests(on stream: ClientStream) {
        stream.pendingEnd = true
        sendPending(stream)
    }

    /// Sends as much of a stream's queued request as the windows allow, in fragments no larger
    /// than the server's MAX_FRAME_SIZE; ends the request side when everything is out.
    func sendPending(_ stream: ClientStream) {
        guard stream.wire.localOpen else { return }
        while !stream.pending.isEmpty {
            let remaining = stream.pending[0].bytes.readableBytes
            let chunk =
                remaining == 0
                ? 0 : min(remaining, Int(remote.maxFrameSize), stream.sendWindow.available, connSendWindow.available)
            if remaining > 0, chunk <= 0 {
                if !connSendWindow.isOpen, stream.sendWindow.isOpen, !stream.blockedOnConnection {
                    stream.blockedOnConnection = true
                    connBlocked.append(stream)
                }
                break
            }
            let gated = stream.pending[0].gated
            let payload = stream.pending[0].bytes.readSlice(length: chunk)!
            var flags: FrameFlags = []
            if chunk < remaining {
                flags = .more
            } else {
                stream.pending.removeFirst()
                if stream.pending.isEmpty, stream.pendingEnd {
                    flags = .endStream
                    stream.wire.halfClose(.local)
                }
            }
            stream.sendWindow.spend(chunk)
            connSendWindow.spend(chunk)
            writeMessageFrame(streamID: stream.streamID, flags: flags, payload: payload)
            if gated, chunk > 0 { stream.gate?.release(chunk) }
        }
        if stream.pending.isEmpty, stream.pendingEnd, stream.wire.localOpen {
            outbound.writeHalfClose(streamID: stream.streamID)
            stream.wire.halfClose(.local)
        }
        scheduleFlush()
    }

    /// Connection window opened: streams waiting for it send, in the order they blocked.
    func resumeBlockedStreams() {
        while connSendWindow.isOpen, let stream = connBlocked.popFirst() {
            stream.blockedOnConnection = false
            if stream.handler === self, !stream.wire.isIdle { sendPending(stream) }
        }
    }

    // MARK: Response side

    func receiveHeaders(_ frame: Frame, on stream: ClientStream) throws(ProtocolViolation) {
        let (_, decoded) = try FramePayload.headers(frame)
        stream.markAccepted()
        guard stream.responseHeaders == nil else {
            return resetStream(
                stream,
                code: .cancelled,
                error: RPCError(code: .internal, message: "The server sent a second HEADERS frame.")
            )
        }
        if let failure = checkMetadata(decoded) { return resetStream(stream, code: failure.code, error: failure) }
        stream.responseHeaders = decoded.metadata
        stream.responses?.push(.headers(decoded.metadata))
    }

    func receiveMessage(_ frame: Frame, on stream: ClientStream) throws(ProtocolViolation) {
        let count = frame.payload.readableBytes
        do { try stream.recvWindow.consume(count) } catch {
            throw ProtocolViolation("stream \(stream.streamID) window overrun")
        }
        stream.markAccepted()
        func reject(_ code: StatusCode, _ error: RPCError) { resetStream(stream, code: code, error: error) }
        guard stream.responseHeaders != nil else {
            return reject(.cancelled, RPCError(code: .internal, message: "The server sent a message before HEADERS."))
        }
        // Built only when needed: the interpolation costs allocations on every message otherwise.
        var tooLarge: RPCError {
            RPCError(
                code: .resourceExhausted,
                message: "The response message exceeds the client's MAX_MESSAGE_SIZE of \(maxMessageSize) bytes."
            )
        }
        let complete: ByteBuffer
        switch stream.response.append(frame, maxMessageSize: maxMessageSize) {
        case .message(let message): complete = message
        case .incomplete: return
        case .tooLarge: return reject(.resourceExhausted, tooLarge)
        case .compressed:
            return reject(
                .cancelled,
                RPCError(
                    code: .internal,
                    message: "The server sent a compressed message; no compression was negotiated."
                )
            )
        }
        if stream.isUnary {
            guard stream.responseMessage == nil else {
                return reject(
                    .cancelled,
                    RPCError(code: .internal, message: "The server sent more than one response message.")
                )
            }
            stream.responseMessage = complete
        } else {
            stream.responses?.push(.message(complete))
        }
    }

    func receiveTrailers(_ frame: Frame, on stream: ClientStream) throws(ProtocolViolation) {
        let (status, message, decoded) = try FramePayload.trailers(frame)
        let partial = stream.response.isMidMessage
        removeStream(stream)
        defer { streamEnded() }
        if let failure = checkMetadata(decoded) { return stream.fail(failure) }
        guard !partial else {
            return stream.fail(RPCError(code: .internal, message: "The response ended in the middle of a message."))
        }
        stream.complete(status: status, message: message, trailers: decoded.metadata)
    }

    func receiveReset(_ frame: Frame, on stream: ClientStream) throws(ProtocolViolation) {
        let (status, reason) = try FramePayload.rstStream(frame)
        removeStream(stream)
        defer { streamEnded() }
        if frame.flags.contains(.refused) {
            stream.retryUnprocessed(
                reason: "The server refused the stream (\(status))\(reason.isEmpty ? "" : ": \(reason)")."
            )
        } else {
            stream.fail(
                RPCError(code: status, message: reason.isEmpty ? "The server reset the stream (\(status))." : reason)
            )
        }
    }

    /// A metadata block we cannot take: over our MAX_HEADER_LIST_SIZE, or with a bad entry.
    private func checkMetadata(_ decoded: DecodedMetadata) -> RPCError? {
        if decoded.encodedSize > maxHeaderListSize {
            return RPCError(
                code: .resourceExhausted,
                message:
                    "The response metadata (\(decoded.encodedSize) bytes) exceeds the client's MAX_HEADER_LIST_SIZE of \(maxHeaderListSize) bytes."
            )
        }
        if let invalid = decoded.invalidEntry {
            return RPCError(code: .internal, message: "The server sent invalid metadata: \(invalid).")
        }
        return nil
    }

    // MARK: Ending streams

    /// Resets an open stream (RST_STREAM with `code`) and fails its call with `error`.
    func resetStream(_ stream: ClientStream, code: StatusCode, error: RPCError) {
        guard !stream.wire.isIdle, stream.handler === self else { return stream.fail(error) }
        outbound.writeRSTStream(streamID: stream.streamID, status: code)
        scheduleFlush()
        removeStream(stream)
        stream.fail(error)
        streamEnded()
    }

    /// The application took a whole message of a streaming response: return its stream credit.
    func returnStreamCredit(_ count: Int, on stream: ClientStream) {
        guard state.isActive, !stream.wire.isIdle, count > 0 else { return }
        let increment = stream.recvWindow.restore(count)
        guard increment > 0 else { return }
        outbound.writeWindowUpdate(streamID: stream.streamID, increment: increment)
        scheduleFlush()
    }

    private func removeStream(_ stream: ClientStream) {
        streams.removeValue(forKey: stream.streamID)
        stream.detach()
    }

    /// A stream slot freed: open queued calls, or close if draining and idle.
    private func streamEnded() {
        startWaiting()
        closeIfIdle()
    }
}
