import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

extension ServerConnectionHandler {
    // MARK: Responses

    func enqueue(_ stream: ServerStream, _ item: ServerStream.Outbound, flush: Bool) {
        // Flush even when the item is dropped: an earlier item of this batch may have ended the
        // stream and left its TRAILERS in the buffer.
        defer { if flush { scheduleFlush() } }
        guard !stream.state.isClosed, streams[stream.id] === stream else {
            if case .message(let bytes) = item { dropped(bytes.readableBytes, of: stream) }
            return
        }
        if stream.outbound.isEmpty, !stream.isBlocked {
            // Nothing queued before it: write it straight into the outbound buffer; only what the
            // windows hold back is queued (no queue storage for calls that are never blocked).
            if case .blocked(let rest) = write(item, of: stream) { stream.outbound.append(rest) }
        } else {
            stream.outbound.append(item)
            if !stream.isBlocked {
                pump(stream)
            } else if !stream.inBlockedList, !socketBlocked, connectionSendWindow.isOpen {
                holdForStreamWindow(stream, current: 0)  // still waiting for its own window only
            }
        }
    }

    func finish(_ stream: ServerStream, _ status: StatusCode, _ message: String, _ metadata: Metadata) {
        enqueue(stream, .trailers(status, message, metadata), flush: true)
    }

    /// The unary fast path: the one response message and the OK trailers, in one batch.
    func enqueueLast(_ stream: ServerStream, _ message: ByteBuffer) {
        enqueue(stream, .message(message), flush: false)
        finish(stream, .ok, "", [:])
    }

    /// Writes what the windows allow of a stream's queued responses.
    func pump(_ stream: ServerStream) {
        while let item = stream.outbound.popFirst() {
            switch write(item, of: stream) {
            case .written: continue
            case .ended: return
            case .blocked(let rest):
                stream.outbound.prepend(rest)
                return
            }
        }
    }

    /// Response bytes that will never be written: given back to the stream and the connection.
    func dropped(_ size: Int, of stream: ServerStream) {
        stream.didWrite(size)
        budget.release(size - releaseHeld(size, of: stream))
    }

    /// Counts `size` leading bytes of a stream's queue as gone from what it holds for its window;
    /// returns how many of them were held (the rest were charged to the budget).
    @inline(__always)
    func releaseHeld(_ size: Int, of stream: ServerStream) -> Int {
        guard stream.heldBytes > 0 else { return 0 }
        let held = min(size, stream.heldBytes)
        stream.heldBytes -= held
        heldResponseBytes -= held
        observer.responseBytesQueued(-held)
        return held
    }

    /// A stream waits for its own window while the connection's window and the socket are open:
    /// its client holds back this call's results (the app has not consumed them yet). Its queued
    /// bytes move from the connection's budget to the bytes held for stream windows, if they fit
    /// there, so that they do not stop the connection's other calls. All or nothing, so that held
    /// bytes always lead the stream's queue. `current` is a message part not in the queue.
    func holdForStreamWindow(_ stream: ServerStream, current: Int) {
        let charged = current + stream.outbound.messageBytes - stream.heldBytes
        guard !shutDown, charged > 0, heldResponseBytes + charged <= configuration.maxWindowHeldResponseBytes else {
            return
        }
        stream.heldBytes += charged
        heldResponseBytes += charged
        observer.responseBytesQueued(charged)
        budget.release(charged)
    }

    /// Drops every response message a stream still has queued (its TRAILERS too).
    func dropQueuedResponses(of stream: ServerStream) {
        dropped(stream.outbound.messageBytes, of: stream)
        stream.outbound.removeAll()
    }

    /// What became of an item handed to ``write(_:of:)``.
    enum WriteOutcome {
        /// All of it is in the outbound buffer.
        case written
        /// The TRAILERS went out (or the stream ended instead): nothing more is written for it.
        case ended
        /// The windows are closed: this part of the message is left (the stream is marked blocked).
        case blocked(ServerStream.Outbound)
    }

    /// Writes one response item (taken off the stream's queue, or never queued) as far as the
    /// windows allow.
    func write(_ item: ServerStream.Outbound, of stream: ServerStream) -> WriteOutcome {
        switch item {
        case .trailers(let status, let message, let extra):
            let metadata = ResponseState.trailers(
                initial: stream.headersWritten ? nil : stream.takeInitialMetadata(),  // trailers-only
                trailing: stream.takeTrailingMetadata(),
                status: extra
            )
            if let problem = responseMetadataProblem(metadata) {
                logger.error("response metadata not sent", metadata: ["problem": "\(LogText.bounded(problem))"])
                outbound.writeTrailers(
                    streamID: stream.id,
                    status: .internal,
                    message: "Internal server error.",
                    metadata: [:]
                )
            } else {
                // TRAILERS must fit the client's MAX_FRAME_SIZE: shorten the message if needed.
                let room = Int(peerSettings.maxFrameSize) - 6 - metadata.encodedSize
                var text = message
                if text.utf8.count > room {
                    text = String(decoding: Array(text.utf8.prefix(max(0, room))), as: UTF8.self)
                    while text.utf8.count > room { text.removeLast() }
                }
                outbound.writeTrailers(streamID: stream.id, status: status, message: text, metadata: metadata)
            }
            stream.outbound.removeAll()
            stream.state.close(status)
            stream.deadlineTimer?.cancel()
            stream.deadlineTimer = nil
            stream.close()
            retireIfDone(stream)
            return .ended
        case .message(var bytes):
            while true {
                // A socket that takes no more bytes closes every window until it drains.
                let window = socketBlocked ? 0 : min(stream.sendWindow.available, connectionSendWindow.available)
                let remaining = bytes.readableBytes
                if remaining > 0 && window <= 0 {
                    if !socketBlocked && connectionSendWindow.isOpen {
                        // Only this stream's window is closed: it is pumped again by its
                        // WINDOW_UPDATE, and its bytes need not hold up the other calls.
                        stream.isBlocked = true
                        holdForStreamWindow(stream, current: remaining)
                    } else {
                        markBlocked(stream)
                    }
                    return .blocked(.message(bytes))
                }
                guard writeHeadersIfNeeded(stream) else {
                    // The response metadata cannot be sent: end the call with INTERNAL instead.
                    dropped(remaining, of: stream)
                    dropQueuedResponses(of: stream)
                    return write(.trailers(.internal, "Internal server error.", [:]), of: stream)
                }
                let chunk = min(remaining, window, Int(peerSettings.maxFrameSize))
                let slice = bytes.readSlice(length: chunk)!
                let last = bytes.readableBytes == 0
                outbound.writeMessageFrame(streamID: stream.id, flags: last ? [] : .more, bytes: slice)
                stream.sendWindow.spend(chunk)
                connectionSendWindow.spend(chunk)
                stream.didWrite(chunk)
                // Bytes held for the stream's window are no longer charged to the budget.
                unflushedMessageBytes += chunk - releaseHeld(chunk, of: stream)
                // Hand large batches to the socket as they grow, so that its writability (and
                // with it ``socketBlocked``) follows what is really pending.
                if outbound.readableBytes >= Self.flushBatchSize {
                    flushNow()
                    if shutDown { return .ended }  // the flush found the connection gone
                }
                if last { return .written }
            }
        }
    }

    /// Writes the response HEADERS before the first message; `false` when its metadata cannot
    /// be sent (nothing is written then).
    func writeHeadersIfNeeded(_ stream: ServerStream) -> Bool {
        guard !stream.headersWritten else { return true }
        let metadata = stream.takeInitialMetadata()
        if let problem = responseMetadataProblem(metadata) {
            logger.error("response metadata not sent", metadata: ["problem": "\(LogText.bounded(problem))"])
            return false
        }
        stream.headersWritten = true
        outbound.writeHeaders(streamID: stream.id, metadata: metadata)
        return true
    }

    /// Why response metadata may not be sent: an invalid entry, or a block larger than the
    /// client's MAX_HEADER_LIST_SIZE (which is always below its MAX_FRAME_SIZE).
    func responseMetadataProblem(_ metadata: Metadata) -> String? {
        if let invalid = metadata.validationFailure() { return invalid }
        guard metadata.encodedSize <= Int(peerSettings.maxHeaderListSize) else {
            return "metadata of \(metadata.encodedSize) bytes exceeds the client's MAX_HEADER_LIST_SIZE"
        }
        return nil
    }

    /// The stream waits for the connection's window or the socket: it is pumped when they open.
    func markBlocked(_ stream: ServerStream) {
        stream.isBlocked = true
        guard !stream.inBlockedList else { return }
        stream.inBlockedList = true
        blocked.append(stream)
    }

    func pumpBlocked() {
        var rounds = blocked.count
        while rounds > 0, connectionSendWindow.isOpen, !socketBlocked, let stream = blocked.popFirst() {
            rounds -= 1
            stream.inBlockedList = false
            stream.isBlocked = false
            if streams[stream.id] === stream { pump(stream) }
        }
        scheduleFlush()
    }

    // MARK: Writing

    /// Outbound bytes at which a batch is handed to the socket without waiting for the loop tick.
    static let flushBatchSize = 256 * 1024

    func scheduleFlush() {
        guard !flushScheduled, !closing else { return }
        flushScheduled = true
        eventLoop.assumeIsolated().execute { [self] in
            flushScheduled = false
            flushNow()
        }
    }

    func flushNow() {
        guard outbound.readableBytes > 0, let context, !closing || context.channel.isActive else { return }
        let written = unflushedMessageBytes
        unflushedMessageBytes = 0
        context.writeAndFlush(wrapOutboundOut(outbound), promise: nil)
        // Usually the socket took the bytes at once and released the buffer: `clear()` then keeps
        // its storage for the next batch (no allocation per flush). If the write is still pending,
        // `clear()` gives this buffer new storage and the pending write keeps the old one.
        if outbound.capacity > 64 * 1024 {
            outbound = context.channel.allocator.buffer(capacity: 4096)  // do not keep a large batch's storage
        } else {
            outbound.clear()
        }
        // Past this point NIO's write buffer, bounded by its high-water mark, holds the bytes.
        if written > 0 { budget.release(written) }
        if !context.channel.isWritable { updateSocketBlocked(true) }
    }
}
