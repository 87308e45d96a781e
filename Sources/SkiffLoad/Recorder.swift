import Foundation
public import Histogram
import Synchronization

/// Collects the outcome of every call: latencies in an HdrHistogram (microseconds) and failures by
/// status code, separately for warm-up and measurement. Safe to use from many tasks.
public final class LoadRecorder: Sendable {
    /// The largest latency recorded exactly: one hour, in microseconds. Larger ones are clamped.
    public static let highestTrackableMicros: UInt64 = 3_600_000_000

    struct State {
        var histogram = Histogram<UInt64>(
            highestTrackableValue: LoadRecorder.highestTrackableMicros,
            numberOfSignificantValueDigits: .three
        )
        var interval = Histogram<UInt64>(
            highestTrackableValue: LoadRecorder.highestTrackableMicros,
            numberOfSignificantValueDigits: .three
        )
        var succeeded = 0
        var errors: [String: Int] = [:]
        var warmupCalls = 0
        var warmupErrors: [String: Int] = [:]
        var firstErrors: [String: String] = [:]
    }

    private let state = Mutex(State())
    /// Calls started and not yet finished.
    let inFlight = Atomic<Int>(0)
    /// Calls started so far (closed loop, for `--max-calls`).
    let started = Atomic<Int>(0)

    /// Creates an empty recorder.
    public init() {}

    /// Records one finished call.
    /// - Parameters:
    ///   - micros: its latency in microseconds (from the intended send time in open loop).
    ///   - failure: the failure key (``LoadFailure/key(for:)``) and message, or `nil` for success.
    ///   - warmup: whether the call belongs to the warm-up, which is counted apart.
    public func record(micros: UInt64, failure: (key: String, message: String)?, warmup: Bool) {
        state.withLock { s in
            if warmup {
                s.warmupCalls += 1
                if let failure { s.warmupErrors[failure.key, default: 0] += 1 }
            } else if let failure {
                s.errors[failure.key, default: 0] += 1
            } else {
                let value = min(max(micros, 1), Self.highestTrackableMicros)
                _ = s.histogram.record(value)
                _ = s.interval.record(value)
                s.succeeded += 1
            }
            if let failure, s.firstErrors[failure.key] == nil { s.firstErrors[failure.key] = failure.message }
        }
    }

    /// A snapshot for the live display: totals so far and the p99 since the previous snapshot.
    func tick() -> (succeeded: Int, failed: Int, warmup: Int, intervalP99: UInt64, intervalCount: UInt64) {
        state.withLock { s in
            let result = (
                s.succeeded, s.errors.values.reduce(0, +) + s.warmupErrors.values.reduce(0, +), s.warmupCalls,
                s.interval.valueAtPercentile(99), s.interval.totalCount
            )
            s.interval.reset()
            return result
        }
    }

    /// The successful measured calls' latencies.
    public var histogram: Histogram<UInt64> { state.withLock { $0.histogram } }
    /// Successful measured calls.
    public var succeeded: Int { state.withLock { $0.succeeded } }
    /// Failed measured calls by status code.
    public var errors: [String: Int] { state.withLock { $0.errors } }
    /// Warm-up calls, successful or not.
    public var warmupCalls: Int { state.withLock { $0.warmupCalls } }
    /// Failed warm-up calls by status code.
    public var warmupErrors: [String: Int] { state.withLock { $0.warmupErrors } }
    /// The first message seen for each failure key.
    public var firstErrors: [String: String] { state.withLock { $0.firstErrors } }
}

/// Where progress goes: a line rewritten in place on a terminal, plain lines otherwise, or nowhere.
public struct ProgressOutput: Sendable {
    enum Mode { case terminal, lines, silent }
    let mode: Mode

    /// Progress on standard error: in place if it is a terminal, else one line per update.
    public static var standardError: ProgressOutput {
        ProgressOutput(mode: isatty(STDERR_FILENO) != 0 ? .terminal : .lines)
    }
    /// No progress output (tests).
    public static let silent = ProgressOutput(mode: .silent)

    /// Shows `line` as the current status.
    public func update(_ line: String) {
        switch mode {
        case .terminal: FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        case .lines: FileHandle.standardError.write(Data("\(line)\n".utf8))
        case .silent: break
        }
    }

    /// Ends the in-place line, if any.
    public func finish() {
        if mode == .terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// Shows a progress bar (`done` of `total`) with a label; on non-terminals only every 10 %.
    public func bar(_ label: String, done: Int, total: Int) {
        guard total > 0 else { return }
        switch mode {
        case .terminal:
            let width = 30
            let filled = width * done / total
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            update("\(label) [\(bar)] \(done)/\(total)")
            if done == total { finish() }
        case .lines:
            if done == total || (done * 10 / total) != ((done - 1) * 10 / total) { update("\(label) \(done)/\(total)") }
        case .silent: break
        }
    }
}
