import NIOCore
public import SkiffCore
public import SkiffServer
public import SkiffStandardServices

/// Runs a bare ``SkiffServer/Server`` (no application: the services given, nothing else) on
/// 127.0.0.1, port 0, for the duration of `body`, then stops it. `body` gets the server and its
/// port. For the whole application, use ``withTestApplication(_:transport:_:)``.
public func withTestServer<R: Sendable>(
    services: [any RegistrableService] = [TestService(), HealthService()],
    interceptors: [any ServerInterceptor] = [],
    observer: ServerObserver = ServerObserver(),
    protocols: [any ConnectionProtocol] = [SkiffWireProtocol()],
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (Server, Int) async throws -> R
) async throws -> R {
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configure(&configuration)
    let server = Server(
        configuration: configuration,
        services: services,
        interceptors: interceptors,
        logger: quietLogger,
        observer: observer,
        protocols: protocols
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        defer { group.cancelAll() }
        let port = try await server.listeningAddress.port!
        return try await body(server, port)
    }
}
