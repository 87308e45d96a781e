import Foundation
import NIOCore
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

/// The runtime end to end over loopback: concurrency, large messages, flow control,
/// cancellation and graceful drain.
@Suite("Runtime end to end")
struct RuntimeTests {
    @Test("1,000 concurrent calls on one connection all succeed")
    func thousandConcurrentCalls() async throws {
        try await withTestServer { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<1_000 {
                        group.addTask {
                            try await client.unaryCall(.with { $0.responseSize = Int32(i % 300) }).payload.body.count
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(sizes == (0..<1_000).map { $0 % 300 }.reduce(0, +))
            }
        }
    }

    @Test("messages of several MiB are fragmented and reassembled both ways")
    func largeMessages() async throws {
        try await withTestServer { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                let response = try await client.unaryCall(
                    .with {
                        $0.responseSize = 3 * 1024 * 1024
                        $0.payload.body = Data(repeating: 7, count: 3 * 1024 * 1024)
                    }
                )
                #expect(response.payload.body.count == 3 * 1024 * 1024)
            }
        }
    }

    @Test("a request over the server's MAX_MESSAGE_SIZE fails locally with RESOURCE_EXHAUSTED")
    func oversizeRequest() async throws {
        try await withTestServer(configure: { $0.settings.maxMessageSize = 64 * 1024 }) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                _ = try await client.emptyCall(.init())  // SETTINGS have arrived
                let error = await #expect(throws: RPCError.self) {
                    _ = try await client.unaryCall(.with { $0.payload.body = Data(count: 100 * 1024) })
                }
                #expect(error?.code == .resourceExhausted)
                // A response over the client's limit is refused by the server's handler.
                let error2 = await #expect(throws: RPCError.self) {
                    _ = try await client.unaryCall(.with { $0.responseSize = 5 * 1024 * 1024 })
                }
                #expect(error2?.code == .resourceExhausted)
                _ = try await client.emptyCall(.init())
            }
        }
    }

    @Test(
        "calls from tasks on the connection's event loop (its taskExecutor): unary, streaming, a deadline, on the loop throughout"
    )
    func callsFromTheConnectionsLoop() async throws {
        let probe = ProbeService()
        try await withTestServer(services: [probe, TestService()]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                try await withTaskExecutorPreference(connection.taskExecutor) {
                    #expect(connection.eventLoop.inEventLoop)
                    for size in 0..<50 {
                        let response = try await client.unaryCall(.with { $0.responseSize = Int32(size) })
                        #expect(response.payload.body.count == size)
                        #expect(connection.eventLoop.inEventLoop)
                    }
                    let count = try await client.streamingOutputCall(
                        .with { $0.responseParameters = Array(repeating: .with { $0.size = 10 }, count: 20) }
                    ) { response in
                        var count = 0
                        for try await message in response.messages where message.payload.body.count == 10 {
                            count += 1
                        }
                        return count
                    }
                    #expect(count == 20)
                    let error = await #expect(throws: RPCError.self) {
                        _ = try await connection.unary(
                            ProbeService.wait,
                            request: Skiff_Testing_V1_Empty(),
                            options: CallOptions(timeout: .milliseconds(200)),
                            responseType: Skiff_Testing_V1_Empty.self
                        )
                    }
                    #expect(error?.code == .deadlineExceeded)
                    #expect(connection.eventLoop.inEventLoop)
                }
                // Many at once from tasks on the loop.
                let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                    for size in 0..<200 {
                        group.addTask(executorPreference: connection.taskExecutor) {
                            try await client.unaryCall(.with { $0.responseSize = Int32(size) }).payload.body.count
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(sizes == (0..<200).reduce(0, +))
            }
        }
    }

    @Test("cancelling the caller's task cancels the handler's task on the server")
    func cancellationReachesHandler() async throws {
        let probe = ProbeService()
        try await withTestServer(services: [probe]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let call = Task {
                    try await connection.unary(
                        ProbeService.wait,
                        request: Skiff_Testing_V1_Empty(),
                        options: .defaults,
                        responseType: Skiff_Testing_V1_Empty.self
                    )
                }
                while probe.started.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
                call.cancel()
                let result = await call.result
                #expect(throws: (any Error).self) { try result.get() }
                try await withTimeout(.seconds(30)) {
                    while probe.cancellations.load(ordering: .relaxed) == 0 {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                #expect(probe.cancellations.load(ordering: .relaxed) == 1)
            }
        }
    }

    @Test("a client deadline cancels the server handler too")
    func deadlineReachesHandler() async throws {
        let probe = ProbeService()
        try await withTestServer(services: [probe]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        ProbeService.wait,
                        request: Skiff_Testing_V1_Empty(),
                        // Long enough for the request to reach the handler before it expires, even
                        // on a loaded machine.
                        options: CallOptions(timeout: .seconds(3)),
                        responseType: Skiff_Testing_V1_Empty.self
                    )
                }
                #expect(error?.code == .deadlineExceeded)
                // On a loaded machine the handler may start only after the deadline; either way it
                // runs once and sees its task cancelled.
                try await waitUntil { probe.cancellations.load(ordering: .relaxed) == 1 }
                #expect(probe.started.load(ordering: .relaxed) == 1)
            }
        }
    }

    @Test("a slow reader stalls its stream: the handler's writes wait, memory stays bounded")
    func slowReader() async throws {
        let probe = ProbeService()
        try await withTestServer(services: [probe, TestService()]) { server, port in
            try await withRawConnection(port: port) { conn in
                _ = try await conn.handshake()
                try await conn.send {
                    $0.writeHeaders(streamID: 1, path: ProbeService.flood.path, metadata: [:])
                    $0.writeMessage(streamID: 1, bytes: [])
                }
                // The client never returns credit: at most one stream window (8 MiB) plus the
                // write buffer (256 KiB) of 64 KiB messages can leave the handler.
                // Wait until the handler is writing, then until it has stalled (no progress for 300 ms).
                try await waitUntil { probe.written.load(ordering: .relaxed) > 0 }
                var last = -1
                while probe.written.load(ordering: .relaxed) != last {
                    last = probe.written.load(ordering: .relaxed)
                    try await Task.sleep(for: .milliseconds(300))
                }
                let written = probe.written.load(ordering: .relaxed)
                let bound = (8 * 1024 * 1024 + server.configuration.streamWriteBufferHighWater) / (64 * 1024) + 2
                #expect(written > 0)
                #expect(written <= bound, "handler wrote \(written) messages, bound \(bound)")
                // The connection still serves other calls meanwhile.
                try await conn.send {
                    $0.writeHeaders(streamID: 3, path: "/skiff.testing.v1.TestService/EmptyCall", metadata: [:])
                    $0.writeMessage(streamID: 3, bytes: [])
                }
                let trailers = try await conn.next { $0.streamID == 3 && $0.type == .trailers }
                #expect(trailers.trailers?.status == .ok)
                #expect(probe.written.load(ordering: .relaxed) <= bound)
            }
        }
    }

    @Test("graceful drain: calls in flight complete, calls after it fail UNAVAILABLE, nothing is lost")
    func drainWithClient() async throws {
        try await withTestServer { server, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                _ = try await client.emptyCall(.init())
                let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            do {
                                _ = try await client.unaryCall(.with { $0.sleepMs = 1_000 })
                                return true
                            } catch {
                                return false
                            }
                        }
                    }
                    try await waitUntil { server.observer.streams == 20 }
                    server.beginGracefulShutdown()
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(results.allSatisfy { $0 }, "every call in flight completes")
                let error = await #expect(throws: RPCError.self) { _ = try await client.emptyCall(.init()) }
                #expect(error?.code == .unavailable)
            }
        }
    }

    @Test("health: Check and Watch")
    func health() async throws {
        let health = HealthService(services: ["skiff.testing.v1.TestService"])
        try await withTestServer(services: [TestService(), health]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = Skiff_Health_V1_Health.Client(transport: connection)
                #expect(try await client.check(.with { $0.service = "" }).status == .serving)
                #expect(
                    try await client.check(.with { $0.service = "skiff.testing.v1.TestService" }).status == .serving
                )
                let error = await #expect(throws: RPCError.self) {
                    _ = try await client.check(.with { $0.service = "nope" })
                }
                #expect(error?.code == .notFound)
                let statuses = try await client.watch(.with { $0.service = "skiff.testing.v1.TestService" }) {
                    response in
                    var seen: [HealthService.Status] = []
                    for try await update in response.messages {
                        seen.append(update.status)
                        if seen.count == 1 { health.setStatus(.notServing, forService: "skiff.testing.v1.TestService") }
                        if seen.count == 2 { break }
                    }
                    return seen
                }
                #expect(statuses == [.serving, .notServing])
            }
        }
    }
}
