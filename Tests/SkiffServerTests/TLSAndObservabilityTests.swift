import Foundation
import Metrics
import NIOCore
import NIOPosix
import NIOSSL
import Prometheus
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Testing

@Suite("TLS, interceptors and metrics")
struct TLSAndObservabilityTests {
    @Test("calls over TLS with ALPN skiff/1; a plaintext client is turned away")
    func tls() async throws {
        let (cert, key) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: cert).deletingLastPathComponent()) }
        let tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        try await withTestServer(configure: { $0.tls = tls }) { _, port in
            let configuration = ClientConfiguration(
                tls: .trustRootsPEMFile(cert, serverHostname: "localhost")
            )
            try await withClientConnection(target: .host("localhost", port: port), configuration: configuration) {
                connection in
                let client = TestClient(transport: connection)
                let response = try await client.unaryCall(.with { $0.responseSize = 100_000 })
                #expect(response.payload.body.count == 100_000)
            }
            let plaintext = ClientConfiguration(connectTimeout: .seconds(2), maxTransparentRetries: 0)
            try await withClientConnection(target: .host("127.0.0.1", port: port), configuration: plaintext) {
                connection in
                let error = await #expect(throws: RPCError.self) {
                    _ = try await TestClient(transport: connection).emptyCall(.init(), timeout: .seconds(3))
                }
                #expect(error?.code == .unavailable || error?.code == .deadlineExceeded || error?.code == .internal)
            }
        }
    }

    @Test("client interceptors run in order around calls over TCP")
    func clientInterceptors() async throws {
        struct AddHeader: ClientInterceptor {
            let value: String
            func intercept<Result: Sendable>(
                method: MethodDescriptor,
                options: CallOptions,
                next: (CallOptions) async throws -> Result
            ) async throws -> Result {
                var options = options
                options.metadata.add("x-skiff-echo-initial", value)
                return try await next(options)
            }
        }
        try await withTestServer { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let transport = InterceptedTransport(
                    connection,
                    interceptors: [AddHeader(value: "first"), AddHeader(value: "second")]
                )
                let response = try await transport.unary(
                    Skiff_Testing_V1_TestService.Method.EmptyCall.descriptor,
                    request: Skiff_Testing_V1_Empty(),
                    options: .defaults,
                    responseType: Skiff_Testing_V1_Empty.self
                )
                #expect(response.metadata.values("x-skiff-echo-initial") == [.string("first"), .string("second")])
            }
        }
    }

    @Test("calls are counted by method and status in Prometheus text")
    func metrics() async throws {
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(factory: PrometheusMetricsFactory(registry: registry))
        try await withTestServer(services: [TestService()], observer: observer) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                for _ in 0..<3 { _ = try await client.emptyCall(.init()) }
                _ = try? await client.unimplementedCall(.init())
                #expect(observer.connections == 1)
            }
            @Sendable func emitted() -> String {
                var bytes: [UInt8] = []
                registry.emit(into: &bytes)
                return String(decoding: bytes, as: UTF8.self)
            }
            // A call is counted once it has ended on the server's side of the wire.
            let emptyCalls =
                #"skiff_server_calls_total{method="/skiff.testing.v1.TestService/EmptyCall",status="OK"} 3"#
            try await waitUntil { emitted().contains(#"status="UNIMPLEMENTED""#) && emitted().contains(emptyCalls) }
            let text = emitted()
            #expect(text.contains("skiff_server_call_duration"))
        }
    }
}
