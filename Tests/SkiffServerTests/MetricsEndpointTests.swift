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

    @Test("GET /metrics returns the Prometheus text of the server's calls")
    func prometheusText() async throws {
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(factory: PrometheusMetricsFactory(registry: registry))
        let bound = Bound()
        let endpoint = MetricsHTTPServer(host: "127.0.0.1", port: 0, registry: registry, logger: quietLogger) {
            address in bound.address.withLock { $0 = address }
        }
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = SkiffServer(
            configuration: configuration,
            services: [TestService()],
            logger: quietLogger,
            observer: observer
        )
        let group = ServiceGroup(services: [endpoint, server], logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try await server.listeningAddress.port!
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                _ = try await TestClient(transport: connection).emptyCall(.init())
            }
            try await waitUntil { bound.address.withLock { $0 } != nil }
            let metricsPort = bound.address.withLock { $0 }!.port!
            let response = try await Self.get("/metrics", port: metricsPort)
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.contains("skiff_server_calls_total"))
            #expect(response.contains(#"method="/skiff.testing.v1.TestService/EmptyCall""#))
            let missing = try await Self.get("/nope", port: metricsPort)
            #expect(missing.hasPrefix("HTTP/1.1 404"))
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
    }
}
