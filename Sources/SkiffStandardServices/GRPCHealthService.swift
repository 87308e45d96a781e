public import SkiffCore
import SwiftProtobuf

/// The standard gRPC health service (`grpc.health.v1.Health`), answering from a ``HealthService``
/// (the same statuses as `skiff.health.v1`), so that stock tools such as `grpc_health_probe` and
/// Kubernetes' gRPC probes check a Skiff server.
///
/// As the gRPC health protocol says: `Check` of a service the server does not know is NOT_FOUND;
/// `Watch` of one answers SERVICE_UNKNOWN and keeps watching.
public struct GRPCHealthService: Grpc_Health_V1_Health.ServiceProtocol {
    /// Where the statuses live.
    public let health: HealthService

    public init(_ health: HealthService) { self.health = health }

    public func check(
        request: Grpc_Health_V1_HealthCheckRequest,
        context: ServerContext
    ) async throws -> Grpc_Health_V1_HealthCheckResponse {
        let response = try await health.check(request: .with { $0.service = request.service }, context: context)
        return .with { $0.status = Self.status(response.status) }
    }

    public func watch(
        request: Grpc_Health_V1_HealthCheckRequest,
        response: RPCWriter<Grpc_Health_V1_HealthCheckResponse>,
        context: ServerContext
    ) async throws {
        try await health.watch(
            request: .with { $0.service = request.service },
            response: RPCWriter { status in try await response.write(.with { $0.status = Self.status(status.status) })
            },
            context: context
        )
    }

    static func status(
        _ status: Skiff_Health_V1_HealthCheckResponse.ServingStatus
    ) -> Grpc_Health_V1_HealthCheckResponse.ServingStatus {
        switch status {
        case .serving: .serving
        case .notServing: .notServing
        case .serviceUnknown: .serviceUnknown
        case .unknown, .UNRECOGNIZED: .unknown
        }
    }
}
