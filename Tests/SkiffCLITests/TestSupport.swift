import ArgumentParser
import Foundation
import Logging
import NIOCore
import SkiffCLI
import SkiffServer
import SkiffServerApp
import SkiffTesting
import Synchronization
import Testing

/// What a `skiff` run produced.
struct RunResult: Sendable {
    var code: Int32
    var stdout: String
    var stderr: String
}

/// Collects text written by a command.
final class Buffer: Sendable {
    private let text = Mutex("")
    func append(_ more: String) { text.withLock { $0 += more } }
    var contents: String { text.withLock { $0 } }
}

/// Feeds lines to a command's standard input.
final class Lines: Sendable {
    private let lines: Mutex<[String]>
    init(_ lines: [String]) { self.lines = Mutex(lines) }
    func next() -> String? { lines.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}

/// Runs `skiff` in process with the given arguments, standard input lines and config directory.
func skiff(_ arguments: [String], stdin: [String] = [], configHome: String? = nil) async -> RunResult {
    let out = Buffer()
    let err = Buffer()
    let input = Lines(stdin)
    let config =
        configHome
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("skiff-cfg-\(UUID().uuidString)").path
    let io = CommandIO(
        stdout: { out.append($0) },
        stderr: { err.append($0) },
        readLine: { input.next() },
        environment: ["XDG_CONFIG_HOME": config, "HOME": config]
    )
    let code = await SkiffMain.run(arguments, io: io)
    return RunResult(code: code, stdout: out.contents, stderr: err.contents)
}

/// Runs the production object graph on 127.0.0.1, port 0, in memory, with the test service,
/// and hands `body` its `HOST:PORT`.
func withServer<R: Sendable>(_ body: @Sendable (Application, String) async throws -> R) async throws -> R {
    var configuration = ApplicationConfiguration.forTests()
    configuration.enableTestService = true
    return try await withTestApplication(configuration) { test in try await body(test.app, test.address) }
}
