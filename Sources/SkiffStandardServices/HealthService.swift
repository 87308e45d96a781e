public import SkiffCore
import SwiftProtobuf
import Synchronization

/// The health service (`skiff.health.v1.Health`), modelled on gRPC's health protocol.
///
/// The empty service name stands for the server as a whole. Statuses change through
/// ``setStatus(_:forService:)``; `Watch` streams every change until the client cancels.
public final class HealthService: Skiff_Health_V1_Health.ServiceProtocol {
    public typealias Status = Skiff_Health_V1_HealthCheckResponse.ServingStatus

    private struct State {
        var statuses: [String: Status] = ["": .serving]
        var watchers: [Int: (service: String, queue: AsyncQueue<Status>)] = [:]
        var nextWatcher = 0
    }
    private let state = Mutex(State())

    /// Creates the service with every named service SERVING, and the server as a whole too.
    public init(services: [String] = []) {
        state.withLock { state in
            for service in services { state.statuses[service] = .serving }
        }
    }

    /// Sets a service's status and tells its watchers.
    public func setStatus(_ status: Status, forService service: String) {
        let queues = state.withLock { state in
            state.statuses[service] = status
            return state.watchers.values.filter { $0.service == service }.map(\.queue)
        }
        for queue in queues { queue.push(status) }
    }

    /// Marks every service NOT_SERVING (on shutdown).
    public func markAllNotServing() {
        let services = state.withLock { Array($0.statuses.keys) }
        for service in services { setStatus(.notServing, forService: service) }
    }

    public func check(
        request: Skiff_Health_V1_HealthCheckRequest,
        context: ServerContext
    ) async throws -> Skiff_Health_V1_HealthCheckResponse {
        guard let status = state.withLock({ $0.statuses[request.service] }) else {
            throw RPCError(code: .notFound, message: "Service \"\(request.service)\" is not known to this server.")
        }
        return .with { $0.status = status }
    }

    public func watch(
        request: Skiff_Health_V1_HealthCheckRequest,
        response: RPCWriter<Skiff_Health_V1_HealthCheckResponse>,
        context: ServerContext
    ) async throws {
        let queue = AsyncQueue<Status>()
        let (id, current) = state.withLock { state in
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = (request.service, queue)
            return (id, state.statuses[request.service] ?? .serviceUnknown)
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }
        // When the connection drains (the server shuts down): NOT_SERVING, then the call ends with UNAVAILABLE.
        let draining = context.drain.onDrain {
            queue.push(.notServing)
            queue.finish(
                throwing: RPCError(
                    code: .unavailable,
                    message: "The server is shutting down: watch again on a new connection."
                )
            )
        }
        defer { context.drain.cancel(draining) }
        var last = current
        try await response.write(.with { $0.status = current })
        while let status = try await queue.next() {
            guard status != last else { continue }
            last = status
            try await response.write(.with { $0.status = status })
        }
    }
}
