public import SwiftProtobuf
import Synchronization

/// A client transport that calls a router in the same process, with no socket.
///
/// Services that share a process call each other through their typed clients over this
/// transport: the same call semantics (statuses, metadata, deadlines, cancellation,
/// interceptors) as over TCP, without serialisation or a network hop. Every call goes through a
/// ``CallRunner``, as a server's calls do: admission, the deadline, the handler's task (which
/// inherits the caller's task-local values) and its cancellation are the runner's.
public struct InProcessTransport: ClientTransport {
    /// Admits and runs the calls.
    public let runner: CallRunner
    /// The peer the handlers see.
    public let peer: String

    /// The router calls go to.
    public var router: RPCRouter { runner.router }
    /// Server interceptors run around every handler, as a server would.
    public var interceptors: [any ServerInterceptor] { runner.interceptors }

    /// A transport whose calls `runner` admits and runs (to count them in a server's metrics, say).
    public init(runner: CallRunner, peer: String = "in-process") {
        self.runner = runner
        self.peer = peer
    }

    public init(router: RPCRouter, interceptors: [any ServerInterceptor] = [], peer: String = "in-process") {
        self.init(runner: CallRunner(router: router, interceptors: interceptors), peer: peer)
    }

    public init(services: [any RegistrableService], interceptors: [any ServerInterceptor] = []) {
        self.init(router: RPCRouter(services: services), interceptors: interceptors)
    }

    /// Admits a call as a server would and starts its handler; `requests` are queued first.
    private func start(
        _ method: MethodDescriptor,
        _ options: CallOptions,
        requests: [any Message] = [],
        last: Bool = false
    ) throws -> (call: InProcessServerCall, timeout: Duration?) {
        var metadata = options.metadata
        if let timeout = options.timeout { metadata.add("grpc-timeout", GRPCTimeout.format(timeout)) }
        let admitted: CallAdmission
        switch runner.admit(path: method.path, metadata: metadata) {
        case .failure(let rejection): throw RPCError(code: rejection.status, message: rejection.message)
        case .success(let admission): admitted = admission
        }
        let call = InProcessServerCall()
        for request in requests { call.requests.push(request) }
        if last { call.requests.finish() }
        let context = ServerContext(
            descriptor: admitted.handler.descriptor,
            metadata: metadata,
            peer: peer,
            deadline: admitted.timeout.map { ContinuousClock.now.advanced(by: $0) },
            streamID: 0,
            sink: call
        )
        let runner = self.runner
        let peer = self.peer
        let descriptor = admitted.handler.descriptor
        let started = ContinuousClock.now
        call.deadline(runner.opened(call, timeout: admitted.timeout, timers: TaskDeadlineTimers()))
        call.run(
            runner.start(
                CallRunner.Call(handler: admitted.handler, stream: call, context: context) { hidden in
                    if let hidden { runner.handlerFailed(descriptor, streamID: 0, error: hidden) }
                    // A handler that ended without finishing (cannot normally happen) ends the call.
                    call.finish(.internal, message: "The handler ended without a status.", metadata: [:])
                    runner.finished(
                        descriptor,
                        streamID: 0,
                        peer: peer,
                        status: call.status ?? .cancelled,
                        duration: ContinuousClock.now - started
                    )
                }
            )
        )
        return (call, admitted.timeout)
    }

    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        let (call, timeout) = try start(method, options, requests: [request], last: true)
        try await withOptionalDeadline(timeout) {
            await withTaskCancellationHandler {
                await call.handlerFinished()
            } onCancel: {
                call.abort(.cancelled, message: "The client cancelled the call.")
            }
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
        let (call, timeout) = try start(method, options)
        // However the caller's side ends (the body returns or throws, the caller is cancelled,
        // the deadline passes), a handler still running is cancelled, and the call returns once
        // it has stopped.
        do {
            let result = try await streamingBody(call, timeout, requests: requests, body: body)
            call.abort(.cancelled, message: "The client ended the call.")
            await call.handlerFinished()
            return result
        } catch {
            call.abort(.cancelled, message: "The client ended the call.")
            await call.handlerFinished()
            throw error
        }
    }

    private func streamingBody<Request: Message, Response: Message, Result: Sendable>(
        _ call: InProcessServerCall,
        _ timeout: Duration?,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await withOptionalDeadline(timeout) {
            try await withThrowingTaskGroup(of: Void.self) { group in
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
    private struct State {
        var response = ResponseState()
        var status: StatusCode?
        var handler: Task<Void, Never>?
        var deadline: Task<Void, Never>?
        var aborted = false
    }
    private let state = Mutex(State())

    /// The status the call ended with, once it has.
    var status: StatusCode? { state.withLock { $0.status } }

    /// Keeps the deadline's timer, cancelled when the call ends.
    func deadline(_ timer: Task<Void, Never>?) {
        guard let timer else { return }
        let ended = state.withLock { state in
            state.deadline = timer
            return state.status != nil
        }
        if ended { timer.cancel() }
    }

    /// Keeps the handler's task, cancelled if the call is aborted (even before this).
    func run(_ task: Task<Void, Never>) {
        let aborted = state.withLock { state in
            state.handler = task
            return state.aborted
        }
        if aborted { task.cancel() }
    }

    /// Waits until the handler has returned.
    func handlerFinished() async {
        await state.withLock { $0.handler }?.value
    }

    func setInitialMetadata(_ metadata: Metadata) {
        state.withLock { $0.response.setInitialMetadata(metadata) }
    }

    func addTrailingMetadata(_ metadata: Metadata) {
        state.withLock { $0.response.addTrailingMetadata(metadata) }
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
            guard !state.response.ended else { throw CancellationError() }
            return state.response.willSendMessage()
        }
        if let headers { responses.push(.metadata(headers)) }
        responses.push(.message(message))
    }

    func sendLast<M: Message>(_ message: M) async throws {
        try await send(message)
        finish(.ok, message: "", metadata: [:])
    }

    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        let (end, deadline) = state.withLock { state in
            let end = state.response.end(status, message: message, metadata: metadata)
            if end != nil { state.status = status }
            return (end, state.deadline)
        }
        guard let end else { return }
        deadline?.cancel()
        responses.push(.end(end.status, end.message, end.metadata))
        responses.finish()
        requests.fail(CancellationError())
    }

    func abort(_ status: StatusCode, message: String) {
        finish(status, message: message, metadata: [:])
        let handler = state.withLock { state in
            state.aborted = true
            return state.handler
        }
        handler?.cancel()
    }
}
