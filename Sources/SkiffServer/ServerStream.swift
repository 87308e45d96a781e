import DequeModule
import NIOCore
import SkiffCore
import SkiffWire
import SwiftProtobuf
import Synchronization

/// One call on a server connection, as its handler sees it.
///
/// Thread-safety invariant (why `@unchecked Sendable` is sound): the `var`s below the
/// "loop-confined" mark are read and written only on `eventLoop` (the connection handler's
/// loop); everything the handler's task touches is either immutable, behind `shared`, or the
/// thread-safe `inbound` queue. Operations that change loop state hop onto the loop.
final class ServerStream: ServerCallStream, CallCompletion, @unchecked Sendable {
    enum Outbound {
        case message(ByteBuffer)
        case trailers(StatusCode, String, Metadata)
    }

    struct Shared {
        /// The response's metadata and whether the handler's side has ended (`sendLast` or
        /// `finish`: later calls do nothing). Whether HEADERS reached the wire is `headersWritten`,
        /// on the loop.
        var response = ResponseState()
        /// Response bytes handed to the loop and not yet on the wire.
        var queuedBytes = 0
        var writeWaiter: CheckedContinuation<Void, any Error>?
        /// Set once the stream can take no more responses.
        var closed = false
        /// Request bytes taken by the handler and not yet credited back to the client.
        var uncreditedBytes = 0
    }

    let id: UInt32
    let eventLoop: any EventLoop
    let connection: NIOLoopBound<ServerConnectionHandler>
    /// The connection's bound on unread responses; every response message reserves from it.
    let budget: ResponseBudget
    let handler: RPCRouter.Handler
    let highWater: Int
    let peerMaxMessageSize: Int
    let creditThreshold: Int
    let inbound = AsyncQueue<ByteBuffer>()
    let shared = Mutex(Shared())

    // MARK: loop-confined
    /// Open from its HEADERS; half-closed when the client's side ends; closed with the status of
    /// the TRAILERS written, or by a reset or the connection's end.
    var state = StreamState(.open)
    var handlerRunning = false
    var handlerStarted = false
    var task: Task<Void, Never>?
    var messagesReceived = 0
    /// The request message being reassembled from its fragments.
    var request = MessageAssembler()
    /// Bytes of `request` counted in the connection's incomplete-request total.
    var countedPartialBytes = 0
    var recvWindow: InboundWindow
    var sendWindow: OutboundWindow
    var outbound = OutboundQueue()
    /// Queued responses wait for a window (the stream's, the connection's or the socket's):
    /// new ones are queued behind them, not written.
    var isBlocked = false
    /// The stream is in the connection's list of streams to pump when the connection's window or
    /// the socket opens (streams waiting only for their own window are not).
    var inBlockedList = false
    /// Leading bytes of `outbound` that wait only for this stream's window, counted in the
    /// connection's held bytes instead of its response budget (see
    /// ``ServerConfiguration/maxWindowHeldResponseBytes``).
    var heldBytes = 0
    var headersWritten = false
    var deadlineTimer: Scheduled<Void>?
    var context: ServerContext?
    /// When the HEADERS arrived, on the event loop's clock.
    let startTime: NIODeadline
    /// When the handler started (the rapid-reset defence measures a call's age from it).
    var handlerStartTime: NIODeadline?

    /// What a reader waiting on a closed stream gets; made once, since boxing an error allocates.
    static let closedError: any Error = CancellationError()

    /// Streams alive now, for leak tests.
    static let live = Atomic<Int>(0)

    deinit { Self.live.wrappingSubtract(1, ordering: .relaxed) }

    init(
        id: UInt32,
        eventLoop: any EventLoop,
        connection: NIOLoopBound<ServerConnectionHandler>,
        budget: ResponseBudget,
        handler: RPCRouter.Handler,
        highWater: Int,
        peerMaxMessageSize: Int,
        recvWindow: InboundWindow,
        sendWindow: OutboundWindow,
        startTime: NIODeadline
    ) {
        self.id = id
        self.eventLoop = eventLoop
        self.connection = connection
        self.budget = budget
        self.handler = handler
        self.highWater = highWater
        self.peerMaxMessageSize = peerMaxMessageSize
        self.recvWindow = recvWindow
        self.sendWindow = sendWindow
        self.startTime = startTime
        self.creditThreshold = recvWindow.batch
        Self.live.wrappingAdd(1, ordering: .relaxed)
    }

    // The handler usually runs on the connection's loop (`HandlerExecutor.eventLoop`): then the
    // operations below call the connection directly; only from another thread do they allocate a
    // closure and hop.

    private func enqueueOnLoop(_ item: Outbound, flush: Bool) {
        if eventLoop.inEventLoop {
            connection.value.enqueue(self, item, flush: flush)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.enqueue(self, item, flush: flush) }
        }
    }

    private func enqueueLastOnLoop(_ message: ByteBuffer) {
        if eventLoop.inEventLoop {
            connection.value.enqueueLast(self, message)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.enqueueLast(self, message) }
        }
    }

    private func finishOnLoop(_ status: StatusCode, _ message: String, _ metadata: Metadata) {
        if eventLoop.inEventLoop {
            connection.value.finish(self, status, message, metadata)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.finish(self, status, message, metadata) }
        }
    }

    /// The handler returned: the connection retires the stream on its event loop.
    func handlerFinished(hidden: (any Error)?) {
        if eventLoop.inEventLoop {
            connection.value.handlerFinished(self, hidden: hidden)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.handlerFinished(self, hidden: hidden) }
        }
    }

    func abort(_ status: StatusCode, message: String) {
        if eventLoop.inEventLoop {
            connection.value.abort(self, status, message)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.abort(self, status, message) }
        }
    }

    private func returnCreditOnLoop(_ credit: Int) {
        if eventLoop.inEventLoop {
            connection.value.returnStreamCredit(self, credit)
        } else {
            let connection = self.connection
            eventLoop.execute { connection.value.returnStreamCredit(self, credit) }
        }
    }

    // MARK: ResponseMetadataSink

    func setInitialMetadata(_ metadata: Metadata) {
        shared.withLock { $0.response.setInitialMetadata(metadata) }
    }

    func addTrailingMetadata(_ metadata: Metadata) {
        shared.withLock { $0.response.addTrailingMetadata(metadata) }
    }

    // MARK: ServerCallStream

    func receive<M: Message>(_ type: M.Type) async throws -> M? {
        guard let bytes = try await inbound.next() else { return nil }
        if handler.descriptor.kind == .clientStreaming || handler.descriptor.kind == .bidirectionalStreaming {
            let size = bytes.readableBytes
            let credit: Int = shared.withLock { shared in
                shared.uncreditedBytes += size
                guard shared.uncreditedBytes >= creditThreshold else { return 0 }
                defer { shared.uncreditedBytes = 0 }
                return shared.uncreditedBytes
            }
            if credit > 0 { returnCreditOnLoop(credit) }
        }
        return try M(request: bytes)
    }

    private func serialize<M: Message>(_ message: M) throws -> ByteBuffer {
        let buffer = try message.serializedBuffer()
        guard buffer.readableBytes <= peerMaxMessageSize else {
            throw RPCError(
                code: .resourceExhausted,
                message: "The response message of \(buffer.readableBytes) bytes exceeds the client's "
                    + "MAX_MESSAGE_SIZE of \(peerMaxMessageSize) bytes."
            )
        }
        return buffer
    }

    /// Reserves room for `size` bytes; returns whether the writer must wait for the client.
    /// `last` marks the response finished, so the ``finish(_:message:metadata:)`` that follows a
    /// `sendLast` costs nothing.
    private func reserve(_ size: Int, last: Bool = false) throws -> Bool {
        try shared.withLock { shared in
            guard !shared.closed, !shared.response.ended else { throw CancellationError() }
            // The loop writes the HEADERS when the message reaches the wire (`headers()`).
            _ = shared.response.willSendMessage()
            shared.queuedBytes += size
            if last { _ = shared.response.end(.ok, message: "", metadata: [:]) }
            return shared.queuedBytes > highWater
        }
    }

    /// The connection's budget: without a suspension point when there is room (the usual case).
    @inline(__always)
    private func reserveInBudget(_ size: Int) async -> Bool {
        if let granted = budget.tryReserve(size) { return granted }
        return await budget.reserve(size)
    }

    func send<M: Message>(_ message: M) async throws {
        let buffer = try serialize(message)
        // The connection's budget first (waiting while its client does not read), then the
        // stream's own high-water mark.
        guard await reserveInBudget(buffer.readableBytes) else { throw CancellationError() }
        let mustWait: Bool
        do {
            mustWait = try reserve(buffer.readableBytes)
        } catch {
            budget.release(buffer.readableBytes)
            throw error
        }
        enqueueOnLoop(.message(buffer), flush: true)
        if mustWait { try await waitForRoom() }
    }

    func sendLast<M: Message>(_ message: M) async throws {
        let buffer = try serialize(message)
        guard await reserveInBudget(buffer.readableBytes) else { throw CancellationError() }
        do {
            _ = try reserve(buffer.readableBytes, last: true)
        } catch {
            budget.release(buffer.readableBytes)
            throw error
        }
        enqueueLastOnLoop(buffer)
    }

    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        // After `sendLast` the OK trailers are already queued; a later finish would be dropped.
        let ended = shared.withLock { $0.response.end(status, message: message, metadata: metadata) != nil }
        guard ended else { return }
        finishOnLoop(status, message, metadata)
    }

    private func waitForRoom() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Next { case wait, resume, fail }
                let next: Next = shared.withLock { shared in
                    if shared.closed || Task.isCancelled { return .fail }
                    if shared.queuedBytes <= highWater { return .resume }
                    shared.writeWaiter = continuation
                    return .wait
                }
                switch next {
                case .wait: break
                case .resume: continuation.resume()
                case .fail: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = shared.withLock { shared in
                defer { shared.writeWaiter = nil }
                return shared.writeWaiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    // MARK: called on the loop

    /// Marks bytes as written to the wire, waking a waiting writer when there is room again.
    func didWrite(_ size: Int) {
        let waiter: CheckedContinuation<Void, any Error>? = shared.withLock { shared in
            shared.queuedBytes -= size
            guard shared.queuedBytes <= highWater else { return nil }
            defer { shared.writeWaiter = nil }
            return shared.writeWaiter
        }
        waiter?.resume()
    }

    /// Takes the response metadata for HEADERS (or for trailers-only responses).
    func takeInitialMetadata() -> Metadata {
        shared.withLock { $0.response.headers() }
    }

    func takeTrailingMetadata() -> Metadata {
        shared.withLock { $0.response.trailingMetadata }
    }

    /// Stops the stream taking responses: waiting writers and readers fail.
    func close() {
        let waiter: CheckedContinuation<Void, any Error>? = shared.withLock { shared in
            shared.closed = true
            defer { shared.writeWaiter = nil }
            return shared.writeWaiter
        }
        waiter?.resume(throwing: CancellationError())
        inbound.fail(Self.closedError)
        deadlineTimer?.cancel()
        deadlineTimer = nil
    }
}

/// A stream's responses waiting for a window, with the count of their message bytes (so that
/// what a stream holds is known without walking its queue).
struct OutboundQueue {
    private var items = Deque<ServerStream.Outbound>()
    /// Bytes of the queued messages.
    private(set) var messageBytes = 0

    var isEmpty: Bool { items.isEmpty }

    mutating func append(_ item: ServerStream.Outbound) {
        messageBytes += item.messageBytes
        items.append(item)
    }

    mutating func prepend(_ item: ServerStream.Outbound) {
        messageBytes += item.messageBytes
        items.prepend(item)
    }

    mutating func popFirst() -> ServerStream.Outbound? {
        guard let item = items.popFirst() else { return nil }
        messageBytes -= item.messageBytes
        return item
    }

    mutating func removeAll() {
        items.removeAll()
        messageBytes = 0
    }
}

extension ServerStream.Outbound {
    var messageBytes: Int {
        if case .message(let bytes) = self { return bytes.readableBytes }
        return 0
    }
}
