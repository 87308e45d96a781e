import Foundation

/// What a program run by ``runProcess(_:_:)`` did.
public struct ProcessResult: Sendable {
    /// Its exit status.
    public var status: Int32
    /// Its standard output and standard error, interleaved.
    public var output: String
}

/// Runs `program` (found on `PATH`) with `arguments` and waits for it. A test that needs an outside
/// program fails when it is missing (never skips): `dev/test.sh` installs what the tests run.
/// Blocking: call it from `Task.detached` in async tests.
public func runProcess(_ program: String, _ arguments: [String]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [program] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}
