public import Foundation
public import Logging
public import SkiffCore
public import Testing

/// A logger that drops everything: the default for servers and services under test.
public let quietLogger = Logger(label: "skiff.test") { _ in SwiftLogNoOpLogHandler() }

/// Expects `body` to fail with an ``RPCError`` of `code` (and, when given, exactly `message`).
///
/// - Returns: the error, for further checks; `nil` when `body` succeeded or threw something else (the
///   test has recorded an issue then).
@discardableResult
public func expectStatus(
    _ code: StatusCode,
    _ message: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> RPCError? {
    do {
        try await body()
        Issue.record("expected \(code), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as RPCError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
        return error
    } catch {
        Issue.record("expected RPCError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A test step that took longer than its time limit.
public struct TestTimeout: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the test step timed out" }
}

/// Runs `body`, failing with ``TestTimeout`` (and cancelling it) when it takes longer than `timeout`.
public func withTimeout<R: Sendable>(
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
        guard let result = try await group.next(), let value = result else { throw TestTimeout() }
        return value
    }
}

/// Polls `condition` every 5 ms until it holds, failing with ``TestTimeout`` after `timeout`.
public func waitUntil(
    timeout: Duration = .seconds(30),
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    try await withTimeout(timeout) {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}

/// Runs `body` with a new, empty directory under the system's temporary directory, and removes the
/// directory and everything in it afterwards, whether `body` returned or threw.
public func withTemporaryDirectory<R>(
    _ prefix: String = "skiff",
    _ body: (URL) async throws -> R
) async throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// Runs `body` with the path of a SQLite file (not created yet) in a temporary directory that is
/// removed afterwards, with the database's log files.
public func withTemporaryDatabasePath<R>(_ body: (String) async throws -> R) async throws -> R {
    try await withTemporaryDirectory("skiff-db") { directory in
        try await body(directory.appendingPathComponent("skiff.sqlite").path)
    }
}
