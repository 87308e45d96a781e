public import Metrics
public import SkiffCore
import Synchronization

/// Records the server's metrics through swift-metrics: calls by method and status, call
/// latency, open connections and streams. Only `main` bootstraps a metrics backend.
public final class ServerObserver: CallObserver {
    private let factory: (any MetricsFactory)?
    private let openConnections: Gauge
    private let openStreams: Gauge
    private let connectionCount = Atomic<Int>(0)
    private let streamCount = Atomic<Int>(0)
    private let bufferedBytes = Atomic<Int>(0)
    private let handlerCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)
    private let closedCount = Atomic<Int>(0)
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

    /// Response bytes that handlers have written and that have not yet gone to the sockets, over
    /// every connection (each connection holds at most its response budget plus one message).
    public var bufferedResponseBytes: Int { bufferedBytes.load(ordering: .relaxed) }

    /// Connection handlers alive now (a leak check: it returns to 0 once every connection has
    /// closed).
    public var liveConnectionHandlers: Int { handlerCount.load(ordering: .relaxed) }

    /// Connections refused so far because the server was at its connection limit.
    public var refusedConnections: Int { refusedCount.load(ordering: .relaxed) }

    func responseBytesQueued(_ delta: Int) {
        bufferedBytes.wrappingAdd(delta, ordering: .relaxed)
    }

    func connectionHandlerCreated() { handlerCount.wrappingAdd(1, ordering: .relaxed) }
    func connectionHandlerFreed() { handlerCount.wrappingSubtract(1, ordering: .relaxed) }
    func connectionRefused() { refusedCount.wrappingAdd(1, ordering: .relaxed) }

    func connectionOpened() {
        let n = connectionCount.wrappingAdd(1, ordering: .relaxed).newValue
        openConnections.record(n)
    }

    /// Connections closed since the server started.
    var closedConnections: Int { closedCount.load(ordering: .relaxed) }

    func connectionClosed(openStreams open: Int) {
        closedCount.wrappingAdd(1, ordering: .relaxed)
        let n = connectionCount.wrappingSubtract(1, ordering: .relaxed).newValue
        openConnections.record(n)
        if open > 0 { openStreams.record(streamCount.wrappingSubtract(open, ordering: .relaxed).newValue) }
    }

    public func callOpened() {
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

    public func callFinished(path: String, status: StatusCode, duration: Duration) {
        openStreams.record(streamCount.wrappingSubtract(1, ordering: .relaxed).newValue)
        let (counter, timer) = instruments(path: path, status: status)
        counter.increment()
        timer.recordNanoseconds(duration.nanoseconds)
    }

    /// Counts a call rejected before its handler ran, under the label
    /// ``SkiffCore/CallAdmission/methodLabel(forPath:router:)`` chose: a client cannot add a label per
    /// made-up path.
    public func callRejected(methodLabel: String, status: StatusCode) {
        instruments(path: methodLabel, status: status).0.increment()
    }
}
