import SkiffCore
import SkiffStandardServices
import Testing

/// The transports every conformance test runs over.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess
    var testDescription: String { rawValue }
}

/// Runs `body` with a transport of the given kind serving the conformance service.
func withTransport(
    _ kind: TransportKind,
    interceptors: [any ServerInterceptor] = [],
    _ body: @Sendable (any ClientTransport) async throws -> Void
) async throws {
    switch kind {
    case .inProcess:
        try await body(InProcessTransport(services: [TestService()], interceptors: interceptors))
    }
}
