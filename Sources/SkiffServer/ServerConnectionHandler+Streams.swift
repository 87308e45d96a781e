import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

extension ServerConnectionHandler {
    func handleHeaders(_ frame: Frame) throws {
        let id = frame.streamID
        guard id > highestStreamID else { throw ProtocolViolation("HEADERS reuse stream id \(id)") }
        let (path, decoded) = try FramePayload.headers(frame)
        highestStreamID = id
        // Refusals: nothing processed, the client may retry.
        if !drain.accepts(id) {
            outbound.writeRSTStream(streamID: id, status: .unavailable, reason: "server is draining", refused: true)
            return
        }
        if let limit = settings.enforcedStreamLimit, streams.count >= limit {
            outbound.writeRSTStream(
                streamID: id,
                status: .unavailable,
                reason: "MAX_CONCURRENT_STREAMS \(limit) reached",
                refused: true
            )
            return
        }
        drain.accepted(id)
        keepalive.streamOpened()

        func reject(_ rejection: CallRejection) {
            outbound.writeTrailers(streamID: id, status: rejection.status, message: rejection.message, metadata: [:])
        }
        func reject(_ status: StatusCode, _ message: String) {
            let rejection = runner.rejection(path: path, status: status, message: message)
            runner.rejected(rejection)
            reject(rejection)
        }
        // The limits of skiff/1's own framing first, then what every transport decides.
        if decoded.encodedSize > settings.enforcedMaxHeaderListSize {
            return reject(
                .resourceExhausted,
                "request metadata of \(decoded.encodedSize) bytes exceeds MAX_HEADER_LIST_SIZE \(settings.enforcedMaxHeaderListSize)"
            )
        }
        if let invalid = decoded.invalidEntry { return reject(.internal, invalid) }
        let metadata = decoded.metadata
        let handler: RPCRouter.Handler
        let timeout: Duration?
        switch runner.admit(path: path, metadata: metadata) {
        case .success(let call):
            handler = call.handler
            timeout = call.timeout
        case .failure(let rejection):
            return reject(rejection)  // counted by the runner
        }
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }

        let stream = ServerStream(
            id: id,
            eventLoop: eventLoop,
            connection: NIOLoopBound(self, eventLoop: eventLoop),
            budget: budget,
            handler: handler,
            highWater: configuration.streamWriteBufferHighWater,
            peerMaxMessageSize: Int(peerSettings.maxMessageSize),
            recvWindow: InboundWindow(size: Int(ours.initialStreamWindow)),
            sendWindow: OutboundWindow(size: Int(peerSettings.initialStreamWindow)),
            startTime: now
        )
        stream.context = ServerContext(
            descriptor: handler.descriptor,
            metadata: metadata,
            peer: peer,
            deadline: deadline,
            streamID: id,
            drain: drainSignal,
            sink: stream
        )
        streams[id] = stream
        stream.deadlineTimer = runner.opened(stream, timeout: timeout, timers: EventLoopDeadlineTimers(eventLoop))
        if !handler.descriptor.kind.hasSingleRequest { startHandler(stream) }
        if frame.flags.contains(.endStream) {
            try endClientSide(stream, halfClose: false)
        } else if handler.descriptor.kind != .bidirectionalStreaming {
            awaitRequest(stream)
        }
    }

    // MARK: Request timeout

    /// Watches a stream whose request has not fully arrived: a unary or server-streaming request
    /// must be complete within the request timeout of its HEADERS, and a client-streaming request
    /// may not pause longer than that between messages. Bidirectional streams are exempt (they are
    /// conversations: the handler runs and decides). One timer per connection, not per call.
    func awaitRequest(_ stream: ServerStream) {
        if requestTimeouts.isEmpty && requestTimer == nil { scheduleRequestTimer(at: now + requestTimeouts.timeout) }
        requestTimeouts.start(stream.id, at: now)
    }

    func scheduleRequestTimer(at due: NIODeadline) {
        requestTimer = eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            requestTimer = nil
            requestTimerFired()
        }
    }

    func requestTimerFired() {
        guard !closing else { return }
        // While the socket is full the connection is not read: nothing is due meanwhile (the
        // paused time is added to every due time when reads resume).
        guard !socketBlocked else { return scheduleRequestTimer(at: now + requestTimeouts.timeout) }
        for id in requestTimeouts.expire(at: now) {
            guard let stream = streams[id], stream.state.remoteOpen else { continue }
            failStream(
                stream,
                .deadlineExceeded,
                "The request did not arrive within the server's request timeout of "
                    + "\(configuration.requestTimeout.formattedSeconds)."
            )
        }
        if let next = requestTimeouts.earliest { scheduleRequestTimer(at: next) }
        scheduleFlush()
    }

    func handleMessage(_ frame: Frame) throws {
        let length = frame.payload.readableBytes
        do {
            if let increment = try connectionRecvWindow.received(length) {
                outbound.writeWindowUpdate(streamID: 0, increment: increment)
            }
        } catch {
            throw ProtocolViolation("connection window overrun")
        }
        guard let stream = streams[frame.streamID], !stream.state.isClosed else { return }
        guard stream.state.remoteOpen else {
            return failStream(stream, .internal, "MESSAGE after the client's side of the stream ended")
        }
        do { try stream.recvWindow.consume(length) } catch {
            throw ProtocolViolation("stream \(stream.id) window overrun")
        }
        switch stream.request.append(frame, maxMessageSize: settings.enforcedMaxMessageSize) {
        case .compressed:
            return failStream(stream, .internal, "COMPRESSED message without a grpc-encoding")
        case .tooLarge:
            forgetPartial(stream)
            return failStream(
                stream,
                .resourceExhausted,
                "request message exceeds MAX_MESSAGE_SIZE of \(settings.enforcedMaxMessageSize) bytes"
            )
        case .incomplete:
            // Incomplete messages of all streams together are bounded per connection.
            guard partialRequestBytes + length <= configuration.maxBufferedRequestBytes else {
                forgetPartial(stream)
                return failStream(
                    stream,
                    .resourceExhausted,
                    "The connection has more than \(configuration.maxBufferedRequestBytes) bytes of incomplete "
                        + "request messages; send fewer large messages at once."
                )
            }
            partialRequestBytes += length
            stream.countedPartialBytes += length
            return
        case .message(let message):
            forgetPartial(stream)
            try requestArrived(message, frame: frame, on: stream)
        }
    }

    /// A whole request message arrived on `stream`.
    private func requestArrived(_ message: ByteBuffer, frame: Frame, on stream: ServerStream) throws {
        stream.messagesReceived += 1
        if stream.handler.descriptor.kind.hasSingleRequest && stream.messagesReceived > 1 {
            return failStream(stream, .internal, "The method expects exactly one request message; more were sent.")
        }
        stream.inbound.push(message)
        if frame.flags.contains(.endStream) {
            try endClientSide(stream, halfClose: false)
        } else if stream.handler.descriptor.kind == .clientStreaming {
            // A client-streaming request may pause up to the timeout between messages; a single
            // request stays due a timeout after its HEADERS.
            requestTimeouts.progress(stream.id, at: now)
        }
    }

    /// Drops a stream's incomplete request message and its share of the connection's count.
    func forgetPartial(_ stream: ServerStream) {
        partialRequestBytes -= stream.countedPartialBytes
        stream.countedPartialBytes = 0
        stream.request.reset()
    }

    func endClientSide(_ stream: ServerStream, halfClose: Bool) throws {
        guard stream.state.remoteOpen else {
            return failStream(stream, .internal, "HALF_CLOSE after the client's side of the stream ended")
        }
        if stream.request.isMidMessage {
            forgetPartial(stream)
            return failStream(stream, .internal, "HALF_CLOSE in the middle of a fragmented message")
        }
        stream.state.halfClose(.remote)
        requestTimeouts.stop(stream.id)
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

    func startHandler(_ stream: ServerStream) {
        guard !stream.handlerStarted else { return }
        stream.handlerStarted = true
        stream.handlerStartTime = now
        stream.handlerRunning = true
        runningStreams += 1
        idleSince = nil  // the idle timer, if armed, sees this when it fires
        let context = stream.context!
        // The context refers back to the stream (its metadata sink): drop the stored copy so the
        // stream is freed once its task and the connection let go of it.
        stream.context = nil
        stream.task = runner.start(
            CallRunner.Call(
                handler: stream.handler,
                stream: stream,
                context: context,
                gate: budget,
                completion: stream
            ),
            executor: executor
        )
    }

    func handlerFinished(_ stream: ServerStream, hidden: (any Error)?) {
        stream.handlerRunning = false
        stream.task = nil
        if let hidden { runner.handlerFailed(stream.handler.descriptor, streamID: stream.id, error: hidden) }
        if !stream.state.isClosed {
            // The handler ended without TRAILERS reaching the queue (cannot normally happen).
            finish(stream, .internal, "The handler ended without a status.", [:])
        }
        retireIfDone(stream)
    }

    func retireIfDone(_ stream: ServerStream) {
        guard stream.state.isClosed, !stream.handlerRunning, stream.outbound.isEmpty else { return }
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        if stream.handlerStarted { runningStreams -= 1 }
        forgetPartial(stream)
        stream.context = nil  // a stream whose handler never started still holds it
        stream.close()
        let status = stream.state.status ?? .cancelled
        requestTimeouts.stop(stream.id)
        let duration = Duration.nanoseconds((now - stream.startTime).nanoseconds)
        runner.finished(stream.handler.descriptor, streamID: stream.id, peer: peer, status: status, duration: duration)
        if runningStreams == 0 { armIdleTimer() }
        if streams.isEmpty, drain.finalLastStreamID != nil { closeNow() }
    }

    /// Ends a stream at once, as ``SkiffCore/CallRunner`` does when its deadline passes.
    func abort(_ stream: ServerStream, _ status: StatusCode, _ message: String) {
        guard !stream.state.isClosed else {
            stream.task?.cancel()
            return
        }
        failStream(stream, status, message)
        scheduleFlush()
    }

    /// Ends a stream from the server side at once with an error: queued responses are dropped.
    func failStream(_ stream: ServerStream, _ status: StatusCode, _ message: String) {
        guard !stream.state.isClosed else { return }
        dropQueuedResponses(of: stream)
        stream.outbound.append(.trailers(status, message, [:]))
        stream.task?.cancel()
        pump(stream)
    }

    func cancelStream(_ stream: ServerStream) {
        if stream.state.close(.cancelled) { dropQueuedResponses(of: stream) }
        stream.close()
        stream.task?.cancel()
        retireIfDone(stream)
    }

    func returnStreamCredit(_ stream: ServerStream, _ credit: Int) {
        guard streams[stream.id] === stream, stream.state.remoteOpen else { return }
        let increment = stream.recvWindow.restore(credit)
        // The client may have been waiting for this window: its pause is the server's doing.
        requestTimeouts.progress(stream.id, at: now)
        guard increment > 0 else { return }
        outbound.writeWindowUpdate(streamID: stream.id, increment: increment)
        scheduleFlush()
    }
}
