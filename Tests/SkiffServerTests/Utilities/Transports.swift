import SkiffClient
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import Testing

/// The transports every conformance test runs over.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `InProcessTransport`: no socket.
    case inProcess
    /// One `ClientConnection` to a real server over loopback TCP.
    case tcp
    /// A `ClientConnectionPool` of three connections.
    case pool
    var testDescription: String { rawValue }
}

/// Runs `body` with a transport of the given kind serving the conformance service.
func withTransport(
    _ kind: TransportKind,
    interceptors: [any ServerInterceptor] = [],
    _ body: @escaping @Sendable (any ClientTransport) async throws -> Void
) async throws {
    switch kind {
    case .inProcess:
        try await body(InProcessTransport(services: [TestService()], interceptors: interceptors))
    case .tcp:
        try await withTestServer(interceptors: interceptors) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await body(connection)
            }
        }
    case .pool:
        try await withTestServer(interceptors: interceptors) { _, port in
            let pool = ClientConnectionPool(target: .host("127.0.0.1", port: port), size: 3)
            do {
                try await body(pool)
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }
}
