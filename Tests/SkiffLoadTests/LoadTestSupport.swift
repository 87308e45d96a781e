import ArgumentParser
import Foundation
import Logging
import NIOCore
import SkiffServer
import SkiffServerApp
import SkiffTesting

/// Runs the production server (``Application``) in process on 127.0.0.1, any port, memory storage,
/// with the conformance service; hands `body` the app and `host:port`.
func withServer<R: Sendable>(_ body: @Sendable (Application, String) async throws -> R) async throws -> R {
    var configuration = ApplicationConfiguration.forTests()
    configuration.enableTestService = true
    // A few seeded users make thousands of writes a second: no per-user limit fits that.
    configuration.rateLimitScale = 0
    return try await withTestApplication(configuration) { test in try await body(test.app, test.address) }
}

/// A fresh file path in a new temporary directory; remove it with ``removeTemporaryPath(_:)``.
func temporaryPath(_ name: String) -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skiff-load-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
}

/// Removes the temporary directory a ``temporaryPath(_:)`` path is in, with everything in it.
func removeTemporaryPath(_ path: String) {
    try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
}
