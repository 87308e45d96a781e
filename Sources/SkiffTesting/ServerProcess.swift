public import Foundation

/// A `skiff-server` child process: the one built next to the test bundle, listening on a port of
/// its choosing on 127.0.0.1, its standard error (the log) in a file of its own. ``kill()`` ends it
/// with SIGKILL, ``stop()`` with SIGTERM (a graceful drain); either removes the log. Tests that
/// need a server in another process use it: crash tests, and peers that read the server's log.
public final class ServerProcess: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The server's standard error: its log.
    public let logFile: URL
    private let process: Process
    private let directory: URL

    /// Starts `skiff-server` with `arguments` (plus `--port` and `port`: 0, the default, lets it
    /// pick a free one) and waits, at most 10 s, for the log to say where it listens. A port given
    /// again after ``stop()`` or ``stopGracefully()`` restarts a server where clients know it.
    public init(arguments: [String], port: Int = 0) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0])
            .deletingLastPathComponent()
            .appendingPathComponent("skiff-server")
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("skiff-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logFile = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "\(port)"] + arguments
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.process = process
        // The bound port is logged: `address=[IPv4]127.0.0.1/127.0.0.1:PORT tls=false`.
        let deadline = ContinuousClock.now + .seconds(10)
        var found: Int?
        var log = ""
        while found == nil, ContinuousClock.now < deadline, process.isRunning {
            log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            if let range = log.range(of: #"127\.0\.0\.1:(\d+) tls"#, options: .regularExpression) {
                found = Int(log[range].dropFirst("127.0.0.1:".count).prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            throw DidNotStart(output: String(log.prefix(4_000)))
        }
        self.port = found
    }

    /// Ends the server at once (SIGKILL), as a crash would, and removes its log.
    /// Whether the process still runs.
    public var isRunning: Bool { process.isRunning }

    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Asks the server to shut down (SIGTERM), waits for it, removes its log and returns its exit
    /// status.
    @discardableResult
    public func stop() -> Int32 {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
        return process.terminationStatus
    }

    /// Asks the server to shut down (SIGTERM) and waits, without blocking a thread, until it has
    /// exited (a graceful drain: calls in flight finish); removes its log and returns its exit
    /// status. Past `timeout` it is killed (SIGKILL) and the status is that of the kill.
    @discardableResult
    public func stopGracefully(timeout: Duration = .seconds(30)) async -> Int32 {
        process.terminate()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
        return process.terminationStatus
    }

    /// The server did not say where it listens; `output` is the start of its log.
    public struct DidNotStart: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "skiff-server did not report its port: \(output)" }
    }
}
