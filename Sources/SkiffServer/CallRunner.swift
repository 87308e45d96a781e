public import Logging
public import NIOCore
public import SkiffCore

/// What happens to a call on every protocol once it is admitted (``SkiffCore/CallAdmission``): its
/// handler runs on a task of its own behind the server's interceptors, only once the connection's
/// ``ResponseBudget`` admits it (no handler starts for a client that does not read what it asked
/// for); an error whose details were hidden from the client is logged; the finished call is counted
/// and logged once, under its registered method only.
///
/// A protocol's connection handler makes one from its ``ConnectionContext`` and calls ``start(_:)``
/// when a call's request may be read, ``finished(_:status:duration:)`` when the call has ended on
/// the wire. The protocol keeps only what its framing needs: streams, windows, timers.
public struct CallRunner: Sendable {
    /// Run around every handler.
    public let interceptors: [any ServerInterceptor]
    /// Where failures and finished calls are logged.
    public let logger: Logger
    /// Where calls are counted.
    public let observer: ServerObserver
    /// Whether handlers run on their connection's event loop (``ServerConfiguration/HandlerExecutor``).
    public let handlerExecutor: ServerConfiguration.HandlerExecutor

    /// A runner for the connections of the server `context` describes.
    public init(context: ConnectionContext) {
        self.interceptors = context.interceptors
        self.logger = context.logger
        self.observer = context.observer
        self.handlerExecutor = context.configuration.handlerExecutor
    }

    /// A call ready to run.
    public struct Call: Sendable {
        /// The handler ``SkiffCore/CallAdmission`` chose.
        public var handler: RPCRouter.Handler
        /// The protocol's call object: requests in, responses out.
        public var stream: any ServerCallStream
        /// What the handler knows about the call.
        public var context: ServerContext
        /// The bound on the connection's unread responses.
        public var budget: ResponseBudget
        /// The connection's event loop.
        public var eventLoop: any EventLoop
        /// Called on `eventLoop` once the handler has returned (or was never admitted): with the
        /// error the client did not see in full, if any.
        public var onFinished: @Sendable ((any Error)?) -> Void

        public init(
            handler: RPCRouter.Handler,
            stream: any ServerCallStream,
            context: ServerContext,
            budget: ResponseBudget,
            eventLoop: any EventLoop,
            onFinished: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.handler = handler
            self.stream = stream
            self.context = context
            self.budget = budget
            self.eventLoop = eventLoop
            self.onFinished = onFinished
        }
    }

    /// Counts a call that has begun (its request is on the way): it is counted as finished later,
    /// through ``finished(_:status:duration:)``.
    public func opened() { observer.streamOpened() }

    /// Counts a call refused before its handler ran, under the label the admission chose.
    public func rejected(_ rejection: CallRejection) {
        observer.callRejected(methodLabel: rejection.methodLabel, status: rejection.status)
    }

    /// Where a connection on `eventLoop` runs its handlers: on the loop itself (no thread hop to
    /// write a response) unless the server is configured to use the global executor. Make one per
    /// connection and pass it to every ``start(_:executor:)``.
    public func executor(for eventLoop: any EventLoop) -> (any TaskExecutor)? {
        handlerExecutor == .eventLoop ? EventLoopTaskExecutor(eventLoop) : nil
    }

    /// Starts a call's handler on a task of its own; cancel the task to cancel the handler (a reset,
    /// a passed deadline, a closed connection).
    public func start(_ call: Call, executor: (any TaskExecutor)?) -> Task<Void, Never> {
        let interceptors = self.interceptors
        let body: @Sendable () async -> Void = {
            let hidden: (any Error)?
            let admitted: Bool
            if let now = call.budget.tryAdmit() { admitted = now } else { admitted = await call.budget.admit() }
            if admitted {
                hidden = await call.handler.execute(
                    call: call.stream,
                    context: call.context,
                    interceptors: interceptors
                )
            } else {
                hidden = nil
            }
            if call.eventLoop.inEventLoop {
                call.onFinished(hidden)
            } else {
                call.eventLoop.execute { call.onFinished(hidden) }
            }
        }
        // One unstructured task per call: a connection handler lives on its event loop and cannot
        // own a task group.
        if let executor { return Task(executorPreference: executor, operation: body) }
        return Task(operation: body)
    }

    /// Logs an error the client did not see in full (bounded: never the whole of a request-derived text).
    public func handlerFailed(_ descriptor: MethodDescriptor, streamID: UInt32, error: any Error) {
        logger.error(
            "handler failed",
            metadata: [
                "method": "\(descriptor.path)", "stream": "\(streamID)", "error": "\(LogText.bounded(error))",
            ]
        )
    }

    /// Counts and logs a call that has ended on the wire.
    public func finished(
        _ descriptor: MethodDescriptor,
        streamID: UInt32,
        peer: String,
        status: StatusCode,
        duration: Duration
    ) {
        observer.callFinished(path: descriptor.path, status: status, duration: duration)
        logger.debug(
            "call finished",
            metadata: [
                "method": "\(descriptor.path)", "stream": "\(streamID)", "peer": "\(peer)",
                "status": "\(status)", "duration": "\(duration)",
            ]
        )
    }
}
