import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffCore

@Suite("CallRunner: the call lifecycle every transport shares")
struct CallRunnerTests {
    static let echo = MethodDescriptor(service: "skiff.test.Echo", method: "Say", kind: .unary)
    static let slow = MethodDescriptor(service: "skiff.test.Echo", method: "Slow", kind: .unary)

    /// A router with `Say` (answers at once, or fails with `failing`) and `Slow` (records that it
    /// started, then waits for cancellation and records it).
    static func router(started: Flag = Flag(), cancelled: Flag = Flag(), failing: (any Error)? = nil) -> RPCRouter {
        var router = RPCRouter()
        router.registerUnary(
            echo,
            request: Google_Protobuf_StringValue.self,
            response: Google_Protobuf_StringValue.self
        ) { request, _ in
            if let failing { throw failing }
            return request
        }
        router.registerUnary(
            slow,
            request: Google_Protobuf_StringValue.self,
            response: Google_Protobuf_StringValue.self
        ) { request, _ in
            started.set()
            do {
                try await Task.sleep(for: .seconds(600))
            } catch {
                cancelled.set()
                throw error
            }
            return request
        }
        return router
    }

    @Test("admission counts a refusal under a registered method or \"unknown\", never the raw path")
    func admission() throws {
        let observer = CountingObserver()
        let runner = CallRunner(router: Self.router(), observer: observer)
        for index in 0..<50 {
            guard case .failure(let rejection) = runner.admit(path: "/made.up/\(index)", metadata: [:]) else {
                Issue.record("a made-up path was admitted")
                return
            }
            #expect(rejection.status == .unimplemented)
        }
        _ = runner.admit(path: Self.echo.path, metadata: ["grpc-encoding": "gzip"])
        _ = try runner.admit(path: Self.echo.path, metadata: ["grpc-timeout": "1S"]).get()
        #expect(observer.rejections == [CallRejection.unknownMethodLabel: 50, Self.echo.path: 1])
        let framing = runner.rejection(path: "/made.up/x", status: .resourceExhausted, message: "too big")
        #expect(framing.methodLabel == CallRejection.unknownMethodLabel)
    }

    @Test("a call's deadline is armed on the transport's clock and aborts it with DEADLINE_EXCEEDED")
    func deadline() throws {
        let observer = CountingObserver()
        let runner = CallRunner(router: Self.router(), observer: observer)
        let timers = ManualTimers()
        let call = RecordingCall()
        #expect(runner.opened(call, timeout: nil, timers: timers) == nil)
        let timer = try #require(runner.opened(call, timeout: .milliseconds(250), timers: timers))
        #expect(observer.opened == 2)
        #expect(timers.delays == [.milliseconds(250)])
        #expect(call.aborts.isEmpty)
        timers.fire(timer)
        #expect(call.aborts == [.init(status: .deadlineExceeded, message: CallRunner.deadlineMessage)])
    }

    @Test("a started call runs its handler behind the interceptors and reports how it ended")
    func start() async throws {
        let seen = Mutex<[String]>([])
        struct Recording: ServerInterceptor {
            let seen: @Sendable (String) -> Void
            func intercept(context: ServerContext, next: (ServerContext) async throws -> Void) async throws {
                seen(context.descriptor.method)
                try await next(context)
            }
        }
        let runner = CallRunner(
            router: Self.router(),
            interceptors: [Recording { name in seen.withLock { $0.append(name) } }]
        )
        let call = RecordingCall(requests: [Google_Protobuf_StringValue("hi")])
        let hidden = try await run(runner, Self.echo, call)
        #expect(hidden == nil)
        #expect(seen.withLock { $0 } == ["Say"])
        #expect(call.finishes.map(\.status) == [.ok])
        #expect(call.sent == ["hi"])
    }

    @Test("an error the client must not see is mapped to INTERNAL and handed back to be logged")
    func hiddenError() async throws {
        struct Secret: Error {}
        let runner = CallRunner(router: Self.router(failing: Secret()))
        let call = RecordingCall(requests: [Google_Protobuf_StringValue("hi")])
        let hidden = try await run(runner, Self.echo, call)
        #expect(hidden is Secret)
        #expect(call.finishes.map(\.status) == [.internal])
        let visible = CallRunner(router: Self.router(failing: RPCError(code: .notFound, message: "no such thing")))
        let shown = RecordingCall(requests: [Google_Protobuf_StringValue("hi")])
        #expect(try await run(visible, Self.echo, shown) == nil)
        #expect(shown.finishes.map(\.status) == [.notFound])
    }

    @Test("a gate that refuses keeps the handler from running")
    func gateRefuses() async throws {
        struct Closed: CallGate {
            func tryAdmit() -> Bool? { false }
            func admit() async -> Bool { false }
        }
        let runner = CallRunner(router: Self.router())
        let call = RecordingCall(requests: [Google_Protobuf_StringValue("hi")])
        let hidden = try await run(runner, Self.echo, call, gate: Closed())
        #expect(hidden == nil)
        #expect(call.finishes.isEmpty)
        #expect(call.sent.isEmpty)
    }

    @Test("in process, a passed deadline ends the call with DEADLINE_EXCEEDED and cancels its handler")
    func inProcessDeadline() async throws {
        let cancelled = Flag()
        let transport = InProcessTransport(router: Self.router(cancelled: cancelled))
        let error = await #expect(throws: RPCError.self) {
            _ = try await transport.unary(
                Self.slow,
                request: Google_Protobuf_StringValue("hi"),
                options: CallOptions(timeout: .milliseconds(20)),
                responseType: Google_Protobuf_StringValue.self
            )
        }
        #expect(error?.code == .deadlineExceeded)
        // The call returns once its handler has stopped.
        #expect(cancelled.isSet)
    }

    @Test("in process, cancelling the caller cancels the handler")
    func inProcessCancellation() async throws {
        let (started, cancelled) = (Flag(), Flag())
        let transport = InProcessTransport(router: Self.router(started: started, cancelled: cancelled))
        let task = Task {
            try await transport.unary(
                Self.slow,
                request: Google_Protobuf_StringValue("hi"),
                options: CallOptions(),
                responseType: Google_Protobuf_StringValue.self
            )
        }
        while !started.isSet { try await Task.sleep(for: .milliseconds(1)) }
        task.cancel()
        let error = await #expect(throws: RPCError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        #expect(cancelled.isSet)
    }

    @Test("in process, calls are counted when the runner has an observer")
    func inProcessCounted() async throws {
        let observer = CountingObserver()
        let transport = InProcessTransport(runner: CallRunner(router: Self.router(), observer: observer))
        let response = try await transport.unary(
            Self.echo,
            request: Google_Protobuf_StringValue("hi"),
            options: CallOptions(),
            responseType: Google_Protobuf_StringValue.self
        )
        #expect(response.message.value == "hi")
        await #expect(throws: RPCError.self) {
            _ = try await transport.unary(
                MethodDescriptor(service: "made.Up", method: "X", kind: .unary),
                request: Google_Protobuf_StringValue(),
                options: CallOptions(),
                responseType: Google_Protobuf_StringValue.self
            )
        }
        #expect(observer.opened == 1)
        #expect(observer.finished == [Self.echo.path: [.ok]])
        #expect(observer.rejections == [CallRejection.unknownMethodLabel: 1])
    }

    /// Runs `descriptor` on `call` through `runner.start` and returns the hidden error.
    private func run(
        _ runner: CallRunner,
        _ descriptor: MethodDescriptor,
        _ call: RecordingCall,
        gate: (any CallGate)? = nil
    ) async throws -> (any Error)? {
        let handler = try #require(runner.router.handler(forPath: descriptor.path))
        let context = ServerContext(
            descriptor: descriptor,
            metadata: [:],
            peer: "test",
            deadline: nil,
            streamID: 1,
            sink: call
        )
        let hidden = Mutex<(any Error)?>(nil)
        let task = runner.start(
            CallRunner.Call(handler: handler, stream: call, context: context, gate: gate) { error in
                hidden.withLock { $0 = error }
            }
        )
        await task.value
        return hidden.withLock { $0 }
    }
}

/// A flag set once from any task.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// Counts what a runner reports.
final class CountingObserver: CallObserver {
    private let state = Mutex<(opened: Int, rejections: [String: Int], finished: [String: [StatusCode]])>((0, [:], [:]))
    var opened: Int { state.withLock { $0.opened } }
    var rejections: [String: Int] { state.withLock { $0.rejections } }
    var finished: [String: [StatusCode]] { state.withLock { $0.finished } }
    func callOpened() { state.withLock { $0.opened += 1 } }
    func callRejected(methodLabel: String, status: StatusCode) {
        state.withLock { $0.rejections[methodLabel, default: 0] += 1 }
    }
    func callFinished(path: String, status: StatusCode, duration: Duration) {
        state.withLock { $0.finished[path, default: []].append(status) }
    }
}

/// Timers fired by hand.
final class ManualTimers: DeadlineTimers {
    private let state = Mutex<[(Duration, @Sendable () -> Void)]>([])
    var delays: [Duration] { state.withLock { $0.map(\.0) } }
    func schedule(after delay: Duration, _ expire: @escaping @Sendable () -> Void) -> Int {
        state.withLock { timers in
            timers.append((delay, expire))
            return timers.count - 1
        }
    }
    func fire(_ timer: Int) { state.withLock { $0[timer].1 }() }
}

/// A call object that records what the runner and the handler do to it.
final class RecordingCall: ServerCallStream {
    struct Ending: Equatable {
        var status: StatusCode
        var message: String
    }
    private struct State {
        var requests: [Google_Protobuf_StringValue]
        var sent: [String] = []
        var finishes: [Ending] = []
        var aborts: [Ending] = []
    }
    private let state: Mutex<State>
    init(requests: [Google_Protobuf_StringValue] = []) { state = Mutex(State(requests: requests)) }

    var sent: [String] { state.withLock { $0.sent } }
    var finishes: [Ending] { state.withLock { $0.finishes } }
    var aborts: [Ending] { state.withLock { $0.aborts } }

    func setInitialMetadata(_ metadata: Metadata) {}
    func addTrailingMetadata(_ metadata: Metadata) {}
    func receive<M: Message>(_ type: M.Type) async throws -> M? {
        state.withLock { $0.requests.isEmpty ? nil : $0.requests.removeFirst() } as? M
    }
    func send<M: Message>(_ message: M) async throws {
        let text = (message as? Google_Protobuf_StringValue)?.value ?? ""
        state.withLock { $0.sent.append(text) }
    }
    func sendLast<M: Message>(_ message: M) async throws {
        try await send(message)
        finish(.ok, message: "", metadata: [:])
    }
    func finish(_ status: StatusCode, message: String, metadata: Metadata) {
        state.withLock { state in
            guard state.finishes.isEmpty else { return }
            state.finishes.append(Ending(status: status, message: message))
        }
    }
    func abort(_ status: StatusCode, message: String) {
        state.withLock { $0.aborts.append(Ending(status: status, message: message)) }
    }
}
