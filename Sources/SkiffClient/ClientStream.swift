import DequeModule
import NIOCore
import SkiffCore
import SkiffWire
import Synchronization

/// What a unary call gets back from the event loop; the caller's task decodes the message.
struct UnaryResult: Sendable {
    var headers: Metadata
    var message: ByteBuffer
    var trailers: Metadata
}

/// One piece of a streaming response, handed from the event loop to the caller's task.
enum ResponsePart: Sendable {
    case headers(Metadata)
    case message(ByteBuffer)
    case trailers(Metadata)
}

/// A request message waiting to go out, or partly sent.
struct OutboundMessage {
    /// The bytes not sent yet.
    var bytes: ByteBuffer
    /// Whether its bytes still count against the request writer's ``RequestGate``.
    var gated: Bool
}

/// The state of one call: its request, its response sink, its deadline, and the state of its
/// current attempt (a stream on one connection). A call that the server did not process is
/// retried transparently with a new attempt, possibly on another connection; a call of a
/// ``BalancedClientTransport`` may also move to another address's connection manager (all of
/// them share one event loop), see ``failover``.
///
/// Concurrency invariant (why `@unchecked Sendable` is sound): every stored `var` is read and
/// written only on ``loop``, the single event loop that all connections of the owning
/// ``ClientConnection`` run on (and, for a balanced call, all connections of every address of the
/// owning ``BalancedClientTransport``, which is why the call may move between their managers). The caller's task touches only the `let` properties, which are
/// immutable or themselves thread-safe (``AsyncQueue``, ``RequestGate``, `Atomic`, `Mutex`), and
/// reaches the rest by `loop.execute`.
final class ClientStream: @unchecked Sendable {
    let loop: any EventLoop
    /// The manager attempts are routed through; it changes only when a balanced call fails over
    /// to another address (on ``loop``, which every address's manager shares).
    private(set) var manager: ConnectionManager
    let path: String
    let metadata: Metadata
    let deadline: NIODeadline?
    let timeout: Duration?
    let isUnary: Bool

    // Task-side pieces of a streaming call (thread-safe).
    let responses: AsyncQueue<ResponsePart>?
    let gate: RequestGate?
    let unreturnedCredit = Atomic<Int>(0)
    let trailers = Mutex<Metadata>([:])
    let creditThreshold: Int

    // Call state (loop only).
    private var unaryContinuation: UnsafeContinuation<UnaryResult, any Error>?
    private(set) var started = false
    private(set) var finished = false
    var attempts = 0
    private var deadlineCallback: NIOScheduledCallback?
    /// Request messages not handed to an attempt yet.
    var unsent: Deque<OutboundMessage> = []
    /// Request messages handed to the current attempt, kept until the server accepts the stream
    /// (streaming calls; a unary call keeps its one request in ``unaryRequest``).
    var retained: [ByteBuffer] = []
    /// A unary call's request, for a transparent retry.
    private(set) var unaryRequest: ByteBuffer?
    var retainedBytes = 0
    var retryable = true
    /// Whether a server may have processed the call: set when an attempt's HEADERS go out, cleared
    /// when the server says that attempt was not processed (a refused stream, a stream above a
    /// GOAWAY's last stream id). A call fails for good after an attempt that may have been
    /// processed, so one flag covers every attempt so far.
    var mayHaveBeenProcessed = false
    /// Where a call of a ``BalancedClientTransport`` goes when it fails with UNAVAILABLE without
    /// having been processed; `nil` for calls of a plain ``ClientConnection``.
    var failover: CallFailover?
    var requestsEnded = false
    var responseHeaders: Metadata?
    var responseMessage: ByteBuffer?

    // Attempt state (loop only), reset for every attempt.
    var handler: ClientConnectionHandler?
    var streamID: UInt32 = 0
    /// The current attempt's stream: idle until its HEADERS go, half-closed once the requests
    /// have ended on the wire. Back to idle when the attempt is detached.
    var wire = StreamState()
    var sendWindow = OutboundWindow(size: 0)
    var recvWindow = InboundWindow(size: 0)
    var pending: Deque<OutboundMessage> = []
    var pendingEnd = false
    var accepted = false
    /// The response message being reassembled from its fragments.
    var response = MessageAssembler()
    var blockedOnConnection = false

    private init(
        manager: ConnectionManager,
        path: String,
        options: CallOptions,
        isUnary: Bool
    ) {
        self.loop = manager.loop
        self.manager = manager
        self.path = path
        self.metadata = options.metadata
        self.timeout = options.timeout
        self.deadline = options.timeout.map { NIODeadline.now() + TimeAmount($0) }
        self.isUnary = isUnary
        self.responses = isUnary ? nil : AsyncQueue()
        self.gate = isUnary ? nil : RequestGate(limit: manager.configuration.requestBufferLimit)
        self.creditThreshold = max(1, Int(manager.configuration.settings.initialStreamWindow) / 4)
    }

    /// A unary call with its serialised request.
    convenience init(unary manager: ConnectionManager, path: String, options: CallOptions, request: ByteBuffer) {
        self.init(manager: manager, path: path, options: options, isUnary: true)
        unsent.append(OutboundMessage(bytes: request, gated: false))
        unaryRequest = request
        requestsEnded = true
    }

    /// A streaming call; request messages arrive through ``write(_:)``.
    convenience init(streaming manager: ConnectionManager, path: String, options: CallOptions) {
        self.init(manager: manager, path: path, options: options, isUnary: false)
    }

    // MARK: Start, end, retry (loop)

    /// Starts a unary call: its result goes to `continuation`.
    func startUnary(_ continuation: UnsafeContinuation<UnaryResult, any Error>) {
        unaryContinuation = continuation
        start()
    }

    /// Schedules the deadline and routes the call to a connection.
    func start() {
        loop.preconditionInEventLoop()
        guard !started else { return }
        started = true
        if let error = earlyError {
            // Cancelled before it started.
            earlyError = nil
            deliver(.failure(error))
            return
        }
        if let deadline {
            deadlineCallback = try? loop.scheduleCallback(at: deadline, handler: self)
        }
        manager.route(self)
    }

    private var earlyError: RPCError?

    /// Ends the call with an error: resets its stream (RST_STREAM(CANCELLED)) if one is open.
    func cancel(_ error: RPCError) {
        guard !finished else { return }
        if let handler, !wire.isIdle {
            handler.resetStream(self, code: .cancelled, error: error)
        } else {
            fail(error)
        }
    }

    /// Ends the call with an error; the stream (if any) has already been taken care of. A balanced
    /// call that no server processed moves to another address instead, when one is left.
    func fail(_ error: RPCError) {
        if error.code == .unavailable, !mayHaveBeenProcessed, retryable, started, !finished, failover != nil,
            let next = failover?.next(after: manager, error: error)
        {
            moveUnprocessed(to: next)
            return
        }
        deliver(.failure(error))
    }

    /// Starts the call again through another address's manager: what the previous attempts were
    /// handed goes out again, as for a transparent retry, and that address gets its own transparent
    /// retries. The previous attempt is already detached.
    private func moveUnprocessed(to next: ConnectionManager) {
        precondition(next.loop === loop, "a call moves only between managers on its own event loop")
        restoreRetainedRequests()
        attempts = 0
        manager = next
        manager.route(self)
    }

    /// Puts the request messages handed to previous attempts back in front of the unsent ones.
    private func restoreRetainedRequests() {
        if let unaryRequest {
            unsent.removeAll()
            unsent.append(OutboundMessage(bytes: unaryRequest, gated: false))
        }
        for buffer in retained.reversed() { unsent.prepend(OutboundMessage(bytes: buffer, gated: false)) }
        retained.removeAll()
        retainedBytes = 0
    }

    /// Ends a call that ended with TRAILERS.
    func complete(status: StatusCode, message: String, trailers: Metadata) {
        guard status == .ok else {
            deliver(.failure(RPCError(code: status, message: message, metadata: trailers)))
            return
        }
        if isUnary {
            guard let responseMessage else {
                deliver(.failure(RPCError(code: .internal, message: "The server sent no response message.")))
                return
            }
            let result = UnaryResult(headers: responseHeaders ?? [:], message: responseMessage, trailers: trailers)
            deliver(.success(result))
        } else {
            self.trailers.withLock { $0 = trailers }
            finished = true
            finishCommon()
            responses?.push(.trailers(trailers))
            responses?.finish()
        }
    }

    private func deliver(_ result: Result<UnaryResult, RPCError>) {
        guard !finished else { return }
        guard started else {
            // Cancelled before `start` ran: remember the error for it.
            if case .failure(let error) = result, earlyError == nil { earlyError = error }
            return
        }
        finished = true
        finishCommon()
        if isUnary {
            let continuation = unaryContinuation
            unaryContinuation = nil
            switch result {
            case .success(let value): continuation?.resume(returning: value)
            case .failure(let error): continuation?.resume(throwing: error)
            }
        } else if case .failure(let error) = result {
            if error.code == .cancelled || error.code == .deadlineExceeded {
                responses?.fail(error)
            } else {
                responses?.finish(throwing: error)
            }
        }
    }

    private func finishCommon() {
        deadlineCallback?.cancel()
        deadlineCallback = nil
        unsent.removeAll()
        retained.removeAll()
        unaryRequest = nil
        pending.removeAll()
        gate?.close()
    }

    /// The server did not process the call (refused, or above a GOAWAY's last stream id): retry it
    /// on a new attempt, or fail it with UNAVAILABLE. The previous attempt is already detached.
    func retryUnprocessed(reason: String) {
        guard !finished else { return }
        // The server said so: no attempt so far was processed.
        mayHaveBeenProcessed = false
        guard retryable, attempts <= manager.configuration.maxTransparentRetries else {
            fail(RPCError(code: .unavailable, message: reason))
            return
        }
        // Put the retained messages back in front of the unsent ones; they were released already.
        restoreRetainedRequests()
        if attempts <= 1 {
            manager.route(self)
        } else {
            let delay = TimeAmount.milliseconds(Int64(10) << min(attempts - 2, 4))
            loop.assumeIsolated().scheduleTask(in: delay) { self.manager.route(self) }
        }
    }

    /// Clears the attempt state (the handler has removed the stream from its table).
    func detach() {
        handler = nil
        streamID = 0
        wire = StreamState()
        for message in pending where message.gated { gate?.release(message.bytes.readableBytes) }
        pending.removeAll()
        pendingEnd = false
        accepted = false
        response.reset()
        blockedOnConnection = false
    }

    /// The server has accepted the stream: it can no longer be retried, so the request copies go.
    func markAccepted() {
        guard !accepted else { return }
        accepted = true
        retryable = false
        retained.removeAll()
        retainedBytes = 0
        unaryRequest = nil
    }

    /// Records a message handed to an attempt, for a possible retry.
    func retain(_ buffer: ByteBuffer) {
        guard retryable, !accepted, !isUnary else { return }  // unary: `unaryRequest` is the copy
        retainedBytes += buffer.readableBytes
        if retainedBytes > manager.configuration.retryBufferLimit, !isUnary {
            retryable = false
            retained.removeAll()
        } else {
            retained.append(buffer)
        }
    }

    // MARK: Request side of streaming calls

    /// A request message from the writer (loop).
    func receiveRequest(_ buffer: ByteBuffer) {
        guard !finished, !requestsEnded else {
            gate?.release(buffer.readableBytes)
            return
        }
        let message = OutboundMessage(bytes: buffer, gated: true)
        if let handler, !wire.isIdle {
            handler.enqueueMessage(message, on: self)
        } else {
            unsent.append(message)
        }
    }

    /// The request producer returned (loop).
    func endRequests() {
        guard !finished, !requestsEnded else { return }
        requestsEnded = true
        if let handler, !wire.isIdle { handler.endRequests(on: self) }
    }

    /// Task side: serialises nothing, just hands the buffer over and waits while too much is queued.
    func write(_ buffer: ByteBuffer) async throws {
        guard let gate, gate.reserve(buffer.readableBytes) else { return }
        loop.execute { self.receiveRequest(buffer) }
        try await gate.waitUntilBelowLimit()
    }

    // MARK: Response side of streaming calls (task)

    /// Task side: notes that the application took a message of `size` bytes; returns the credit
    /// once a quarter of the window is owed.
    func consumed(_ size: Int) {
        let owed = unreturnedCredit.add(size, ordering: .relaxed).newValue
        if owed >= creditThreshold { flushCredit() }
    }

    /// Task side: returns the owed stream credit (called before waiting, so a partly received
    /// message can always complete).
    func flushCredit() {
        let owed = unreturnedCredit.exchange(0, ordering: .relaxed)
        guard owed > 0 else { return }
        loop.execute {
            guard !self.finished, let handler = self.handler, !self.wire.isIdle else { return }
            handler.returnStreamCredit(owed, on: self)
        }
    }

    /// The metadata the HEADERS frame carries: `grpc-timeout` (the time left) first, then the
    /// caller's entries. `nil` when the deadline has passed.
    func headerMetadata() -> Metadata? {
        guard let deadline else { return metadata }
        let left = deadline - NIODeadline.now()
        guard left.nanoseconds > 0 else { return nil }
        var result = Metadata()
        result.add("grpc-timeout", GRPCTimeout.format(.nanoseconds(left.nanoseconds)))
        result.add(contentsOf: metadata)
        return result
    }
}

extension ClientStream: NIOScheduledCallbackHandler {
    /// The deadline passed: reset the stream and fail with DEADLINE_EXCEEDED.
    func handleScheduledCallback(eventLoop: some EventLoop) {
        deadlineCallback = nil
        let text = timeout.map { "The deadline of \($0) passed." } ?? "The deadline passed."
        cancel(RPCError(code: .deadlineExceeded, message: text))
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanos = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = .nanoseconds(nanos.overflow ? Int64.max : nanos.partialValue &+ attoseconds / 1_000_000_000)
    }
}
