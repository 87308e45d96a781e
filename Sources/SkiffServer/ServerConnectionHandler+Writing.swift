import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

extension ServerConnectionHandler {
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
    func pump(_ stream: ServerStream) {
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

    func writeHeadersIfNeeded(_ stream: ServerStream) {
        guard !stream.headersWritten else { return }
        stream.headersWritten = true
        let metadata = stream.takeInitialMetadata()
        if metadata.validationFailure() != nil {
            outbound.writeHeaders(streamID: stream.id, metadata: [:])
        } else {
            outbound.writeHeaders(streamID: stream.id, metadata: metadata)
        }
    }

    func markBlocked(_ stream: ServerStream) {
        guard !stream.isBlocked else { return }
        stream.isBlocked = true
        blocked.append(stream)
    }

    func pumpBlocked() {
        var rounds = blocked.count
        while rounds > 0, connectionSendWindow > 0, let stream = blocked.popFirst() {
            rounds -= 1
            stream.isBlocked = false
            if streams[stream.id] === stream { pump(stream) }
        }
        scheduleFlush()
    }

    // MARK: Writing

    func scheduleFlush() {
        guard !flushScheduled, !closing else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushScheduled = false
            flushNow()
        }
    }

    func flushNow() {
        guard outbound.readableBytes > 0, !closing || context.channel.isActive else { return }
        let bytes = outbound
        outbound = context.channel.allocator.buffer(capacity: 4096)
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }
}
