import Foundation
import SkiffAPI
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Where the repository's files are, from this file's path.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

@Suite("Browsers: fetch from another origin through CORS")
struct BrowserTests {
    @Test(
        "headless Chromium calls SearchListings over Connect JSON and a server stream over gRPC-Web from an allowed origin, and cannot from another"
    )
    func chromium() async throws {
        guard executableInPath("chromium") != nil else {
            Issue.record("chromium is not installed; dev/test.sh installs it (apt-get install chromium)")
            return
        }
        let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Browser/browser_check.py")
        // The driver serves the page from two origins of its own and prints them; the server allows
        // the first only; the driver then loads the page from each in Chromium and prints its result.
        let driver = try ProcessLines(["python3", script.path, "--query", "bike", "--timeout", "15"])
        // Whatever happens, the driver (and through it Chromium) is stopped after this long.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(45))
            driver.terminate()
        }
        defer {
            watchdog.cancel()
            driver.terminate()
        }
        let first = await driver.line() ?? ""
        guard first.hasPrefix("origins ") else {
            Issue.record("the browser driver did not start: \(first)\n\(await driver.rest())")
            return
        }
        let origins = first.split(separator: " ").dropFirst().map(String.init)
        try #require(origins.count == 2, "\(first)")

        var configuration = ApplicationConfiguration.forTests()
        configuration.enableTestService = true
        configuration.corsOrigins = [origins[0]]
        let output = try await withTestApplication(configuration) { test in
            let seller = try await test.signedInUser(email: "sel@campus.edu", name: "Sel")
            _ = try await test.listings.createListing(
                .with {
                    $0.listing.title = "Red bike"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            )
            driver.write("api http://127.0.0.1:\(test.port)\n")
            return await driver.rest()
        }
        let status = await driver.exitStatus()
        #expect(status == 0, "\(output)")
        let lines = Set(output.split(separator: "\n").map(String.init))
        // The allowed origin: the seeded listing found over Connect JSON (POST after a preflight, and
        // GET without one); the stream's three messages, of the sizes asked for, then grpc-status 0
        // from the gRPC-Web trailers frame.
        #expect(lines.contains("allowed search: Red bike"), "\(output)")
        #expect(lines.contains("allowed get: Red bike"), "\(output)")
        #expect(lines.contains("allowed stream: 3 messages, sizes 1,2,3, grpc-status 0"), "\(output)")
        #expect(lines.contains("allowed done"), "\(output)")
        // Another origin: the browser refuses every call: the POSTs' preflights are 403 without CORS
        // headers, and the GET (no preflight) is answered without them, so the page cannot read it.
        #expect(lines.contains { $0.hasPrefix("other search: error TypeError") }, "\(output)")
        #expect(lines.contains { $0.hasPrefix("other get: error TypeError") }, "\(output)")
        #expect(lines.contains { $0.hasPrefix("other stream: error TypeError") }, "\(output)")
        #expect(lines.contains("other done"), "\(output)")
    }
}

/// The path of `name` in one of `PATH`'s directories, if it is there and executable.
private func executableInPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A child process whose standard output (and error) is read line by line, and whose standard input
/// is written. Reads block a detached task, not the caller; they end when the process closes its
/// output (it exited, or ``terminate()`` stopped it). `Process` is not `Sendable`, but its methods
/// used here (`isRunning`, `terminate`, `waitUntilExit`) may be called from any thread; the read
/// buffer is behind a lock.
private final class ProcessLines: @unchecked Sendable {
    private let process: Process
    private let input: FileHandle
    private let output: FileHandle
    private let buffer = Mutex(Data())

    /// Starts `arguments` through `/usr/bin/env`.
    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.input = input.fileHandleForWriting
        self.output = output.fileHandleForReading
        self.process = process
    }

    /// The next line, without its newline; `nil` at the end of the output.
    func line() async -> String? {
        await Task.detached { [self] in
            while true {
                let line: String?? = buffer.withLock { buffer in
                    guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                    defer { buffer.removeSubrange(...newline) }
                    return String(decoding: buffer[..<newline], as: UTF8.self)
                }
                if let line { return line }
                let chunk = output.availableData
                if chunk.isEmpty {
                    return buffer.withLock { buffer in
                        defer { buffer.removeAll() }
                        return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
                    }
                }
                buffer.withLock { $0.append(chunk) }
            }
        }.value
    }

    /// Everything left of the output, until the process closes it.
    func rest() async -> String {
        var lines: [String] = []
        while let line = await line() { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    /// Writes `text` to the process's standard input.
    func write(_ text: String) {
        try? input.write(contentsOf: Data(text.utf8))
    }

    /// Stops the process (SIGTERM) if it still runs.
    func terminate() {
        if process.isRunning { process.terminate() }
    }

    /// The exit status, once the process ended.
    func exitStatus() async -> Int32 {
        await Task.detached { [self] in
            process.waitUntilExit()
            return process.terminationStatus
        }.value
    }
}
