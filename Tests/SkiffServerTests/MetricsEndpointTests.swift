import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffServerApp
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

@Suite("Metrics endpoint")
struct MetricsEndpointTests {
    final class Bound: Sendable {
        let address = Mutex<SocketAddress?>(nil)
    }

    /// A one-shot HTTP/1.1 GET over a raw socket; returns the whole response.
    static func get(_ path: String, port: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            )
            var response = ""
            for try await chunk in inbound { response += String(buffer: chunk) }
            return response
        }
    }

    /// Runs `body` with a test server that reports to a Prometheus registry served over HTTP:
    /// `body` gets a client connection to the server and the port of its metrics endpoint.
    static func withMeteredServer(
        _ body: @Sendable (ClientConnection, _ metricsPort: Int) async throws -> Void
    ) async throws {
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(factory: PrometheusMetricsFactory(registry: registry))
        let bound = Bound()
        let endpoint = MetricsHTTPServer(host: "127.0.0.1", port: 0, registry: registry, logger: quietLogger) {
            address in bound.address.withLock { $0 = address }
        }
        try await withTestServer(services: [TestService()], observer: observer) { _, port in
            let endpointGroup = ServiceGroup(services: [endpoint], logger: quietLogger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await endpointGroup.run() }
                do {
                    try await waitUntil { bound.address.withLock { $0 } != nil }
                    let metricsPort = bound.address.withLock { $0 }!.port!
                    try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                        try await body(connection, metricsPort)
                    }
                } catch {
                    await endpointGroup.triggerGracefulShutdown()
                    throw error
                }
                await endpointGroup.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
    }

    /// The names and labels of the series in a Prometheus text response, without their values.
    static func series(_ response: String) -> Set<Substring> {
        let body = response.split(separator: "\r\n\r\n", maxSplits: 1).last ?? ""
        return Set(
            body.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
                line.split(separator: " ", maxSplits: 1).first ?? ""
            }
        )
    }

    @Test("GET /metrics returns the Prometheus text of the server's calls")
    func prometheusText() async throws {
        try await Self.withMeteredServer { connection, metricsPort in
            _ = try await TestClient(transport: connection).emptyCall(.init())
            let response = try await Self.get("/metrics", port: metricsPort)
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.contains("skiff_server_calls_total"))
            #expect(response.contains(#"method="/skiff.testing.v1.TestService/EmptyCall""#))
            let missing = try await Self.get("/nope", port: metricsPort)
            #expect(missing.hasPrefix("HTTP/1.1 404"))
        }
    }

    @Test("calls to made-up methods add no series: a flood of random paths leaves /metrics the same size")
    func randomPathFlood() async throws {
        try await Self.withMeteredServer { connection, metricsPort in
            func callMadeUp(_ index: Int) async throws {
                let method = MethodDescriptor(
                    service: "attacker.Service\(index)",
                    method: "Method\(UInt64.random(in: 0...UInt64.max))",
                    kind: .unary
                )
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        method,
                        request: Skiff_Testing_V1_Empty(),
                        options: .defaults,
                        responseType: Skiff_Testing_V1_Empty.self
                    )
                }
                #expect(error?.code == .unimplemented)
            }
            _ = try await TestClient(transport: connection).emptyCall(.init())
            try await callMadeUp(0)
            let before = try await Self.get("/metrics", port: metricsPort)
            #expect(before.contains(#"method="unknown""#))
            for index in 1...300 { try await callMadeUp(index) }
            let after = try await Self.get("/metrics", port: metricsPort)
            let added = Self.series(after).subtracting(Self.series(before))
            #expect(added.count == 0, "series added by the flood, for example \(added.first ?? "")")
            #expect(!after.contains("attacker"))
            #expect(after.contains(#"skiff_server_calls_total{method="unknown",status="UNIMPLEMENTED"} 301"#))
        }
    }
}
