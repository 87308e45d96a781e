import Foundation
public import Histogram
public import SkiffCore
public import SwiftProtobuf
import Synchronization

/// Latency per RPC method, for scenarios whose one operation makes several calls (the marketplace mix):
/// ``MethodTimingTransport`` records each successful unary call's latency here, once measurement has
/// started, under the method's name ("rpc SearchListings").
public final class MethodTimings: Sendable {
    private struct State {
        var measuring = false
        var histograms: [String: Histogram<UInt64>] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty, not yet measuring, set of timings.
    public init() {}

    /// Starts measuring afresh (at the end of the warm-up).
    public func start() {
        state.withLock { state in
            state.measuring = true
            state.histograms = [:]
        }
    }

    /// Records a call's latency, if measuring.
    func record(_ method: String, micros: UInt64) {
        state.withLock { state in
            guard state.measuring else { return }
            let value = min(max(micros, 1), LoadRecorder.highestTrackableMicros)
            _ = state.histograms[
                "rpc " + method,
                default: Histogram<UInt64>(
                    highestTrackableValue: LoadRecorder.highestTrackableMicros,
                    numberOfSignificantValueDigits: .three
                )
            ].record(value)
        }
    }

    /// The latencies recorded since ``start()``, by "rpc <Method>".
    public var histograms: [String: Histogram<UInt64>] { state.withLock { $0.histograms } }
}

/// A transport that times every successful unary call into ``MethodTimings`` and passes everything on.
public struct MethodTimingTransport: ClientTransport {
    let base: any ClientTransport
    let timings: MethodTimings

    /// Wraps `base`.
    public init(base: any ClientTransport, timings: MethodTimings) {
        self.base = base
        self.timings = timings
    }

    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        let start = ContinuousClock.now
        let response = try await base.unary(method, request: request, options: options, responseType: responseType)
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        timings.record(method.method, micros: UInt64(max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)))
        return response
    }

    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await base.streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            requests: requests,
            body: body
        )
    }
}

/// A scenario that times each RPC of its mix with ``MethodTimings`` (through ``MethodTimingTransport``):
/// measuring starts with the measured window, and the per-method histograms are its measurements.
public protocol MethodTimedScenario: LoadScenario {
    /// The scenario's per-method latencies.
    var timings: MethodTimings { get }
}

extension MethodTimedScenario {
    public func measurementStarted() {
        timings.start()
    }

    public func measurements() -> [String: Histogram<UInt64>] {
        timings.histograms
    }
}
