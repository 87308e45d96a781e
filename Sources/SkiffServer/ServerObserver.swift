import Metrics
import SkiffCore
import Synchronization

/// Records the server's metrics through swift-metrics: calls by method and status, call
/// latency, open connections and streams. Only `main` bootstraps a metrics backend.
public final class ServerObserver: Sendable {
    private let factory: (any MetricsFactory)?
    private let openConnections: Gauge
    private let openStreams: Gauge
    private let connectionCount = Atomic<Int>(0)
    private let streamCount = Atomic<Int>(0)
    private let cache = Mutex<[InstrumentKey: (Counter, Metrics.Timer)]>([:])

    /// A method and a status: the key of one counter and timer pair (no string built per call).
    private struct InstrumentKey: Hashable {
        var path: String
        var status: UInt32
    }

    /// Creates an observer that reports to `factory`, or to the bootstrapped system when `nil`.
    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
        if let factory {
            openConnections = Gauge(label: "skiff_server_open_connections", factory: factory)
            openStreams = Gauge(label: "skiff_server_open_streams", factory: factory)
        } else {
            openConnections = Gauge(label: "skiff_server_open_connections")
            openStreams = Gauge(label: "skiff_server_open_streams")
        }
    }

    /// The connections open now.
    public var connections: Int { connectionCount.load(ordering: .relaxed) }

    /// The calls open now (from their HEADERS until their handler has finished).
    public var streams: Int { streamCount.load(ordering: .relaxed) }

    func connectionOpened() {
        let n = connectionCount.wrappingAdd(1, ordering: .relaxed).newValue
        openConnections.record(n)
    }

    func connectionClosed(openStreams open: Int) {
        let n = connectionCount.wrappingSubtract(1, ordering: .relaxed).newValue
        openConnections.record(n)
        if open > 0 { openStreams.record(streamCount.wrappingSubtract(open, ordering: .relaxed).newValue) }
    }

    func streamOpened() {
        openStreams.record(streamCount.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    private func instruments(path: String, status: StatusCode) -> (Counter, Metrics.Timer) {
        let key = InstrumentKey(path: path, status: status.rawValue)
        if let found = cache.withLock({ $0[key] }) { return found }
        let dimensions = [("method", path), ("status", status.name)]
        let made: (Counter, Metrics.Timer)
        if let factory {
            made = (
                Counter(label: "skiff_server_calls_total", dimensions: dimensions, factory: factory),
                Metrics.Timer(label: "skiff_server_call_duration", dimensions: [("method", path)], factory: factory)
            )
        } else {
            made = (
                Counter(label: "skiff_server_calls_total", dimensions: dimensions),
                Metrics.Timer(label: "skiff_server_call_duration", dimensions: [("method", path)])
            )
        }
        cache.withLock { $0[key] = made }
        return made
    }

    func callFinished(path: String, status: StatusCode, duration: Duration) {
        openStreams.record(streamCount.wrappingSubtract(1, ordering: .relaxed).newValue)
        let (counter, timer) = instruments(path: path, status: status)
        counter.increment()
        timer.recordNanoseconds(duration.nanoseconds)
    }

    func callRejected(path: String, status: StatusCode) {
        // Unknown paths share one label so a client cannot blow up the metric's cardinality.
        let label = status == .unimplemented ? "unknown" : path
        instruments(path: label, status: status).0.increment()
    }
}
