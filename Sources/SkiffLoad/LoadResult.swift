public import Foundation
public import Histogram

/// The full result of a run, as written by `--json` and read by `skiff-load compare`.
public struct LoadResult: Codable, Sendable {
    /// The result format's version.
    public var version = 1
    /// How the run was made.
    public var settings: LoadSettings
    /// When the run started.
    public var startedAt: Date
    /// Seconds of the measured window: `duration`, or less when `--max-calls` ended the run early.
    public var measuredSeconds: Double
    /// Successful measured calls.
    public var succeeded: Int
    /// Failed measured calls, by status code name (or `TRANSPORT(<type>)`).
    public var errors: [String: Int]
    /// Calls made during the warm-up.
    public var warmupCalls: Int
    /// Failed warm-up calls, by status code name.
    public var warmupErrors: [String: Int]
    /// The first message seen for each kind of failure.
    public var errorSamples: [String: String]
    /// Successful measured calls per second.
    public var throughput: Double
    /// Latency percentiles in microseconds.
    public var latency: Percentiles
    /// The latency distribution: value (µs) at each percentile tick, with cumulative counts.
    public var distribution: [Bucket]
    /// The complete HdrHistogram of successful measured calls (microseconds).
    public var histogram: Histogram<UInt64>
    /// Latencies the scenario measured itself (e.g. `chat-fanout`'s delivery), by name; absent
    /// for scenarios that measure nothing beyond the call.
    public var scenarioLatencies: [String: Percentiles]?

    /// Latency percentiles of successful measured calls, in microseconds.
    public struct Percentiles: Codable, Sendable, Equatable {
        /// The fastest call.
        public var min: UInt64
        /// The mean.
        public var mean: Double
        /// The median.
        public var p50: UInt64
        /// The 90th percentile.
        public var p90: UInt64
        /// The 99th percentile.
        public var p99: UInt64
        /// The 99.9th percentile.
        public var p999: UInt64
        /// The slowest call.
        public var max: UInt64

        /// The percentiles of a histogram of microseconds (all zero when it is empty).
        public init(_ histogram: Histogram<UInt64>) {
            let empty = histogram.totalCount == 0
            self.min = empty ? 0 : histogram.min
            self.mean = empty ? 0 : histogram.mean
            self.p50 = histogram.valueAtPercentile(50)
            self.p90 = histogram.valueAtPercentile(90)
            self.p99 = histogram.valueAtPercentile(99)
            self.p999 = histogram.valueAtPercentile(99.9)
            self.max = empty ? 0 : histogram.max
        }
    }

    /// One step of the percentile distribution.
    public struct Bucket: Codable, Sendable, Equatable {
        /// The percentile, 0–100.
        public var percentile: Double
        /// The latency at that percentile, in microseconds.
        public var micros: UInt64
        /// Calls at or below that latency.
        public var totalCount: UInt64
    }

    /// Failed measured calls.
    public var failed: Int { errors.values.reduce(0, +) }
    /// Failed calls including the warm-up.
    public var failedIncludingWarmup: Int { failed + warmupErrors.values.reduce(0, +) }

    init(settings: LoadSettings, startedAt: Date, measuredSeconds: Double, recorder: LoadRecorder) {
        let histogram = recorder.histogram
        self.settings = settings
        self.startedAt = startedAt
        self.measuredSeconds = measuredSeconds
        self.succeeded = recorder.succeeded
        self.errors = recorder.errors
        self.warmupCalls = recorder.warmupCalls
        self.warmupErrors = recorder.warmupErrors
        self.errorSamples = recorder.firstErrors
        self.throughput = Double(recorder.succeeded) / measuredSeconds
        self.histogram = histogram
        let empty = histogram.totalCount == 0
        self.latency = Percentiles(histogram)
        self.distribution =
            empty
            ? []
            : histogram.percentiles(ticksPerHalfDistance: 5).map {
                Bucket(percentile: $0.percentileLevelIteratedTo, micros: $0.value, totalCount: $0.totalCountToThisValue)
            }
    }

    /// Encodes the result as pretty-printed JSON.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    /// Decodes a result written by ``jsonData()``.
    public static func decode(_ data: Data) throws -> LoadResult {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(LoadResult.self, from: data)
    }
}

/// Text renderings of results.
public enum LoadReport {
    /// `850µs`, `12.3ms` or `1.20s`.
    public static func formatMicros(_ micros: UInt64) -> String {
        switch micros {
        case ..<1_000: "\(micros)µs"
        case ..<1_000_000: String(format: "%.2fms", Double(micros) / 1_000)
        default: String(format: "%.2fs", Double(micros) / 1_000_000)
        }
    }

    /// The human-readable summary of one run.
    public static func summary(_ r: LoadResult) -> String {
        let s = r.settings
        var lines: [String] = []
        let loop =
            s.rate.map { String(format: "open loop at %.0f calls/s", $0) } ?? "closed loop, \(s.concurrency) in flight"
        lines.append("\(s.scenario) → \(s.target): \(loop) over \(s.connections) connection(s)")
        lines.append(
            String(
                format: "  measured %.2fs after %.1fs warm-up (%d warm-up calls)",
                r.measuredSeconds,
                s.warmup,
                r.warmupCalls
            )
        )
        lines.append(
            String(format: "  throughput  %.1f calls/s  (%d ok, %d failed)", r.throughput, r.succeeded, r.failed)
        )
        func percentiles(_ l: LoadResult.Percentiles) -> String {
            "p50 \(formatMicros(l.p50))  p90 \(formatMicros(l.p90))  p99 \(formatMicros(l.p99))  "
                + "p99.9 \(formatMicros(l.p999))  max \(formatMicros(l.max))"
        }
        lines.append("  latency     " + percentiles(r.latency))
        if s.rate != nil { lines.append("              (open loop: measured from each call's intended start)") }
        for (name, latency) in (r.scenarioLatencies ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name)")
            lines.append("              " + percentiles(latency))
        }
        let allErrors = r.errors.merging(r.warmupErrors.mapKeys { "\($0) (warm-up)" }) { $0 + $1 }
        if allErrors.isEmpty {
            lines.append("  errors      none")
        } else {
            lines.append("  errors")
            for (key, count) in allErrors.sorted(by: { $0.value > $1.value }) {
                let base = key.replacingOccurrences(of: " (warm-up)", with: "")
                lines.append("    \(key): \(count)   e.g. \(r.errorSamples[base] ?? "")")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Two results side by side, with B/A ratios.
    public static func compare(_ a: LoadResult, _ b: LoadResult, nameA: String = "A", nameB: String = "B") -> String {
        func row(_ label: String, _ x: Double, _ y: Double, _ format: (Double) -> String) -> String {
            let ratio = x == 0 ? (y == 0 ? "1.00x" : "inf") : String(format: "%.2fx", y / x)
            return label.padding(toLength: 12, withPad: " ", startingAt: 0)
                + format(x).leftPad(14) + format(y).leftPad(14) + ratio.leftPad(10)
        }
        let micros: (Double) -> String = { formatMicros(UInt64($0)) }
        let count: (Double) -> String = { String(format: "%.0f", $0) }
        var lines = [
            "A: \(nameA)  [\(a.settings.scenario), \(a.settings.mode) loop, c=\(a.settings.concurrency), conns=\(a.settings.connections)]",
            "B: \(nameB)  [\(b.settings.scenario), \(b.settings.mode) loop, c=\(b.settings.concurrency), conns=\(b.settings.connections)]",
            "".padding(toLength: 12, withPad: " ", startingAt: 0) + "A".leftPad(14) + "B".leftPad(14)
                + "B/A".leftPad(10),
            row("calls/s", a.throughput, b.throughput) { String(format: "%.1f", $0) },
            row("ok", Double(a.succeeded), Double(b.succeeded), count),
            row("failed", Double(a.failed), Double(b.failed), count),
        ]
        let pairs: [(String, KeyPath<LoadResult.Percentiles, UInt64>)] = [
            ("p50", \.p50), ("p90", \.p90), ("p99", \.p99), ("p99.9", \.p999), ("max", \.max),
        ]
        for (label, path) in pairs {
            lines.append(row(label, Double(a.latency[keyPath: path]), Double(b.latency[keyPath: path]), micros))
        }
        if a.settings.scenario != b.settings.scenario { lines.append("warning: different scenarios") }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}

extension Dictionary {
    fileprivate func mapKeys<K: Hashable>(_ transform: (Key) -> K) -> [K: Value] {
        [K: Value](uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
