import Foundation
public import SkiffCore
import Synchronization

/// How a run drives the server; recorded in every result.
public struct LoadSettings: Codable, Sendable, Equatable {
    /// The scenario's name.
    public var scenario: String
    /// `host:port` of the server.
    public var target: String
    /// Calls in flight in closed loop (open loop caps them at ``LoadRunner/openLoopMaxInFlight``).
    public var concurrency: Int
    /// Connections the calls are spread over.
    public var connections: Int
    /// Calls per second in open loop; `nil` for closed loop.
    public var rate: Double?
    /// Seconds measured.
    public var duration: Double
    /// Seconds run before measuring; those calls are counted apart.
    public var warmup: Double
    /// The most calls to start (warm-up included); `nil` for no bound.
    public var maxCalls: Int?
    /// Payload bytes of the echo scenarios.
    public var payloadSize: Int
    /// Messages per call of the streaming echo scenarios.
    public var messagesPerCall: Int
    /// Where closed-loop workers run: `loop` (each on one connection's event loop, calling over that
    /// connection), `pool` (Swift's global executor, each call on the next connection); `nil` in
    /// results recorded before the choice existed (`pool`).
    public var workerExecutor: String?

    /// `closed` or `open`.
    public var mode: String { rate == nil ? "closed" : "open" }

    /// Creates settings.
    public init(
        scenario: String,
        target: String,
        concurrency: Int = 16,
        connections: Int = 1,
        rate: Double? = nil,
        duration: Double = 10,
        warmup: Double = 1,
        maxCalls: Int? = nil,
        payloadSize: Int = 64,
        messagesPerCall: Int = 10,
        workerExecutor: String? = nil
    ) {
        self.scenario = scenario
        self.target = target
        self.concurrency = concurrency
        self.connections = connections
        self.rate = rate
        self.duration = duration
        self.warmup = warmup
        self.maxCalls = maxCalls
        self.payloadSize = payloadSize
        self.messagesPerCall = messagesPerCall
        self.workerExecutor = workerExecutor
    }
}

/// One connection a closed-loop worker may keep to itself: calls go over `transport`, from a task on
/// `executor` (the connection's event loop), so that a call and its answer never wake another thread.
public struct LoadLane: Sendable {
    /// The connection.
    public var transport: any ClientTransport
    /// Where the worker's task runs.
    public var executor: any TaskExecutor

    /// Creates a lane.
    public init(transport: any ClientTransport, executor: any TaskExecutor) {
        self.transport = transport
        self.executor = executor
    }
}

/// Runs a scenario in closed loop (a fixed number of calls in flight) or open loop (calls started
/// at a fixed rate, latency measured from each call's intended start, so that a stalled server
/// shows up in the percentiles instead of silently lowering the send rate — as wrk2 does).
public struct LoadRunner: Sendable {
    /// The most calls in flight in open loop; beyond it the schedule slips (and latency shows it).
    public static let openLoopMaxInFlight = 10_000
    /// How to run.
    public var settings: LoadSettings
    /// Where the once-a-second status line goes.
    public var progress: ProgressOutput

    /// Creates a runner.
    public init(settings: LoadSettings, progress: ProgressOutput = .standardError) {
        self.settings = settings
        self.progress = progress
    }

    /// Runs `scenario` (already prepared) against `transport` and returns the result.
    ///
    /// - Parameter lanes: In closed loop, worker *i* keeps to lane *i mod n* (see ``LoadLane``); empty,
    ///   every worker runs on the global executor and calls through `transport`.
    public func run(
        _ scenario: any LoadScenario,
        transport: any ClientTransport,
        lanes: [LoadLane] = []
    ) async -> LoadResult {
        let recorder = LoadRecorder()
        let clock = ContinuousClock()
        let start = clock.now
        let measureFrom = start + .seconds(settings.warmup)
        let end = measureFrom + .seconds(settings.duration)
        let limit = settings.maxCalls ?? Int.max
        let startedAt = Date()

        await withTaskGroup(of: Void.self) { outer in
            outer.addTask { await self.report(recorder, start: start, measureFrom: measureFrom) }
            outer.addTask {
                try? await Task.sleep(until: measureFrom, clock: clock)
                if !Task.isCancelled { scenario.measurementStarted() }
            }
            if let rate = settings.rate {
                await openLoop(scenario, transport, rate: rate, recorder, start, measureFrom, end, limit)
            } else {
                await closedLoop(scenario, transport, lanes, recorder, measureFrom, end, limit)
            }
            outer.cancelAll()
        }
        let finished = clock.now
        progress.finish()
        // The measured window: `duration`, or less when `--max-calls` ended the run early. Calls
        // still finishing after the window count, but their drain time does not dilute throughput.
        let measured = max(0.001, min(settings.duration, (finished - measureFrom) / .seconds(1)))
        var result = LoadResult(
            settings: settings,
            startedAt: startedAt,
            measuredSeconds: measured,
            recorder: recorder
        )
        let extra = scenario.measurements()
        if !extra.isEmpty { result.scenarioLatencies = extra.mapValues(LoadResult.Percentiles.init) }
        return result
    }

    private func call(
        _ scenario: any LoadScenario,
        _ transport: any ClientTransport,
        _ recorder: LoadRecorder,
        from: ContinuousClock.Instant,
        warmup: Bool
    ) async {
        recorder.inFlight.add(1, ordering: .relaxed)
        var failure: (key: String, message: String)?
        do {
            try await scenario.perform(transport)
        } catch {
            failure = (LoadFailure.key(for: error), "\(error)")
        }
        recorder.inFlight.subtract(1, ordering: .relaxed)
        let elapsed = ContinuousClock.now - from
        let (seconds, attoseconds) = elapsed.components
        let micros = UInt64(max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        recorder.record(micros: micros, failure: failure, warmup: warmup)
    }

    private func closedLoop(
        _ scenario: any LoadScenario,
        _ transport: any ClientTransport,
        _ lanes: [LoadLane],
        _ recorder: LoadRecorder,
        _ measureFrom: ContinuousClock.Instant,
        _ end: ContinuousClock.Instant,
        _ limit: Int
    ) async {
        @Sendable func work(_ transport: any ClientTransport) async {
            while true {
                let t0 = ContinuousClock.now
                guard t0 < end, recorder.started.add(1, ordering: .relaxed).oldValue < limit else { return }
                await call(scenario, transport, recorder, from: t0, warmup: t0 < measureFrom)
            }
        }
        await withDiscardingTaskGroup { group in
            for worker in 0..<max(1, settings.concurrency) {
                if lanes.isEmpty {
                    group.addTask { await work(transport) }
                } else {
                    let lane = lanes[worker % lanes.count]
                    group.addTask(executorPreference: lane.executor) { await work(lane.transport) }
                }
            }
        }
    }

    private func openLoop(
        _ scenario: any LoadScenario,
        _ transport: any ClientTransport,
        rate: Double,
        _ recorder: LoadRecorder,
        _ start: ContinuousClock.Instant,
        _ measureFrom: ContinuousClock.Instant,
        _ end: ContinuousClock.Instant,
        _ limit: Int
    ) async {
        let interval = Duration.seconds(1 / max(rate, 0.001))
        let cap = Self.openLoopMaxInFlight
        await withDiscardingTaskGroup { group in
            var index = 0
            while index < limit {
                let intended = start + interval * index
                guard intended < end else { break }
                if intended > .now { try? await Task.sleep(until: intended, clock: .continuous) }
                // At the cap the schedule slips, but latency still counts from `intended`.
                while recorder.inFlight.load(ordering: .relaxed) >= cap {
                    try? await Task.sleep(for: .microseconds(200))
                }
                let warmup = intended < measureFrom
                group.addTask { await call(scenario, transport, recorder, from: intended, warmup: warmup) }
                index += 1
            }
        }
    }

    private func report(
        _ recorder: LoadRecorder,
        start: ContinuousClock.Instant,
        measureFrom: ContinuousClock.Instant
    ) async {
        var second = 0
        var previous = 0
        while !Task.isCancelled {
            second += 1
            do { try await Task.sleep(until: start + .seconds(second), clock: .continuous) } catch { return }
            let t = recorder.tick()
            let inFlight = recorder.inFlight.load(ordering: .relaxed)
            let p99 = t.intervalCount == 0 ? "-" : LoadReport.formatMicros(t.intervalP99)
            if start + .seconds(second) <= measureFrom {
                progress.update(
                    "[\(second)s warm-up] calls=\(t.warmup) errors=\(t.failed) in-flight=\(inFlight) \(settings.scenario)"
                )
                continue
            }
            let rate = t.succeeded - previous
            previous = t.succeeded
            progress.update(
                "[\(second)s] ok=\(t.succeeded) (+\(rate)/s) errors=\(t.failed) "
                    + "in-flight=\(inFlight) p99(1s)=\(p99) \(settings.scenario)"
            )
        }
    }
}
