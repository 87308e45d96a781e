public import SwiftProtobuf
import Synchronization

/// A client transport that calls a router in the same process, with no socket.
///
/// Services that share a process call each other through their typed clients over this
/// transport: the same call semantics (statuses, metadata, deadlines, cancellation,
/// interceptors) as over TCP, without serialisation or a network hop. A unary call runs the
/// handler on the caller's task.
public struct InProcessTransport: ClientTransport {
    /// The router calls go to.
    public let router: RPCRouter
    /// Server interceptors run around every handler, as a server would.
    public let interceptors: [any ServerInterceptor]
    /// The peer the handlers see.
    public let peer: String

    public init(router: RPCRouter, interceptors: [any ServerInterceptor] = [], peer: String = "in-process") {
        self.router = router
        self.interceptors = interceptors
        self.peer = peer
    }

    public init(services: [any RegistrableService], interceptors: [any ServerInterceptor] = []) {
        self.init(router: RPCRouter(services: services), interceptors: interceptors)
    }

    /// Admits a call as a server would (``CallAdmission``) and makes its context.
    private func admit(
        _ method: MethodDescriptor,
        _ options: CallOptions,
        _ call: InProcessServerCall
    ) throws -> (handler: RPCRouter.Handler, context: ServerContext, timeout: Duration?) {
        var metadata = options.metadata
        if let timeout = options.timeout { metadata.add("grpc-timeout", GRPCTimeout.format(timeout)) }
        switch CallAdmission.admit(path: method.path, metadata: metadata, router: router) {
        case .failure(let rejection):
            throw RPCError(code: rejection.status, message: rejection.message)
        case .success(let admitted):
            let context = ServerContext(
                descriptor: admitted.handler.descriptor,
                metadata: metadata,
                peer: peer,
                deadline: admitted.timeout.map { ContinuousClock.now.advanced(by: $0) },
                streamID: 0,
                sink: call
            )
            return (admitted.handler, context, admitted.timeout)
        }
    }

    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        let call = InProcessServerCall()
        let (handler, context, timeout) = try admit(method, options, call)
        call.requests.push(request)
        call.requests.finish()
        try await withOptionalDeadline(timeout) {
            _ = await handler.execute(call: call, context: context, interceptors: interceptors)
        }
        var metadata = Metadata()
        var message: Response?
        while let part = call.responses.poll() {
            switch part {
            case .metadata(let m): metadata = m
            case .message(let m): message = m as? Response
            case .end(let code, let text, let trailers):
                guard code == .ok else { throw RPCError(code: code, message: text, metadata: trailers) }
                guard let message else {
                    throw RPCError(code: .internal, message: "The server sent no response message.")
                }
                return ClientResponse(message: message, metadata: metadata, trailingMetadata: trailers)
            }
        }
        throw RPCError(code: .internal, message: "The call ended without a status.")
    }

    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        let call = InProcessServerCall()
        let (handler, context, timeout) = try admit(method, options, call)
        let interceptors = self.interceptors
        return try await withOptionalDeadline(timeout) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = await handler.execute(call: call, context: context, interceptors: interceptors)
                }
                group.addTask {
                    do {
                        try await requests(
                            RPCWriter { message in
                                guard call.requests.push(message) else { return }
                            }
                        )
                        call.requests.finish()
                    } catch {
                        call.requests.finish(throwing: RPCError(code: .cancelled, message: "The client cancelled."))
                    }
                }
                defer { group.cancelAll() }
                let trailers = Mutex<Metadata?>(nil)
                var metadata = Metadata()
                switch try await call.responses.next() {
                case .metadata(let m): metadata = m
                case .end(let code, let text, let t):
                    guard code == .ok else { throw RPCError(code: code, message: text, metadata: t) }
                    trailers.withLock { $0 = t }
                case .message, nil:
                    throw RPCError(code: .internal, message: "The server sent a message before its metadata.")
                }
                let ended = trailers.withLock { $0 != nil }
                let messages = RPCAsyncSequence<Response> {
                    if ended { return nil }
                    switch try await call.responses.next() {
                    case .message(let m): return m as? Response
                    case .end(let code, let text, let t):
                        trailers.withLock { $0 = t }
                        guard code == .ok else { throw RPCError(code: code, message: text, metadata: t) }
                        return nil
                    case .metadata, nil:
                        throw RPCError(code: .internal, message: "The response ended without a status.")
                    }
                }
                let response = StreamingClientResponse(metadata: metadata, messages: messages) {
                    trailers.withLock { $0 } ?? [:]
                }
                return try await body(response)
            }
        }
    }
}

/// Runs `body`, failing with DEADLINE_EXCEEDED (and cancelling it) when the timeout passes.
package func withOptionalDeadline<T: Sendable>(
    _ timeout: Duration?,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    guard let timeout else { return try await body() }
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw RPCError(code: .deadlineExceeded, message: "The deadline of \(timeout) passed.")
        }
        return value
    }
}

private enum ResponsePart: Sendable {
    case metadata(Metadata)
    case message(any Message)
    case end(StatusCode, String, Metadata)
}

private final class InProcessServerCall: ServerCallStream {
    let requests = AsyncQueue<any Message>()
    let responses = AsyncQueue<ResponsePart>()
    private let state = Mutex(ResponseState())

    func setInitialMetadata(_ metadata: Metadata) {
        state.withLock { $0.setInitialMetadata(metadata) }
    }

    func addTrailingMetadata(_ metadata: Metadata) {
        state.withLock { $0.addTrailingMetadata(metadata) }
    }

    func receive<M: Message>(_ type: M.Type) async throws -> M? {
        guard let next = try await requests.next() else { return nil }
        guard let message = next as? M else {
            throw RPCError(code: .invalidArgument, message: "The request is not a \(M.protoMessageName).")
        }
        return message
    }

    func send<M: Message>(_ message: M) async throws {
        try Task.checkCancellation()
        let headers: Metadata? = try state.withLock { state in
            guard !state.ended else { throw CancellationError() }
            return state.willSendMessage()
        }
        if let headers { responses.push(.metadata(headers)) }
        responses.push(.message(message))
    }

    func sendLast<M: Message>(_ message: M) async throws {
        try await send(message)
        finish(.ok, message: "", metadata: [:])
    }

    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        guard let end = state.withLock({ $0.end(status, message: message, metadata: metadata) }) else { return }
        responses.push(.end(end.status, end.message, end.metadata))
        responses.finish()
        requests.fail(CancellationError())
    }
}
