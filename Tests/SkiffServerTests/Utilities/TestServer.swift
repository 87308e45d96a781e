import Logging
import NIOCore
import SkiffCore
import SkiffServer
import SkiffStandardServices

/// A logger that drops everything (tests never bootstrap the logging system).
let quietLogger = Logger(label: "skiff.test") { _ in SwiftLogNoOpLogHandler() }

/// Runs a real server on 127.0.0.1, port 0, for the duration of `body`, then stops it.
func withTestServer<R: Sendable>(
    services: [any RegistrableService] = [TestService(), HealthService()],
    interceptors: [any ServerInterceptor] = [],
    observer: ServerObserver = ServerObserver(),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (SkiffServer, Int) async throws -> R
) async throws -> R {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configure(&configuration)
    let server = SkiffServer(
        configuration: configuration,
        services: services,
        interceptors: interceptors,
        logger: quietLogger,
        observer: observer
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        defer { group.cancelAll() }
        let port = try await server.listeningAddress.port!
        return try await body(server, port)
    }
}

/// Fails the test's wait when `body` takes longer than `timeout`.
func withTimeout<R: Sendable>(
    _ timeout: Duration = .seconds(30),
    _ body: @escaping @Sendable () async throws -> R
) async throws -> R {
    try await withThrowingTaskGroup(of: R?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let value = result else {
            throw TestTimeout()
        }
        return value
    }
}

struct TestTimeout: Error, CustomStringConvertible {
    var description: String { "the test step timed out" }
}

/// Polls `condition` until it holds, failing after `timeout`.
func waitUntil(
    timeout: Duration = .seconds(30),
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    try await withTimeout(timeout) {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}
