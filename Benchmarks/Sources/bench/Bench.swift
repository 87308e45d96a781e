import ArgumentParser
import Foundation
import Synchronization

/// One executable for all three targets: `serve` starts a server, `load` drives one with the same closed loop
/// whatever the target, `idle` holds many idle connections open and reports the server's RSS.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Skiff versus grpc-swift-2 (HTTP/2) and raw SwiftNIO on the conformance service's calls.",
        subcommands: [Serve.self, Load.self, Idle.self]
    )
}

/// What is measured.
enum Target: String, ExpressibleByArgument, CaseIterable, Sendable {
    case skiff
    case grpc
    /// Skiff's gRPC endpoint (`SkiffGRPC`, HTTP/2 only on this listener), driven by the same
    /// grpc-swift-2 client as `grpc`.
    case skiffGRPC = "skiff-grpc"
    /// Skiff's HTTP/1.1 endpoint (`SkiffGRPC`'s `HTTP1Protocol` alone), Connect unary calls
    /// (`application/proto`) from a NIOHTTP1 client: one keep-alive connection per call in flight.
    case skiffConnect = "skiff-connect"
    /// Raw SwiftNIO; the client is `async` (promise + await) and pipelines every call on one connection
    /// (the anchors' `nio-raw-async`).
    case raw
    /// The same raw server; the client is event-loop driven, as the anchors' `nio-raw` floor: each of the
    /// `--concurrency` slots sends its next request from the previous response's callback, flushing once per
    /// read batch, with no Swift Concurrency on the request path.
    case rawEventLoop = "raw-el"
}

/// Unary `UnaryCall` (250 B response) or server-streaming `StreamingOutputCall` (100 × 250 B responses).
enum Mode: String, ExpressibleByArgument, CaseIterable, Sendable {
    case unary
    case stream
}

/// The payload of every call, the same for all targets.
enum Workload {
    /// Response payload bytes (unary and per streamed message).
    static let payloadSize: Int32 = 250
    /// Messages per streaming call.
    static let messagesPerCall = 100
}

/// One target's client: `call()` makes one call of the mode and returns the messages it received.
protocol BenchClient: Sendable {
    func call() async throws -> Int
    /// Where the closed loop's tasks run: `nil` for the global concurrent executor.
    var executor: (any TaskExecutor)? { get }
}

extension BenchClient {
    var executor: (any TaskExecutor)? { nil }
}

/// Where the Skiff client's calling tasks run.
enum ClientExecutor: String, ExpressibleByArgument {
    /// The connection's event loop (`ClientConnection.taskExecutor`): no thread hop per call.
    case loop
    /// Swift's global concurrent executor: a hop to the loop and one back per call.
    case pool
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve UnaryCall and StreamingOutputCall.")

    @Option(help: "skiff, skiff-grpc, skiff-connect, grpc, raw or raw-el.")
    var target: Target

    @Option(help: "TCP port on 127.0.0.1 (0: any free port).")
    var port = 0

    @Option(help: "grpc: the server transport's flush coalescing, off or library (its 100 µs default).")
    var flushCoalescing = GRPCTarget.FlushCoalescing.library

    func run() async throws {
        switch target {
        case .skiff: try await SkiffTarget.serve(port: port)
        case .skiffGRPC, .skiffConnect: try await SkiffTarget.serve(port: port, target: target)
        case .grpc: try await GRPCTarget.serve(port: port, flushCoalescing: flushCoalescing)
        case .raw, .rawEventLoop: try await RawTarget.serve(port: port)
        }
    }
}

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Closed loop over one connection; prints one JSON line per run."
    )

    @Option(help: "skiff, skiff-grpc, skiff-connect, grpc, raw or raw-el.")
    var target: Target

    @Option(help: "The server's port on 127.0.0.1.")
    var port: Int

    @Option(help: "Calls in flight.")
    var concurrency = 16

    @Option(help: "Seconds measured.")
    var duration = 5.0

    @Option(help: "Seconds of warm-up before measuring.")
    var warmup = 1.0

    @Option(help: "unary or stream.")
    var mode = Mode.unary

    @Option(help: "The server's process id, to read its peak RSS (VmHWM) after the run.")
    var serverPid: Int32?

    @Option(help: "A label copied into the JSON line.")
    var label = ""

    @Option(
        help: "grpc, skiff-grpc: the grpc-swift-2 client transport's flush coalescing, off or library (100 µs)."
    )
    var flushCoalescing = GRPCTarget.FlushCoalescing.library

    @Option(help: "skiff: where the calling tasks run, loop (the connection's event loop) or pool (global executor).")
    var clientExecutor = ClientExecutor.pool

    @Option(
        help: """
            Make exactly this many calls (after one untimed call), then stop: no warm-up, no time window; \
            for profiling under callgrind, where a time window would measure the profiler.
            """
    )
    var calls: Int?

    func run() async throws {
        let settings = LoopSettings(
            concurrency: concurrency,
            warmup: calls == nil ? warmup : 0,
            duration: calls == nil ? duration : 1e9,
            maxCalls: calls
        )
        let result: LoopResult
        switch target {
        case .skiff:
            result = try await SkiffTarget.withClient(port: port, mode: mode, executor: clientExecutor) {
                try await runClosedLoop($0, settings)
            }
        case .grpc, .skiffGRPC:
            result = try await GRPCTarget.withClient(port: port, mode: mode, flushCoalescing: flushCoalescing) {
                try await runClosedLoop($0, settings)
            }
        case .raw:
            result = try await RawTarget.withClient(port: port, mode: mode) { try await runClosedLoop($0, settings) }
        case .skiffConnect:
            result = try await ConnectTarget.withClient(port: port, mode: mode, connections: concurrency) {
                try await runClosedLoop($0, settings)
            }
        case .rawEventLoop:
            result = try await RawTarget.runEventLoopClient(port: port, mode: mode, settings: settings)
        }
        let rss = serverPid.flatMap { peakRSSMegabytes(pid: $0) }
        let measured = calls == nil ? duration : result.elapsedSeconds
        var extra: [String: Any] = [:]
        if target == .grpc || target == .skiffGRPC { extra["client_flush_coalescing"] = flushCoalescing.rawValue }
        printJSON(
            extra.merging([
                "label": label,
                "target": target.rawValue,
                "mode": mode.rawValue,
                "concurrency": concurrency,
                "connections": target == .skiffConnect ? concurrency : 1,
                "duration_s": measured,
                "warmup_s": warmup,
                "calls": result.calls,
                "calls_per_s": (Double(result.calls) / measured).rounded(),
                "msgs_per_s": (Double(result.messages) / measured).rounded(),
                "p50_us": result.percentileMicroseconds(50),
                "p90_us": result.percentileMicroseconds(90),
                "p99_us": result.percentileMicroseconds(99),
                "p999_us": result.percentileMicroseconds(99.9),
                "errors": result.errors,
                "server_rss_mb": orNull(rss),
                // Over the measured window; null where the loop does not measure it (raw-el, --calls).
                "client_cpu_us_per_call": orNull(
                    result.clientCPUSeconds > 0 && result.calls > 0
                        ? (result.clientCPUSeconds * 1e7 / Double(result.calls)).rounded() / 10 : nil
                ),
            ]) { $1 }
        )
    }
}

struct Idle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Opens N idle Skiff connections, holds them, prints the server's peak RSS as JSON."
    )

    @Option(help: "The Skiff server's port on 127.0.0.1.")
    var port: Int

    @Option(help: "Idle connections to open.")
    var connections = 1000

    @Option(help: "Seconds to hold them before reading the RSS.")
    var hold = 2.0

    @Option(help: "The server's process id.")
    var serverPid: Int32

    func run() async throws {
        let before = peakRSSMegabytes(pid: serverPid)
        let opened = try await SkiffTarget.holdIdleConnections(port: port, count: connections, seconds: hold) {
            (peakRSSMegabytes(pid: serverPid), currentRSSMegabytes(pid: serverPid))
        }
        printJSON([
            "label": "idle",
            "target": "skiff",
            "mode": "idle",
            "connections": opened.count,
            "server_rss_before_mb": orNull(before),
            "server_rss_mb": orNull(opened.peak),
            "server_rss_now_mb": orNull(opened.current),
        ])
    }
}

/// Closed-loop settings.
struct LoopSettings: Sendable {
    var concurrency: Int
    var warmup: Double
    var duration: Double
    /// Stop after this many calls in total (`--calls`), whatever the time.
    var maxCalls: Int? = nil
}

/// Calls and messages completed inside the measured window, and the latencies of calls that started and ended in it.
struct LoopResult: Sendable {
    var calls = 0
    var messages = 0
    var errors = 0
    /// Nanoseconds, sorted.
    var latencies: [Int64] = []
    /// Wall time from the first call to the last, in seconds (used with `--calls`).
    var elapsedSeconds = 0.0
    /// The client process's CPU time (user + system) over the measured window, in seconds.
    var clientCPUSeconds = 0.0

    /// Nearest-rank percentile, in microseconds with one decimal.
    func percentileMicroseconds(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(latencies.count)).rounded(.up))
        let index = min(latencies.count - 1, max(0, rank - 1))
        return (Double(latencies[index]) / 100).rounded() / 10
    }
}

/// The CPU time (user + system) this process has used, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// The one load loop for all targets: `concurrency` tasks, each calling back to back until the window ends.
func runClosedLoop(_ client: some BenchClient, _ settings: LoopSettings) async throws -> LoopResult {
    let clock = ContinuousClock()
    let start = clock.now
    let measureFrom = start + .seconds(settings.warmup)
    let end = measureFrom + .seconds(settings.duration)
    let budget = settings.maxCalls.map { CallBudget($0) }
    var total = try await withThrowingTaskGroup(of: LoopResult.self) { group in
        // The client's own CPU over the measured window (getrusage at its start and end).
        group.addTask {
            try await Task.sleep(until: measureFrom, clock: clock)
            let from = processCPUSeconds()
            try await Task.sleep(until: end, clock: clock)
            var cpu = LoopResult()
            cpu.clientCPUSeconds = processCPUSeconds() - from
            return cpu
        }
        for _ in 0..<settings.concurrency {
            group.addTask(executorPreference: client.executor) {
                var local = LoopResult()
                local.latencies.reserveCapacity(1 << 16)
                while true {
                    let t0 = clock.now
                    if t0 >= end { break }
                    if let budget, !budget.take() { break }
                    var messages = 0
                    var failed = false
                    do {
                        messages = try await client.call()
                    } catch {
                        failed = true
                    }
                    let t1 = clock.now
                    guard t1 >= measureFrom && t1 <= end else { continue }
                    if failed {
                        local.errors += 1
                        continue
                    }
                    local.calls += 1
                    local.messages += messages
                    if t0 >= measureFrom {
                        let (seconds, attoseconds) = (t1 - t0).components
                        local.latencies.append(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                    }
                }
                return local
            }
        }
        var all = LoopResult()
        for try await part in group {
            all.clientCPUSeconds += part.clientCPUSeconds
            all.calls += part.calls
            all.messages += part.messages
            all.errors += part.errors
            all.latencies.append(contentsOf: part.latencies)
        }
        return all
    }
    total.latencies.sort()
    let (seconds, attoseconds) = (clock.now - start).components
    total.elapsedSeconds = Double(seconds) + Double(attoseconds) / 1e18
    return total
}

/// Calls left to make with `--calls`, shared by the loop's tasks.
final class CallBudget: Sendable {
    private let remaining: Atomic<Int>

    init(_ calls: Int) { remaining = Atomic(calls) }

    /// Takes one call; `false` when none is left.
    func take() -> Bool { remaining.subtract(1, ordering: .relaxed).oldValue > 0 }
}

/// `VmHWM` of `/proc/PID/status`, in MB (10^6 bytes).
func peakRSSMegabytes(pid: Int32) -> Double? { procStatusMegabytes(pid: pid, field: "VmHWM:") }

/// `VmRSS` of `/proc/PID/status`, in MB (10^6 bytes).
func currentRSSMegabytes(pid: Int32) -> Double? { procStatusMegabytes(pid: pid, field: "VmRSS:") }

private func procStatusMegabytes(pid: Int32, field: String) -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first
        return kilobytes.map { ($0 * 1024 / 1e5).rounded() / 10 }
    }
    return nil
}

/// Prints one JSON object on one line, keys sorted.
func printJSON(_ object: [String: Any]) {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
    fflush(nil)
}

/// Prints the ready line that run.sh waits for.
func announceListening(_ target: Target, port: Int) {
    print("listening target=\(target.rawValue) port=\(port) pid=\(getpid())")
    fflush(nil)
}

/// A JSON value: the number, or null.
func orNull(_ value: Double?) -> Any {
    guard let value else { return NSNull() }
    return value
}
