import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import SkiffCore
import SkiffServer
import SkiffWire

/// One gRPC call: the handler of one HTTP/2 stream channel, on the connection's event loop. It
/// reads the request HEADERS and DATA, presents the call to the router through the server's
/// ``SkiffCore/CallRunner`` (admission, deadline, handler, metrics) and writes what the handler
/// sends. HTTP/2 itself (framing, HPACK, flow control, stream limits, reset and PING floods) is
/// swift-nio-http2's. It is every stream's first handler: a stream whose request is not gRPC it
/// hands over to gRPC-Web and Connect (``HTTP2StreamRouter``) and steps aside.
final class GRPCStreamHandler: ChannelInboundHandler, RemovableChannelHandler, ResponseWriter {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// What the connection's calls share: the runner, limits, budget, drain signal.
    private let settings: HTTPCallSettings
    private var runner: CallRunner { settings.runner }
    private var executor: (any TaskExecutor)? { settings.executor }
    private var maxMessageSize: Int { settings.maxMessageSize }
    private var maxHeaderListSize: Int { settings.maxHeaderListSize }
    private var reader: GRPCMessageReader
    private var state = StreamState()
    private var call: HTTPServerCall<GRPCStreamHandler>?
    private var descriptor: MethodDescriptor?
    private var task: Task<Void, Never>?
    private var deadlineTimer: Scheduled<Void>?
    /// Ends a call whose request stops arriving (``SkiffServer/ServerConfiguration/requestTimeout``):
    /// a unary or server-streaming request must be whole within it of its HEADERS, a
    /// client-streaming one may not pause longer between messages; bidirectional calls are exempt.
    private var requestTimer: Scheduled<Void>?
    /// The request timer is to be (re)armed at the end of this read: once per read, not per message,
    /// and not at all for a request that is whole by then (most unary calls).
    private var requestTimerDue = false
    private var requestTimeout: Duration { settings.requestTimeout }
    private var handlerRunning = false
    private var startTime = NIODeadline.now()
    private var context: ChannelHandlerContext?
    private let pacer = OutboundPacer()
    private var peer: String { settings.peer }
    private var streamID: UInt32 = 0

    private var budget: ResponseBudget { settings.budget }
    private var drain: DrainSignal { settings.drain }

    init(settings: HTTPCallSettings) {
        self.settings = settings
        self.reader = GRPCMessageReader(maxMessageSize: settings.maxMessageSize)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if state.isIdle {
                guard HTTP2StreamRouter.isGRPC(headers.headers, settings: settings) else {
                    return HTTP2StreamRouter.handOver(data, from: context, settings: settings)
                }
                requestHeaders(headers.headers, endStream: headers.endStream)
            } else if headers.endStream {
                endClientSide()  // request trailers: gRPC sends none, but they may end the stream
            } else {
                fail(.internal, "Request HEADERS arrived after the request began.")
            }
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else { return }
            requestData(bytes, endStream: data.endStream)
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if requestTimerDue {
            requestTimerDue = false
            if state.remoteOpen { armRequestTimer() }
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelCall()
        deadlineTimer?.cancel()
        requestTimer?.cancel()
        pacer.closed()
        retireIfDone()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        pacer.writabilityChanged(context.channel)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        cancelCall()
        context.close(promise: nil)
    }

    private func requestHeaders(_ headers: HPACKHeaders, endStream: Bool) {
        state.open()
        startTime = .now()
        guard let context else { return }
        if let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
            streamID = UInt32(Int(id))
        }
        let request: GRPCHeaders.Request
        switch GRPCHeaders.request(headers) {
        case .success(let parsed): request = parsed
        case .failure(let refusal):
            // Counted as a call to whatever it named, if that is a registered method.
            let path = headers.first(name: ":path") ?? ""
            let rejection = runner.rejection(path: path, status: .internal, message: "\(refusal)")
            runner.rejected(rejection)
            return respondAndClose(GRPCHeaders.refusal(refusal), context: context)
        }
        let size = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
        if size > maxHeaderListSize {
            let rejection = runner.rejection(
                path: request.path,
                status: .resourceExhausted,
                message: "request metadata of \(size) bytes exceeds the limit of \(maxHeaderListSize)"
            )
            runner.rejected(rejection)
            return reject(rejection, context: context)
        }
        let admitted: CallAdmission
        switch runner.admit(path: request.path, metadata: request.metadata) {
        case .success(let admission): admitted = admission
        case .failure(let rejection): return reject(rejection, context: context)
        }
        let call = HTTPServerCall(
            writer: NIOLoopBound(self, eventLoop: context.eventLoop),
            eventLoop: context.eventLoop,
            maxMessageSize: maxMessageSize,
            budget: budget
        )
        self.call = call
        self.descriptor = admitted.handler.descriptor
        let serverContext = ServerContext(
            descriptor: admitted.handler.descriptor,
            metadata: request.metadata,
            peer: peer,
            deadline: admitted.timeout.map { ContinuousClock.now.advanced(by: $0) },
            streamID: streamID,
            drain: drain,
            sink: call
        )
        deadlineTimer = runner.opened(
            call,
            timeout: admitted.timeout,
            timers: EventLoopDeadlineTimers(context.eventLoop)
        )
        handlerRunning = true
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        task = runner.start(
            CallRunner.Call(handler: admitted.handler, stream: call, context: serverContext, gate: budget) { hidden in
                eventLoop.execute { loopBound.value.handlerFinished(hidden: hidden) }
            },
            executor: executor
        )
        if endStream {
            endClientSide()
        } else if admitted.handler.descriptor.kind != .bidirectionalStreaming {
            requestTimerDue = true
        }
    }

    private func armRequestTimer() {
        guard let context else { return }
        requestTimer?.cancel()
        let timeout = requestTimeout
        requestTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            requestTimer = nil
            guard state.remoteOpen else { return }
            fail(
                .deadlineExceeded,
                "The request did not arrive within the server's request timeout of \(timeout)."
            )
        }
    }

    private func requestData(_ bytes: ByteBuffer, endStream: Bool) {
        guard state.remoteOpen, let call else { return }
        reader.append(bytes)
        while true {
            switch reader.next() {
            case .needMoreData:
                if endStream { endClientSide() }
                return
            case .message(let message):
                call.inbound.push(message)
                // A client-streaming request may pause up to the timeout between messages.
                if descriptor?.kind == .clientStreaming { requestTimerDue = true }
            case .tooLarge(let length):
                return fail(
                    .resourceExhausted,
                    "request message of \(length) bytes exceeds the limit of \(maxMessageSize) bytes"
                )
            case .compressed:
                return fail(.internal, "a compressed request message without a grpc-encoding")
            }
        }
    }

    private func endClientSide() {
        requestTimer?.cancel()
        requestTimer = nil
        requestTimerDue = false
        guard state.halfClose(.remote) else { return }
        if reader.isMidMessage {
            return fail(.internal, "The request ended in the middle of a message.")
        }
        call?.inbound.finish()
    }

    // MARK: Outbound (on the event loop, from the call)

    /// Writes one response message (its HEADERS first, if `headers`; its TRAILERS after, if `end`),
    /// reserved in the connection's budget and released once written. DATA is flushed once per
    /// event-loop tick (a stream of messages leaves in few writes); TRAILERS at once.
    func write(headers: Metadata?, message: ByteBuffer, end: ResponseState.End?) -> WriteOutcome {
        let size = message.readableBytes
        guard let context, state.localOpen else {
            budget.release(size)
            return .closed
        }
        if let headers {
            context.write(wrapOutboundOut(.headers(.init(headers: GRPCHeaders.response(headers)))), promise: nil)
        }
        var frame = context.channel.allocator.buffer(capacity: 5 + message.readableBytes)
        frame.writeGRPCMessageHeader(length: message.readableBytes)
        var message = message
        frame.writeBuffer(&message)
        let sent = context.eventLoop.makePromise(of: Void.self)
        let budget = self.budget
        sent.futureResult.whenComplete { _ in budget.release(size) }
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(frame)))), promise: sent)
        if let end {
            finish(end)  // flushes both
            return .more
        }
        scheduleFlush()
        return context.channel.isWritable ? .more : .wait
    }

    func whenWritable(_ promise: EventLoopPromise<Void>) {
        guard let context, state.localOpen else { return promise.fail(CancellationError()) }
        pacer.whenWritable(context.channel, promise)
    }

    private func scheduleFlush() {
        guard let context else { return }
        pacer.scheduleFlush(on: context.eventLoop) { [self] in self.context?.flush() }
    }

    /// Ends the response with its TRAILERS (the only HEADERS of a trailers-only response).
    func finish(_ end: ResponseState.End) {
        guard let context, state.close(end.status) else { return }
        deadlineTimer?.cancel()
        requestTimer?.cancel()
        let trailers = GRPCHeaders.trailers(
            status: end.status,
            message: end.message,
            metadata: end.metadata,
            trailersOnly: end.trailersOnly
        )
        context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: trailers, endStream: true))), promise: nil)
        call?.inbound.fail(CancellationError())
        retireIfDone()
    }

    /// Ends the call at once with an error (a passed deadline, a broken request).
    func abort(_ status: StatusCode, _ message: String) {
        call?.finish(status, message: message, metadata: [:])
        task?.cancel()
    }

    private func fail(_ status: StatusCode, _ message: String) {
        guard call != nil else { return }
        abort(status, message)
    }

    /// The stream went away (a reset, the connection's end): a call still running is cancelled.
    private func cancelCall() {
        guard state.close(.cancelled) else { return }
        call?.closed()
        task?.cancel()
    }

    private func handlerFinished(hidden: (any Error)?) {
        handlerRunning = false
        task = nil
        if let hidden, let descriptor { runner.handlerFailed(descriptor, streamID: streamID, error: hidden) }
        if !state.isClosed { call?.finish(.internal, message: "The handler ended without a status.", metadata: [:]) }
        retireIfDone()
    }

    private func retireIfDone() {
        // A call is counted once: `descriptor` is set while it is open.
        guard state.isClosed, !handlerRunning, let descriptor else { return }
        self.descriptor = nil
        let duration = Duration.nanoseconds((NIODeadline.now() - startTime).nanoseconds)
        runner.finished(
            descriptor,
            streamID: streamID,
            peer: peer,
            status: state.status ?? .cancelled,
            duration: duration
        )
        call = nil
    }

    private func reject(_ rejection: CallRejection, context: ChannelHandlerContext) {
        let headers = GRPCHeaders.trailers(
            status: rejection.status,
            message: rejection.message,
            metadata: [:],
            trailersOnly: true
        )
        respondAndClose(headers, context: context)
    }

    private func respondAndClose(_ headers: HPACKHeaders, context: ChannelHandlerContext) {
        state.close(.unknown)
        context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
    }
}
