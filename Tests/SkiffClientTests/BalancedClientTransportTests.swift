import Foundation
import NIOCore
import NIOPosix
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffClient

/// Counts the calls a server ran: of the test service, and health checks.
final class CallCounter: ServerInterceptor {
    let calls = Atomic<Int>(0)
    let healthChecks = Atomic<Int>(0)

    var callCount: Int { calls.load(ordering: .relaxed) }
    var healthCheckCount: Int { healthChecks.load(ordering: .relaxed) }

    func intercept(context: ServerContext, next: (ServerContext) async throws -> Void) async throws {
        if context.descriptor.service == Skiff_Testing_V1_TestService.name {
            calls.wrappingAdd(1, ordering: .relaxed)
        } else if context.descriptor.service == Skiff_Health_V1_Health.name {
            healthChecks.wrappingAdd(1, ordering: .relaxed)
        }
        try await next(context)
    }
}

/// One in-process server of a balancing test: the test service, a health service, a counter.
struct Node: Sendable {
    let server: Server
    let port: Int
    let counter: CallCounter
    let health: HealthService
    let running: Task<Void, any Error>

    var target: ClientConnection.Target { .host("127.0.0.1", port: port) }
    var calls: Int { counter.callCount }

    /// Stops the server abruptly: its connections close with no GOAWAY, its listener closes.
    func kill() async {
        running.cancel()
        _ = await running.result
    }
}

/// Runs `count` servers on 127.0.0.1 for the duration of `body`.
func withNodes<R: Sendable>(_ count: Int, _ body: @Sendable ([Node]) async throws -> R) async throws -> R {
    var nodes: [Node] = []
    defer { for node in nodes { node.running.cancel() } }
    for _ in 0..<count {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.drainGracePeriod = .seconds(5)
        let counter = CallCounter()
        let health = HealthService()
        let server = Server(
            configuration: configuration,
            services: [TestService(), health],
            interceptors: [counter],
            logger: quietLogger
        )
        let running = Task { try await server.run() }
        let port = try await server.listeningAddress.port!
        nodes.append(Node(server: server, port: port, counter: counter, health: health, running: running))
    }
    let result = try await body(nodes)
    for node in nodes { await node.kill() }
    return result
}

/// Answers a finished `skiff.health.v1.Health/Check` request with SERVING; `false` for other frames.
func answerHealthCheck(_ connection: FakeConnection, _ frame: Frame) -> Bool {
    guard let path = connection.paths[frame.streamID], path.hasPrefix("/\(Skiff_Health_V1_Health.name)/") else {
        return false
    }
    if frame.endsClientSide {
        let response = Skiff_Health_V1_HealthCheckResponse.with { $0.status = .serving }
        connection.respond(stream: frame.streamID, messages: [try! response.serializedBuffer()])
    }
    return true
}

/// HEADERS frames of test-service calls a fake server received.
func testCalls(_ server: FakeServer) -> Int {
    server.frames.filter { received in
        guard received.frame.type == .headers, let (path, _) = try? FramePayload.headers(received.frame) else {
            return false
        }
        return path.hasPrefix("/\(Skiff_Testing_V1_TestService.name)/")
    }.count
}

let quickHealth = BalancedClientTransport.Configuration(
    healthCheckInterval: .milliseconds(50),
    healthCheckTimeout: .seconds(1)
)

/// A short backoff, so a restarted address comes back quickly.
let quickReconnect = ClientConfiguration(backoff: .init(initial: .milliseconds(10), maximum: .milliseconds(100)))

func simpleRequest(status: StatusCode? = nil, sleepMS: Int32 = 0) -> Skiff_Testing_V1_SimpleRequest {
    .with { request in
        if let status { request.responseStatus = .with { $0.code = Int32(status.rawValue) } }
        request.sleepMs = sleepMS
    }
}

@Suite("BalancedClientTransport over several servers")
struct BalancedClientTransportTests {
    @Test("Calls go round-robin over healthy addresses")
    func roundRobin() async throws {
        try await withNodes(3) { nodes in
            let transport = BalancedClientTransport(targets: nodes.map(\.target), configuration: quickHealth)
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            for _ in 0..<30 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [10, 10, 10])
            #expect(transport.targets == nodes.map(\.target))
            await transport.close()
        }
    }

    @Test("Concurrent calls spread over every address")
    func concurrentCallsSpread() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(targets: nodes.map(\.target), configuration: quickHealth)
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { for _ in 0..<25 { _ = try await client.unaryCall(simpleRequest()) } }
                }
                try await group.waitForAll()
            }
            #expect(nodes.map(\.calls).reduce(0, +) == 200)
            #expect(nodes.allSatisfy { $0.calls >= 80 }, "calls per server: \(nodes.map(\.calls))")
            await transport.close()
        }
    }

    @Test("An address that refuses connections is skipped; calls succeed on the others")
    func refusedAddressIsSkipped() async throws {
        let deadPort = try freeLoopbackPort()
        try await withNodes(1) { nodes in
            let dead = ClientConnection.Target.host("127.0.0.1", port: deadPort)
            // The dead address first: the first call goes there (unless the first health check has
            // already found it dead) and fails over.
            let transport = BalancedClientTransport(
                targets: [dead, nodes[0].target],
                configuration: .init(healthCheckInterval: .seconds(3600)),
                connection: quickReconnect
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            for _ in 0..<20 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes[0].calls == 20)
            #expect(transport.healthyTargets == [nodes[0].target])

            // Once more, surely through the dead address: the first health checks are done, the dead
            // address counts as healthy again and is next in turn; the call fails over.
            try await waitUntil { transport.balancer.addresses.allSatisfy { $0.checksDone > 0 } }
            transport.balancer.addresses[0].setHealthy(true)
            while transport.balancer.pick(excluding: []) !== transport.balancer.addresses[1] {}
            _ = try await client.unaryCall(simpleRequest())
            #expect(nodes[0].calls == 21)
            #expect(transport.healthyTargets == [nodes[0].target])
            await transport.close()
        }
    }

    @Test("Without failovers, a call to an unreachable address fails with UNAVAILABLE and marks it unhealthy")
    func noFailoverWhenTurnedOff() async throws {
        let deadPort = try freeLoopbackPort()
        try await withNodes(1) { nodes in
            let dead = ClientConnection.Target.host("127.0.0.1", port: deadPort)
            let transport = BalancedClientTransport(
                targets: [dead, nodes[0].target],
                configuration: .init(healthCheckInterval: .seconds(3600), maxFailovers: 0)
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            // Until the first health check or call marks it, the dead address counts as healthy.
            try await waitUntil { transport.balancer.addresses[0].checksDone > 0 }
            #expect(transport.healthyTargets == [nodes[0].target])
            for _ in 0..<5 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes[0].calls == 5)
            await transport.close()
        }
        // Before any health check: the first call goes to the dead address and is not moved.
        let transport = BalancedClientTransport(
            targets: [.host("127.0.0.1", port: deadPort)],
            configuration: .init(healthCheckInterval: .seconds(3600), maxFailovers: 0)
        )
        let error = await #expect(throws: RPCError.self) {
            _ = try await Skiff_Testing_V1_TestService.Client(transport: transport).unaryCall(simpleRequest())
        }
        #expect(error?.code == .unavailable)
        #expect(transport.healthyTargets.isEmpty)
        await transport.close()
    }

    @Test("A NOT_SERVING server is skipped after a health check and comes back when SERVING")
    func notServingIsSkipped() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(targets: nodes.map(\.target), configuration: quickHealth)
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            nodes[1].health.setStatus(.notServing, forService: "")
            try await waitUntil { transport.healthyTargets == [nodes[0].target] }
            for _ in 0..<10 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [10, 0])

            nodes[1].health.setStatus(.serving, forService: "")
            try await waitUntil { transport.healthyTargets.count == 2 }
            for _ in 0..<10 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [15, 5])
            await transport.close()
        }
    }

    @Test("The configured service's health decides; when no address is healthy, calls still go to all")
    func namedServiceAndNoneHealthy() async throws {
        try await withNodes(2) { nodes in
            let service = Skiff_Testing_V1_TestService.name
            for node in nodes { node.health.setStatus(.serving, forService: service) }
            let transport = BalancedClientTransport(
                targets: nodes.map(\.target),
                configuration: .init(healthCheckInterval: .milliseconds(50), healthCheckService: service)
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            // The server as a whole stays SERVING; the service it is asked about does not.
            for node in nodes { node.health.setStatus(.notServing, forService: service) }
            try await waitUntil { transport.healthyTargets.isEmpty }
            for _ in 0..<10 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [5, 5])
            await transport.close()
        }
    }

    @Test("A call the server processed and failed is not retried elsewhere, whatever its code")
    func processedFailureIsNotRetried() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(targets: nodes.map(\.target), configuration: quickHealth)
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.unaryCall(simpleRequest(status: .unavailable))
            }
            #expect(error?.code == .unavailable)
            #expect(nodes.map(\.calls).reduce(0, +) == 1)
            #expect(transport.healthyTargets.count == 2)
            await transport.close()
        }
    }

    @Test("A call whose connection dropped after its stream was sent is not retried elsewhere")
    func droppedAfterSendIsNotRetried() async throws {
        // The first server drops the connection once a test call's request has arrived.
        let dropping = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            if frame.endsClientSide { connection.channel.close(promise: nil) }
        }
        let echoing = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            echoScript(connection, frame)
        }
        let transport = BalancedClientTransport(
            targets: [.host("127.0.0.1", port: dropping.port), .host("127.0.0.1", port: echoing.port)],
            configuration: .init(healthCheckInterval: .seconds(3600))
        )
        let error = await #expect(throws: RPCError.self) {
            _ = try await transport.unary(unaryMethod, request: text("a"), options: .defaults, responseType: Text.self)
        }
        #expect(error?.code == .unavailable)
        #expect(testCalls(dropping) == 1)
        #expect(testCalls(echoing) == 0)
        await transport.close()
        try await dropping.close()
        try await echoing.close()
    }

    @Test("A stream the server refuses, every time, moves to another address once the transparent retries are spent")
    func refusedStreamFailsOver() async throws {
        let refusing = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            guard frame.type == .headers else { return }
            connection.send { $0.writeRSTStream(streamID: frame.streamID, status: .unavailable, refused: true) }
        }
        let echoing = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            echoScript(connection, frame)
        }
        let transport = BalancedClientTransport(
            targets: [.host("127.0.0.1", port: refusing.port), .host("127.0.0.1", port: echoing.port)],
            configuration: .init(healthCheckInterval: .seconds(3600))
        )
        let response = try await transport.unary(
            unaryMethod,
            request: text("a"),
            options: .defaults,
            responseType: Text.self
        )
        #expect(response.message.value == "a")
        #expect(testCalls(refusing) == ClientConfiguration.defaults.maxTransparentRetries + 1)
        #expect(testCalls(echoing) == 1)
        #expect(transport.healthyTargets == [.host("127.0.0.1", port: echoing.port)])
        await transport.close()
        try await refusing.close()
        try await echoing.close()
    }

    @Test(
        "A stream above a GOAWAY's last stream id moves to another address; so does a streaming call with its requests"
    )
    func goAwayFailsOver() async throws {
        // Every test call gets GOAWAY(last stream id 0): not processed.
        let goingAway = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            guard frame.type == .headers else { return }
            connection.send { $0.writeGoAway(lastStreamID: 0, status: .unavailable, debug: "going away") }
        }
        let echoing = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            echoScript(connection, frame)
        }
        let goingAwayTarget = ClientConnection.Target.host("127.0.0.1", port: goingAway.port)
        let transport = BalancedClientTransport(
            targets: [goingAwayTarget, .host("127.0.0.1", port: echoing.port)],
            configuration: .init(healthCheckInterval: .seconds(3600))
        )
        let response = try await transport.unary(
            unaryMethod,
            request: text("a"),
            options: .defaults,
            responseType: Text.self
        )
        #expect(response.message.value == "a")
        #expect(testCalls(goingAway) >= 1)
        #expect(testCalls(echoing) == 1)
        #expect(!transport.healthyTargets.contains(goingAwayTarget))

        // A streaming call that starts on the address going away: what it wrote reaches the other one.
        transport.balancer.addresses[0].setHealthy(true)
        transport.balancer.addresses[1].setHealthy(false)
        let refusedBefore = testCalls(goingAway)
        let echoed = try await transport.streaming(
            bidiMethod,
            options: .defaults,
            requestType: Text.self,
            responseType: Text.self,
            requests: { writer in
                try await writer.write(text("x"))
                try await writer.write(text("y"))
            },
            body: { response in
                var values: [String] = []
                for try await message in response.messages { values.append(message.value) }
                return values
            }
        )
        #expect(echoed == ["x", "y"])
        #expect(testCalls(goingAway) > refusedBefore)
        #expect(testCalls(echoing) == 2)
        await transport.close()
        try await goingAway.close()
        try await echoing.close()
    }

    @Test("A call is never tried twice on one address: with every address refusing, it fails with UNAVAILABLE")
    func neverTwiceOnOneAddress() async throws {
        var refusing: [FakeServer] = []
        for _ in 0..<2 {
            refusing.append(
                try await FakeServer.start { connection, frame in
                    if answerHealthCheck(connection, frame) { return }
                    guard frame.type == .headers else { return }
                    connection.send { $0.writeRSTStream(streamID: frame.streamID, status: .unavailable, refused: true) }
                }
            )
        }
        let transport = BalancedClientTransport(
            targets: refusing.map { .host("127.0.0.1", port: $0.port) },
            configuration: .init(healthCheckInterval: .seconds(3600), maxFailovers: 5)
        )
        let error = await #expect(throws: RPCError.self) {
            _ = try await transport.unary(unaryMethod, request: text("a"), options: .defaults, responseType: Text.self)
        }
        #expect(error?.code == .unavailable)
        let attempts = ClientConfiguration.defaults.maxTransparentRetries + 1
        #expect(refusing.map(testCalls) == [attempts, attempts])
        #expect(transport.healthyTargets.isEmpty)
        await transport.close()
        for server in refusing { try await server.close() }
    }

    @Test("A streaming call is not moved once the server has accepted its stream")
    func acceptedStreamIsNotRetried() async throws {
        // Answers HEADERS to every test call, then resets it: accepted, then failed.
        let resetting = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            guard frame.type == .headers else { return }
            connection.send { buffer in
                buffer.writeHeaders(streamID: frame.streamID, metadata: [:])
                buffer.writeRSTStream(streamID: frame.streamID, status: .unavailable, reason: "gone")
            }
        }
        let echoing = try await FakeServer.start { connection, frame in
            if answerHealthCheck(connection, frame) { return }
            echoScript(connection, frame)
        }
        let transport = BalancedClientTransport(
            targets: [.host("127.0.0.1", port: resetting.port), .host("127.0.0.1", port: echoing.port)],
            configuration: .init(healthCheckInterval: .seconds(3600))
        )
        let error = await #expect(throws: RPCError.self) {
            _ = try await transport.streaming(
                bidiMethod,
                options: .defaults,
                requestType: Text.self,
                responseType: Text.self,
                requests: { writer in try await writer.write(text("x")) },
                body: { response in
                    for try await _ in response.messages {}
                }
            )
        }
        #expect(error?.code == .unavailable)
        #expect(testCalls(resetting) == 1)
        #expect(testCalls(echoing) == 0)
        await transport.close()
        try await resetting.close()
        try await echoing.close()
    }

    @Test("A draining server finishes its calls in flight; new calls move to the other server with no failure")
    func drainingServer() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(
                targets: nodes.map(\.target),
                configuration: quickHealth,
                connection: quickReconnect
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            // Both connections up.
            try await waitUntil { transport.balancer.addresses.allSatisfy { $0.checksDone > 0 } }
            // Slow calls in flight on both servers.
            let slow = (0..<4).map { _ in Task { try await client.unaryCall(simpleRequest(sleepMS: 500)) } }
            try await waitUntil { nodes.allSatisfy { $0.calls >= 2 } }
            nodes[0].server.beginGracefulShutdown()
            var failures = 0
            for _ in 0..<50 {
                do { _ = try await client.unaryCall(simpleRequest()) } catch { failures += 1 }
            }
            for call in slow { _ = try await call.value }
            #expect(failures == 0)
            // Calls that reached the first server before it stopped taking them ran there.
            #expect(nodes.map(\.calls).reduce(0, +) == 54)
            #expect(nodes[1].calls >= 2 + 25)
            #expect(transport.healthyTargets == [nodes[1].target])
            await transport.close()
        }
    }

    @Test("A server that disappears without GOAWAY is skipped from the next call on; no call fails")
    func abruptStop() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(
                targets: nodes.map(\.target),
                configuration: .init(healthCheckInterval: .seconds(3600)),
                connection: quickReconnect
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            for _ in 0..<10 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [5, 5])
            await nodes[0].kill()
            // The dropped connection marks it (a call written before the client saw the drop would
            // fail, as it may have been processed: nothing can tell).
            try await waitUntil { transport.healthyTargets == [nodes[1].target] }
            for _ in 0..<20 { _ = try await client.unaryCall(simpleRequest()) }
            #expect(nodes.map(\.calls) == [5, 25])
            #expect(transport.healthyTargets == [nodes[1].target])
            await transport.close()
        }
    }

    @Test("close() stops the health checks and fails new calls; calls in flight finish")
    func closeStopsHealthChecks() async throws {
        try await withNodes(2) { nodes in
            let transport = BalancedClientTransport(
                targets: nodes.map(\.target),
                configuration: .init(healthCheckInterval: .milliseconds(20))
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            try await waitUntil { nodes.allSatisfy { $0.counter.healthCheckCount >= 3 } }
            let inFlight = Task { try await client.unaryCall(simpleRequest(sleepMS: 300)) }
            try await waitUntil { nodes.map(\.calls).reduce(0, +) == 1 }
            await transport.close()
            _ = try await inFlight.value
            let checks = nodes.map(\.counter.healthCheckCount)
            try await Task.sleep(for: .milliseconds(200))
            #expect(nodes.map(\.counter.healthCheckCount) == checks)
            let error = await #expect(throws: RPCError.self) { _ = try await client.unaryCall(simpleRequest()) }
            #expect(error?.code == .unavailable)
        }
    }
}
