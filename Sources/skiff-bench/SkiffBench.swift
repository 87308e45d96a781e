import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SwiftProtobuf
import Synchronization

/// A quick benchmark of the runtime: unary or server-streaming calls against the conformance
/// service, closed loop, N in flight over C connections. Starts its own server on loopback
/// unless `--target` names one. For design checks during development; `skiff-load` is the
/// full harness.
@main
struct SkiffBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skiff-bench",
        abstract: "Measure unary/streaming calls per second against the conformance service."
    )

    @Option(help: "host:port of a running server (started with --enable-test-service); default: an embedded one.")
    var target: String?

    @Option(help: "Calls in flight.")
    var concurrency = 64

    @Option(help: "Connections the calls are spread over.")
    var connections = 1

    @Option(help: "Seconds to measure.")
    var duration = 5.0

    @Option(help: "Seconds to warm up first.")
    var warmup = 1.0

    @Option(help: "Response payload bytes.")
    var payloadSize: Int32 = 250

    @Option(help: "unary or stream (100 responses per call).")
    var mode = "unary"

    @Option(help: "Where embedded-server handlers run: eventLoop or global.")
    var handlerExecutor = "eventLoop"

    func run() async throws {
        if let target {
            let parts = target.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else { throw ValidationError("--target is host:port") }
            try await measure(host: String(parts[0]), port: port)
            return
        }
        var config = ServerConfiguration()
        config.port = 0
        config.handlerExecutor = handlerExecutor == "global" ? .globalConcurrent : .eventLoop
        let server = Server(
            configuration: config,
            services: [TestService()],
            logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let port = try await server.listeningAddress.port!
            try await measure(host: "127.0.0.1", port: port)
            group.cancelAll()
        }
    }

    func measure(host: String, port: Int) async throws {
        let pool = ClientConnectionPool(target: .host(host, port: port), size: connections)
        let client = Skiff_Testing_V1_TestService.Client(transport: pool)
        let request = Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = payloadSize }
        let streamRequest = Skiff_Testing_V1_StreamingOutputCallRequest.with {
            $0.responseParameters = Array(repeating: .with { $0.size = payloadSize }, count: 100)
        }
        let isStream = mode == "stream"
        let clock = ContinuousClock()
        let start = clock.now
        let measureFrom = start.advanced(by: .milliseconds(Int64(warmup * 1000)))
        let end = measureFrom.advanced(by: .milliseconds(Int64(duration * 1000)))
        let errors = ErrorCount()

        let latencies = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var samples: [Int64] = []
                    samples.reserveCapacity(200_000)
                    while true {
                        let t0 = clock.now
                        if t0 >= end { break }
                        do {
                            if isStream {
                                _ = try await client.streamingOutputCall(streamRequest) { response in
                                    var n = 0
                                    for try await _ in response.messages { n += 1 }
                                    return n
                                }
                            } else {
                                _ = try await client.unaryCall(request)
                            }
                        } catch {
                            errors.value.wrappingAdd(1, ordering: .relaxed)
                        }
                        let t1 = clock.now
                        if t0 >= measureFrom && t1 <= end {
                            let (s, a) = (t1 - t0).components
                            samples.append(s * 1_000_000 + a / 1_000_000_000_000)
                        }
                    }
                    return samples
                }
            }
            var all: [Int64] = []
            for try await samples in group { all.append(contentsOf: samples) }
            return all.sorted()
        }
        await pool.close()
        func percentile(_ p: Double) -> Int64 {
            guard !latencies.isEmpty else { return 0 }
            return latencies[min(latencies.count - 1, Int((p / 100 * Double(latencies.count)).rounded(.up)) - 1)]
        }
        let rate = Double(latencies.count) / duration
        let unit = isStream ? "calls/s (×100 msgs)" : "calls/s"
        print(
            String(
                format:
                    "%@ concurrency=%d connections=%d: %.0f %@  p50=%dµs p90=%dµs p99=%dµs p99.9=%dµs max=%dµs errors=%d",
                mode,
                concurrency,
                connections,
                rate,
                unit,
                percentile(50),
                percentile(90),
                percentile(99),
                percentile(99.9),
                latencies.last ?? 0,
                errors.value.load(ordering: .relaxed)
            )
        )
    }
}

final class ErrorCount: Sendable {
    let value = Atomic<Int>(0)
}
