import NIOCore
import NIOHTTP1
import SkiffCore
import SkiffServer
import SkiffWire

/// One gRPC-Web or Connect call over HTTP: reads the request's body as the protocol frames it,
/// presents the call to the router through the server's ``SkiffCore/CallRunner``, and writes the
/// response in the protocol's form. Lives on the connection's event loop.
final class HTTPExchange: ResponseWriter {
    /// The protocol and encoding of a call.
    enum Kind: Equatable {
        /// gRPC-Web: enveloped messages both ways, the status in a trailers frame at the end.
        case grpcWeb(GRPCWebWire.Encoding)
        /// A Connect unary call: the body is the message; an error is an HTTP status with JSON.
        case connectUnary(json: Bool)
        /// A Connect streaming call: enveloped messages, then an end-of-stream message.
        case connectStreaming(json: Bool)

        /// The response's content type.
        var contentType: String {
            switch self {
            case .grpcWeb(.binary): "application/grpc-web+proto"
            case .grpcWeb(.text): "application/grpc-web-text+proto"
            case .connectUnary(let json): ConnectWire.responseContentType(.unary(json: json))
            case .connectStreaming(let json): ConnectWire.responseContentType(.streaming(json: json))
            }
        }

        /// The header naming the request's compression.
        var encodingHeader: String {
            switch self {
            case .grpcWeb: "grpc-encoding"
            case .connectUnary: "content-encoding"
            case .connectStreaming: "connect-content-encoding"
            }
        }

        /// The header of a response naming the compressions the server reads.
        var acceptEncodingHeader: String {
            switch self {
            case .grpcWeb: "grpc-accept-encoding"
            case .connectUnary: "accept-encoding"
            case .connectStreaming: "connect-accept-encoding"
            }
        }

        var isConnect: Bool {
            if case .grpcWeb = self { return false }
            return true
        }

        var codec: MessageCodec {
            switch self {
            case .grpcWeb: .proto
            case .connectUnary(let json), .connectStreaming(let json): json ? .json : .proto
            }
        }
    }

    let kind: Kind
    let handler: HTTPCallHandler
    /// The request's `Origin`, when allowed: responses then carry CORS headers.
    let origin: String?
    let streamID: UInt32
    /// Whether the client keeps the HTTP/1.1 connection open after this request.
    let keepAlive: Bool
    /// Whether the request's body has all arrived.
    private(set) var requestEnded = false

    private var settings: HTTPCallSettings { handler.settings }
    private var state = StreamState()
    private var call: HTTPServerCall<HTTPExchange>?
    private var descriptor: MethodDescriptor?
    private var task: Task<Void, Never>?
    private var deadlineTimer: Scheduled<Void>?
    /// Ends a call whose request stops arriving (``SkiffServer/ServerConfiguration/requestTimeout``),
    /// as on gRPC.
    private var requestTimer: Scheduled<Void>?
    private var handlerRunning = false
    private var startTime = NIODeadline.now()
    private var reader: GRPCMessageReader
    private var text: Base64TextDecoder?
    /// A Connect unary request's body (at most the message limit).
    private var unaryBody = ByteBuffer()
    private var isGet = false
    private var headSent = false
    /// A Connect unary response's message, held until its status is known.
    private var pending: (metadata: Metadata, message: ByteBuffer)?

    init(kind: Kind, handler: HTTPCallHandler, origin: String?, streamID: UInt32, keepAlive: Bool) {
        self.kind = kind
        self.handler = handler
        self.origin = origin
        self.streamID = streamID
        self.keepAlive = keepAlive
        self.reader = GRPCMessageReader(maxMessageSize: handler.settings.maxMessageSize)
        if kind == .grpcWeb(.text) { text = Base64TextDecoder() }
    }

    // MARK: The request

    /// Admits and starts the call (or refuses it in the protocol's form).
    func start(path: String, metadata: Metadata, getMessage: [UInt8]?) {
        state.open()
        startTime = .now()
        guard let eventLoop = handler.context?.eventLoop else { return }
        let runner = settings.runner
        let admitted: CallAdmission
        switch runner.admit(path: path, metadata: metadata) {
        case .success(let admission): admitted = admission
        case .failure(let rejection): return refuse(rejection.status, rejection.message)
        }
        let method = admitted.handler.descriptor
        if let refusal = mismatch(method, get: getMessage != nil) {
            runner.rejected(runner.rejection(path: path, status: refusal.code, message: refusal.message))
            return refuse(refusal.code, refusal.message)
        }
        if let getMessage {
            isGet = true
            unaryBody = ByteBuffer(bytes: getMessage)
        }
        let call = HTTPServerCall(
            writer: NIOLoopBound(self, eventLoop: eventLoop),
            eventLoop: eventLoop,
            maxMessageSize: settings.maxMessageSize,
            budget: settings.budget,
            codec: kind.codec
        )
        self.call = call
        self.descriptor = method
        let context = ServerContext(
            descriptor: method,
            metadata: metadata,
            peer: handler.peer,
            deadline: admitted.timeout.map { ContinuousClock.now.advanced(by: $0) },
            streamID: streamID,
            drain: settings.drain,
            sink: call
        )
        deadlineTimer = runner.opened(call, timeout: admitted.timeout, timers: EventLoopDeadlineTimers(eventLoop))
        handlerRunning = true
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        task = runner.start(
            CallRunner.Call(handler: admitted.handler, stream: call, context: context, gate: settings.budget) {
                hidden in
                eventLoop.execute { loopBound.value.handlerFinished(hidden: hidden) }
            },
            executor: settings.executor
        )
        if method.kind != .bidirectionalStreaming { armRequestTimer() }
    }

    /// Why a method cannot be called the way the request does, if it cannot.
    private func mismatch(_ method: MethodDescriptor, get: Bool) -> RPCError? {
        switch kind {
        case .connectUnary where method.kind != .unary:
            return RPCError(
                code: .unimplemented,
                message: "\(method.path) is a streaming method: call it with application/connect+proto or +json."
            )
        case .connectStreaming where method.kind == .unary:
            return RPCError(
                code: .unimplemented,
                message: "\(method.path) is a unary method: call it with application/proto or application/json."
            )
        case .connectUnary where get && method.idempotency != .noSideEffects:
            return RPCError(
                code: .unimplemented,
                message: "\(method.path) has side effects: call it with POST (GET is for read-only methods)."
            )
        default:
            return nil
        }
    }

    /// The client's side ended: the request message or stream is whole.
    func requestEnd() {
        requestEnded = true
        requestTimer?.cancel()
        requestTimer = nil
        guard state.halfClose(.remote), let call else { return }
        switch kind {
        case .connectUnary:
            call.inbound.push(unaryBody)
            unaryBody = ByteBuffer()
        case .grpcWeb, .connectStreaming:
            if reader.isMidMessage || text?.isMidGroup == true {
                return fail(.invalidArgument, "The request ended in the middle of a message.")
            }
        }
        call.inbound.finish()
    }

    /// Part of the request's body.
    func requestBody(_ bytes: ByteBuffer) {
        guard state.remoteOpen, let call, !isGet else { return }
        var bytes = bytes
        if text != nil {
            guard let decoded = text!.decode(bytes.readableBytesView) else {
                return fail(.invalidArgument, "The application/grpc-web-text body is not base64.")
            }
            bytes = decoded
        }
        if case .connectUnary = kind {
            guard unaryBody.readableBytes + bytes.readableBytes <= settings.maxMessageSize else {
                return fail(
                    .resourceExhausted,
                    "request message of more than \(settings.maxMessageSize) bytes exceeds the limit"
                )
            }
            unaryBody.writeBuffer(&bytes)
            return
        }
        reader.append(bytes)
        while true {
            switch reader.next() {
            case .needMoreData:
                return
            case .message(let message):
                call.inbound.push(message)
                // A client-streaming request may pause up to the timeout between messages.
                if descriptor?.kind == .clientStreaming, requestTimer != nil { armRequestTimer() }
            case .tooLarge(let length):
                return fail(
                    .resourceExhausted,
                    "request message of \(length) bytes exceeds the limit of \(settings.maxMessageSize) bytes"
                )
            case .compressed:
                return fail(.internal, "a compressed request message without a \(kind.encodingHeader)")
            }
        }
    }

    private func armRequestTimer() {
        guard let context = handler.context else { return }
        requestTimer?.cancel()
        let timeout = settings.requestTimeout
        requestTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [self] in
            requestTimer = nil
            guard state.remoteOpen else { return }
            fail(.deadlineExceeded, "The request did not arrive within the server's request timeout of \(timeout).")
        }
    }

    // MARK: The response (on the event loop, from the call)

    func write(headers: Metadata?, message: ByteBuffer, end: ResponseState.End?) -> WriteOutcome {
        defer { if let end { finish(end) } }
        let size = message.readableBytes
        guard state.localOpen, handler.exchange === self else {
            settings.budget.release(size)
            return .closed
        }
        switch kind {
        case .connectUnary:
            // Held until the status is known: it decides the HTTP status.
            pending = (headers ?? [:], message)
            return .more
        case .grpcWeb(let encoding):
            if let headers { writeHead(.ok, metadata: headers) }
            var frame = envelope(message, flag: 0)
            if encoding == .text { frame = GRPCWebWire.encodeText(frame) }
            writeBody(frame, reserved: size)
        case .connectStreaming:
            if let headers { writeHead(.ok, metadata: headers) }
            writeBody(envelope(message, flag: 0), reserved: size)
        }
        return handler.isWritable ? .more : .wait
    }

    func whenWritable(_ promise: EventLoopPromise<Void>) {
        guard state.localOpen else { return promise.fail(CancellationError()) }
        handler.whenWritable(promise)
    }

    func finish(_ end: ResponseState.End) {
        guard state.close(end.status) else { return }
        deadlineTimer?.cancel()
        requestTimer?.cancel()
        guard handler.exchange === self else {
            if let pending { settings.budget.release(pending.message.readableBytes) }
            return retireIfDone()
        }
        switch kind {
        case .connectUnary:
            finishUnary(end)
        case .grpcWeb(let encoding):
            if !headSent { writeHead(.ok, metadata: [:]) }
            var frame = GRPCWebWire.trailersFrame(status: end.status, message: end.message, metadata: end.metadata)
            if encoding == .text { frame = GRPCWebWire.encodeText(frame) }
            writeBody(frame, reserved: 0)
        case .connectStreaming:
            if !headSent { writeHead(.ok, metadata: [:]) }
            writeBody(
                ConnectWire.endOfStreamEnvelope(end.status, message: end.message, metadata: end.metadata),
                reserved: 0
            )
        }
        endResponse()
        call?.inbound.fail(CancellationError())
        retireIfDone()
    }

    private func finishUnary(_ end: ResponseState.End) {
        let trailers = end.metadata
        if end.status == .ok, let pending {
            self.pending = nil
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: String(pending.message.readableBytes))
            writeHead(.ok, metadata: pending.metadata, trailers: trailers, extra: headers)
            writeBody(pending.message, reserved: pending.message.readableBytes)
            return
        }
        var status = end.status
        var message = end.message
        if status == .ok {
            status = .internal
            message = "The handler ended without a response message."
        }
        var initial = Metadata()
        if let pending {
            settings.budget.release(pending.message.readableBytes)
            initial = pending.metadata
            self.pending = nil
        }
        let body = ByteBuffer(string: ConnectWire.errorJSON(status, message: message))
        var headers = HTTPHeaders()
        headers.add(name: "content-length", value: String(body.readableBytes))
        writeHead(
            HTTPResponseStatus(statusCode: ConnectWire.httpStatus(status)),
            metadata: initial,
            trailers: trailers,
            extra: headers,
            contentType: "application/json"
        )
        writeBody(body, reserved: 0)
    }

    private func writeHead(
        _ status: HTTPResponseStatus,
        metadata: Metadata,
        trailers: Metadata = [:],
        extra: HTTPHeaders = [:],
        contentType: String? = nil
    ) {
        headSent = true
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: contentType ?? kind.contentType)
        headers.add(contentsOf: extra)
        GRPCHeaders.append(metadata, to: &headers, prefix: "")
        GRPCHeaders.append(trailers, to: &headers, prefix: "trailer-")
        if handler.closesAfter(self) { headers.add(name: "connection", value: "close") }
        HTTPCallRequest.addCORS(origin: origin, to: &headers)
        handler.write(
            .head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)),
            for: self,
            promise: nil
        )
    }

    private func writeBody(_ bytes: ByteBuffer, reserved: Int) {
        guard let eventLoop = handler.context?.eventLoop else {
            return settings.budget.release(reserved)
        }
        let sent = eventLoop.makePromise(of: Void.self)
        if reserved > 0 {
            let budget = settings.budget
            sent.futureResult.whenComplete { _ in budget.release(reserved) }
        }
        handler.write(.body(.byteBuffer(bytes)), for: self, promise: sent)
    }

    private func endResponse() {
        guard let eventLoop = handler.context?.eventLoop else { return }
        let ended = eventLoop.makePromise(of: Void.self)
        handler.write(.end(nil), for: self, promise: ended)
        handler.responseEnded(self, written: ended.futureResult)
    }

    private func envelope(_ message: ByteBuffer, flag: UInt8) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.reserveCapacity(5 + message.readableBytes)
        frame.writeInteger(flag)
        frame.writeInteger(UInt32(message.readableBytes))
        var message = message
        frame.writeBuffer(&message)
        return frame
    }

    // MARK: Ending

    func abort(_ status: StatusCode, _ message: String) {
        call?.finish(status, message: message, metadata: [:])
        task?.cancel()
    }

    private func fail(_ status: StatusCode, _ message: String) {
        guard call != nil else { return }
        abort(status, message)
    }

    /// A refusal before the call began, in the protocol's form.
    private func refuse(_ status: StatusCode, _ message: String) {
        state.close(status)
        handler.refuse(self, answer: HTTPAnswer.error(kind, status, message))
    }

    /// The connection went away: a call still running is cancelled.
    func cancel() {
        requestTimer?.cancel()
        deadlineTimer?.cancel()
        guard state.close(.cancelled) else { return retireIfDone() }
        call?.closed()
        task?.cancel()
        retireIfDone()
    }

    private func handlerFinished(hidden: (any Error)?) {
        handlerRunning = false
        task = nil
        if let hidden, let descriptor {
            settings.runner.handlerFailed(descriptor, streamID: streamID, error: hidden)
        }
        if !state.isClosed { call?.finish(.internal, message: "The handler ended without a status.", metadata: [:]) }
        retireIfDone()
    }

    private func retireIfDone() {
        // A call is counted once: `descriptor` is set while it is open.
        guard state.isClosed, !handlerRunning, let descriptor else { return }
        self.descriptor = nil
        settings.runner.finished(
            descriptor,
            streamID: streamID,
            peer: handler.peer,
            status: state.status ?? .cancelled,
            duration: .nanoseconds((NIODeadline.now() - startTime).nanoseconds)
        )
        call = nil
    }
}
