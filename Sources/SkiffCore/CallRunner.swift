public import Logging

/// The call lifecycle every transport shares, written once: route lookup and admission, the
/// deadline, the handler's task and its cancellation, the interceptors, error mapping, logging
/// and metrics (labelled only by registered methods).
///
/// A transport keeps only what its framing needs (streams, windows, its own limits) and calls,
/// for each call:
///
/// 1. ``admit(path:metadata:)`` once the call's path and metadata have arrived (a refusal is
///    counted; answer it with the rejection's status and message);
/// 2. ``opened(_:timeout:timers:)`` with its call object: counts the call and arms its deadline on
///    the transport's clock (when it passes, the call is ended by ``ServerCallStream/abort(_:message:)``
///    with `DEADLINE_EXCEEDED`);
/// 3. ``start(_:executor:)`` once the request may be read: the handler runs on a task of its own,
///    behind the interceptors, after the call's ``Call/gate`` (if any) admits it; cancel the task
///    on a reset or a closed connection;
/// 4. ``finished(_:streamID:peer:status:duration:)`` once the call has ended on the wire, and
///    ``handlerFailed(_:streamID:error:)`` for an error the client did not see in full.
///
/// skiff/1 (`SkiffServer`) and ``InProcessTransport`` both run their calls through it.
public struct CallRunner: Sendable {
    /// Where calls go.
    public let router: RPCRouter
    /// Run around every handler.
    public let interceptors: [any ServerInterceptor]
    /// Where failures and finished calls are logged.
    public let logger: Logger
    /// Where calls are counted.
    public let observer: any CallObserver

    /// The status message of a call whose deadline passed.
    public static let deadlineMessage = "The deadline passed before the call finished."

    /// A runner for the calls of one server (or one in-process transport).
    public init(
        router: RPCRouter,
        interceptors: [any ServerInterceptor] = [],
        logger: Logger = Logger(label: "skiff.calls", factory: { _ in SwiftLogNoOpLogHandler() }),
        observer: any CallObserver = UncountedCalls()
    ) {
        self.router = router
        self.interceptors = interceptors
        self.logger = logger
        self.observer = observer
    }

    // MARK: Admission

    /// Decides whether a call to `path` may start (``CallAdmission``); a refusal is counted.
    public func admit(path: String, metadata: Metadata) -> Result<CallAdmission, CallRejection> {
        let admission = CallAdmission.admit(path: path, metadata: metadata, router: router)
        if case .failure(let rejection) = admission { rejected(rejection) }
        return admission
    }

    /// Counts a call the transport refused itself (its framing's limits), under the label the
    /// rejection chose.
    public func rejected(_ rejection: CallRejection) {
        observer.callRejected(methodLabel: rejection.methodLabel, status: rejection.status)
    }

    /// The rejection of a call the transport refuses before admission, labelled by ``CallAdmission/methodLabel(forPath:router:)``.
    public func rejection(path: String, status: StatusCode, message: String) -> CallRejection {
        CallRejection(
            status: status,
            message: message,
            methodLabel: CallAdmission.methodLabel(forPath: path, router: router)
        )
    }

    // MARK: Running

    /// Counts an admitted call as open and arms its deadline on `timers`.
    ///
    /// - Returns: the deadline's timer, to cancel once the call has ended; `nil` without a timeout.
    public func opened<Timers: DeadlineTimers>(
        _ call: any ServerCallStream,
        timeout: Duration?,
        timers: Timers
    ) -> Timers.Timer? {
        observer.callOpened()
        guard let timeout else { return nil }
        return timers.schedule(after: timeout) {
            call.abort(.deadlineExceeded, message: Self.deadlineMessage)
        }
    }

    /// A call ready to run.
    public struct Call: Sendable {
        /// The handler admission chose.
        public var handler: RPCRouter.Handler
        /// The transport's call object: requests in, responses out.
        public var stream: any ServerCallStream
        /// What the handler knows about the call.
        public var context: ServerContext
        /// Admits the handler before it runs (a connection's bound on unread responses); a refusal
        /// means the call was closed meanwhile, and the handler never runs.
        public var gate: (any CallGate)?
        /// Told once the handler has returned (or was never admitted), with the error the client
        /// did not see in full, if any. Told on the handler's task: hop to the transport's thread
        /// if it needs to. Often the call object itself (no allocation per call).
        public var completion: any CallCompletion

        public init(
            handler: RPCRouter.Handler,
            stream: any ServerCallStream,
            context: ServerContext,
            gate: (any CallGate)? = nil,
            completion: any CallCompletion
        ) {
            self.handler = handler
            self.stream = stream
            self.context = context
            self.gate = gate
            self.completion = completion
        }

        /// A call whose completion is a closure.
        public init(
            handler: RPCRouter.Handler,
            stream: any ServerCallStream,
            context: ServerContext,
            gate: (any CallGate)? = nil,
            onFinished: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.init(
                handler: handler,
                stream: stream,
                context: context,
                gate: gate,
                completion: ClosureCompletion(onFinished: onFinished)
            )
        }
    }

    private struct ClosureCompletion: CallCompletion {
        let onFinished: @Sendable ((any Error)?) -> Void
        func handlerFinished(hidden: (any Error)?) { onFinished(hidden) }
    }

    /// Starts a call's handler on a task of its own (on `executor`, if given); cancel the task to
    /// cancel the handler.
    public func start(_ call: Call, executor: (any TaskExecutor)? = nil) -> Task<Void, Never> {
        let interceptors = self.interceptors
        let body: @Sendable () async -> Void = {
            var admitted = true
            if let gate = call.gate {
                if let now = gate.tryAdmit() { admitted = now } else { admitted = await gate.admit() }
            }
            let hidden: (any Error)? =
                admitted
                ? await call.handler.execute(call: call.stream, context: call.context, interceptors: interceptors)
                : nil
            call.completion.handlerFinished(hidden: hidden)
        }
        // One unstructured task per call: a connection lives on its event loop and cannot own a
        // task group.
        if let executor { return Task(executorPreference: executor, operation: body) }
        return Task(operation: body)
    }

    // MARK: The end

    /// Logs an error the client did not see in full (bounded: never the whole of a
    /// request-derived text).
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

/// Counts calls for metrics. `SkiffServer`'s `ServerObserver` is one.
public protocol CallObserver: Sendable {
    /// A call was admitted; it is counted as finished later.
    func callOpened()
    /// A call was refused before its handler ran; `methodLabel` is a registered path or
    /// ``CallRejection/unknownMethodLabel``.
    func callRejected(methodLabel: String, status: StatusCode)
    /// A call ended on the wire.
    func callFinished(path: String, status: StatusCode, duration: Duration)
}

/// Counts nothing: the default of ``InProcessTransport``, whose calls are a server's own.
public struct UncountedCalls: CallObserver {
    public init() {}
    public func callOpened() {}
    public func callRejected(methodLabel: String, status: StatusCode) {}
    public func callFinished(path: String, status: StatusCode, duration: Duration) {}
}

/// Told when a call's handler has finished; see ``CallRunner/Call/completion``.
public protocol CallCompletion: Sendable {
    /// The handler returned (or never ran); `hidden` is an error the client did not see in full.
    func handlerFinished(hidden: (any Error)?)
}

/// Admits a call's handler before it runs; see ``CallRunner/Call/gate``.
public protocol CallGate: Sendable {
    /// `true` or `false` when the answer is known at once, `nil` when the caller must wait in
    /// ``admit()``.
    func tryAdmit() -> Bool?
    /// Waits until the handler may run (`true`) or the call is closed (`false`).
    func admit() async -> Bool
}

/// The clock a transport arms its calls' deadlines on: an event loop's timers for a connection,
/// a sleeping task in process.
public protocol DeadlineTimers: Sendable {
    /// What cancels a timer.
    associatedtype Timer
    /// Runs `expire` once `delay` has passed, unless the timer is cancelled first.
    func schedule(after delay: Duration, _ expire: @escaping @Sendable () -> Void) -> Timer
}

/// Deadlines on sleeping tasks: ``InProcessTransport``'s clock.
public struct TaskDeadlineTimers: DeadlineTimers {
    public init() {}

    public func schedule(after delay: Duration, _ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            expire()
        }
    }
}
