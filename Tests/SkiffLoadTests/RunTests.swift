import ArgumentParser
import Foundation
import Histogram
import NIOCore
import SkiffLoad
import SkiffServer
import SkiffServerApp
import SkiffTesting
import Testing

/// Checks what every successful result must satisfy.
func expectWellFormed(_ result: LoadResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(result.succeeded > 0, sourceLocation: sourceLocation)
    #expect(result.errors.isEmpty, "\(result.errors) \(result.errorSamples)", sourceLocation: sourceLocation)
    #expect(result.warmupErrors.isEmpty, "\(result.warmupErrors)", sourceLocation: sourceLocation)
    #expect(result.throughput > 0, sourceLocation: sourceLocation)
    let l = result.latency
    #expect(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999, sourceLocation: sourceLocation)
    #expect(l.p999 <= l.max && l.max > 0, sourceLocation: sourceLocation)
    #expect(result.histogram.totalCount == UInt64(result.succeeded), sourceLocation: sourceLocation)
    #expect(!result.distribution.isEmpty, sourceLocation: sourceLocation)
    // Round trip through JSON.
    let decoded = try LoadResult.decode(result.jsonData())
    #expect(decoded.settings == result.settings, sourceLocation: sourceLocation)
    #expect(decoded.latency == result.latency, sourceLocation: sourceLocation)
    #expect(decoded.distribution == result.distribution, sourceLocation: sourceLocation)
    #expect(decoded.histogram.totalCount == result.histogram.totalCount, sourceLocation: sourceLocation)
    #expect(
        decoded.histogram.valueAtPercentile(99) == result.histogram.valueAtPercentile(99),
        sourceLocation: sourceLocation
    )
}

@Suite("skiff-load against an in-process server")
struct RunTests {
    @Test(
        "echo scenarios, closed and open loop, JSON and compare",
        arguments: ["echo-unary", "echo-stream", "echo-bidi"]
    )
    func echo(_ scenario: String) async throws {
        try await withServer { _, target in
            let closedJSON = temporaryPath("closed.json")
            let openJSON = temporaryPath("open.json")
            defer { for path in [closedJSON, openJSON] { removeTemporaryPath(path) } }
            let closed = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "run", scenario, "--target", target, "--concurrency", "8", "--connections", "2",
                    // A warm-up and a run long enough to hold calls even on a loaded machine.
                    "--duration", "2", "--warmup", "1", "--payload-size", "128", "--messages", "5",
                    "--json", closedJSON,
                ]) as? RunCommand
            )
            let closedResult = try await closed.execute(progress: .silent)
            try expectWellFormed(closedResult)
            #expect(closedResult.settings.mode == "closed")
            #expect(closedResult.warmupCalls > 0)

            let open = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "run", scenario, "--target", target, "--rate", "300", "--duration", "3", "--warmup", "0.2",
                    "--payload-size", "128", "--messages", "5", "--json", openJSON,
                ]) as? RunCommand
            )
            let openResult = try await open.execute(progress: .silent)
            try expectWellFormed(openResult)
            #expect(openResult.settings.rate == 300)
            // At most 300/s × 3 s scheduled in the measured window (a loaded machine completes fewer).
            #expect(openResult.succeeded <= 1_000, "\(openResult.succeeded)")

            // The files decode and compare side by side.
            let fromFile = try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: closedJSON)))
            #expect(fromFile.succeeded == closedResult.succeeded)
            let compare = try #require(
                try SkiffLoadCommand.parseAsRoot(["compare", closedJSON, openJSON]) as? CompareCommand
            )
            let table = try compare.render()
            for label in ["calls/s", "p50", "p99.9", "max", "B/A"] { #expect(table.contains(label), "\(table)") }
            #expect(LoadReport.summary(closedResult).contains("errors      none"))
        }
    }

    @Test("--protocol grpc drives the echo scenario over HTTP/2, calls spread over the connections")
    func grpcProtocol() async throws {
        try await withServer { _, target in
            let command = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "run", "echo-unary", "--target", target, "--protocol", "grpc", "--concurrency", "8",
                    "--connections", "2", "--duration", "1", "--warmup", "0.2",
                ]) as? RunCommand
            )
            try expectWellFormed(try await command.execute(progress: .silent))
            let stream = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "run", "echo-bidi", "--target", target, "--protocol", "connect", "--max-calls", "40",
                    "--warmup", "0", "--messages", "3",
                ]) as? RunCommand
            )
            #expect(try await stream.execute(progress: .silent).succeeded == 40)
            #expect(throws: (any Error).self) {
                try SkiffLoadCommand.parseAsRoot(["run", "echo-unary", "--protocol", "http3"])
            }
        }
    }

    @Test("several --target addresses: calls alternate between the servers, or workers keep to one each")
    func severalTargets() async throws {
        // One server with the conformance service and one without: every call to the second is UNIMPLEMENTED.
        try await withServer { _, target in
            try await withTestApplication { other in
                func run(_ executor: String, bounds: [String]) async throws -> LoadResult {
                    let command = try #require(
                        try SkiffLoadCommand.parseAsRoot(
                            [
                                "echo-unary", "--target", "\(target),127.0.0.1:\(other.port)", "--concurrency", "4",
                                "--connections", "2", "--warmup", "0", "--worker-executor", executor,
                            ] + bounds
                        ) as? RunCommand
                    )
                    return try await command.execute(progress: .silent)
                }
                // Each call on the next connection: every other call.
                let pooled = try await run("pool", bounds: ["--duration", "120", "--max-calls", "40"])
                #expect(pooled.succeeded == 20, "\(pooled.errors)")
                #expect(pooled.errors == ["UNIMPLEMENTED": 20])
                #expect(pooled.settings.workerExecutor == "pool")
                // Each worker on one connection's loop: two workers per server for a second, each server
                // answers calls all along.
                let pinned = try await run("loop", bounds: ["--duration", "1"])
                let refused = pinned.errors["UNIMPLEMENTED"] ?? 0
                #expect(pinned.succeeded > 100 && refused > 100, "\(pinned.succeeded) \(pinned.errors)")
                #expect(pinned.errors.count == 1, "\(pinned.errors)")
                #expect(pinned.settings.workerExecutor == "loop")
            }
        }
        #expect(throws: (any Error).self) {
            try SkiffLoadCommand.parseAsRoot(["echo-unary", "--worker-executor", "threads"])
        }
    }

    @Test("--max-calls bounds the run")
    func maxCalls() async throws {
        try await withServer { _, target in
            let command = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "echo-unary", "--target", target, "--concurrency", "4", "--duration", "120", "--warmup", "0",
                    "--max-calls", "50",
                ]) as? RunCommand
            )
            let result = try await command.execute(progress: .silent)
            // The 50th call ends the run, long before its 120 s duration.
            #expect(result.succeeded == 50)
            #expect(result.measuredSeconds < 120)
        }
    }

    @Test("failed calls are counted by status code, never dropped")
    func failuresCounted() async throws {
        // A server without the conformance service: every echo call is UNIMPLEMENTED.
        try await withTestApplication { test in
            let port = test.port
            let command = try #require(
                try SkiffLoadCommand.parseAsRoot([
                    "echo-unary", "--target", "127.0.0.1:\(port)", "--duration", "0.5", "--warmup", "0",
                ]) as? RunCommand
            )
            let result = try await command.execute(progress: .silent)
            #expect(result.succeeded == 0)
            #expect(result.errors["UNIMPLEMENTED", default: 0] > 0, "\(result.errors)")
            #expect(result.failedIncludingWarmup > 0)
            #expect(LoadReport.summary(result).contains("UNIMPLEMENTED"))

            // The command exits non-zero, unless --allow-errors.
            let args = ["echo-unary", "--target", "127.0.0.1:\(port)", "--duration", "0.2", "--warmup", "0", "--quiet"]
            let failing = try #require(try SkiffLoadCommand.parseAsRoot(args) as? RunCommand)
            await #expect(throws: ExitCode.self) { try await failing.run() }
            let allowed = try #require(try SkiffLoadCommand.parseAsRoot(args + ["--allow-errors"]) as? RunCommand)
            try await allowed.run()
        }
    }
}
