import Foundation
public import SkiffCore
import SwiftProtobuf

/// The `skiff.reflection.v1.Reflection` service: lists the server's services and serves the
/// `FileDescriptorProto`s describing them, so generic clients need no local `.proto` files.
///
/// Register it with the other services, giving it their generated `fileDescriptors`:
///
/// ```swift
/// services.append(ReflectionService(
///     services: services,
///     fileDescriptors: Skiff_Listings_V1_Listings.fileDescriptors + Skiff_Health_V1_Health.fileDescriptors
/// ))
/// ```
///
/// To serve the standard gRPC reflection services too (what grpcurl and Postman call), register
/// ``withGRPCReflection(services:fileDescriptors:)`` instead.
public struct ReflectionService: Skiff_Reflection_V1_Reflection.ServiceProtocol {
    /// The schemas served (including the reflection service's own).
    public let registry: DescriptorRegistry
    /// The service names ListServices returns, sorted.
    public let serviceNames: [String]

    /// Creates the service.
    /// - Parameters:
    ///   - services: the services the server exposes; their names are listed (with Reflection's own).
    ///   - fileDescriptors: serialized `FileDescriptorProto`s of their files and dependencies
    ///     (duplicates are ignored); malformed entries are skipped.
    public init(services: [any RegistrableService], fileDescriptors: [[UInt8]]) {
        self.init(services: services, fileDescriptors: fileDescriptors, reflection: [Self.skiffReflection])
    }

    /// Creates the service over a registry and a list of service names as they are, e.g. those of
    /// another ``ReflectionService``.
    /// - Parameters:
    ///   - registry: the schemas served.
    ///   - serviceNames: the names ListServices returns (sorted here).
    public init(registry: DescriptorRegistry, serviceNames: [String]) {
        self.registry = registry
        self.serviceNames = serviceNames.sorted()
    }

    /// A reflection service's name and the descriptors of its file, which it serves too.
    typealias Own = (name: String, fileDescriptors: [[UInt8]])

    static let skiffReflection: Own = (
        Skiff_Reflection_V1_Reflection.name, Skiff_Reflection_V1_Reflection.fileDescriptors
    )

    init(services: [any RegistrableService], fileDescriptors: [[UInt8]], reflection: [Own]) {
        var registry = DescriptorRegistry()
        for bytes in fileDescriptors + reflection.flatMap(\.fileDescriptors) {
            try? registry.add(serialized: bytes)
        }
        let router = RPCRouter(services: services)
        var names = Set(router.services.map(\.name))
        names.formUnion(reflection.map(\.name))
        self.init(registry: registry, serviceNames: Array(names))
    }

    /// `skiff.reflection.v1.Reflection` with the standard gRPC reflection services beside it,
    /// ``GRPCReflectionService`` (`grpc.reflection.v1`) and ``GRPCReflectionV1AlphaService``
    /// (`grpc.reflection.v1alpha`): all three list the same services, each other included, and
    /// serve the same descriptors, their own files included.
    ///
    /// ```swift
    /// services += ReflectionService.withGRPCReflection(
    ///     services: services,
    ///     fileDescriptors: Skiff_Listings_V1_Listings.fileDescriptors + Grpc_Health_V1_Health.fileDescriptors
    /// )
    /// ```
    /// - Parameters:
    ///   - services: the services the server exposes; their names are listed (with the three's own).
    ///   - fileDescriptors: serialized `FileDescriptorProto`s of their files and dependencies
    ///     (duplicates are ignored); malformed entries are skipped.
    /// - Returns: the three services, `skiff.reflection.v1` first, to register with the others.
    public static func withGRPCReflection(
        services: [any RegistrableService],
        fileDescriptors: [[UInt8]]
    ) -> [any RegistrableService] {
        let reflection = ReflectionService(
            services: services,
            fileDescriptors: fileDescriptors,
            reflection: [
                skiffReflection,
                (Grpc_Reflection_V1_ServerReflection.name, Grpc_Reflection_V1_ServerReflection.fileDescriptors),
                (
                    Grpc_Reflection_V1alpha_ServerReflection.name,
                    Grpc_Reflection_V1alpha_ServerReflection.fileDescriptors
                ),
            ]
        )
        return [reflection, GRPCReflectionService(reflection), GRPCReflectionV1AlphaService(reflection)]
    }

    public func listServices(
        request: Skiff_Reflection_V1_ListServicesRequest,
        context: ServerContext
    ) async throws -> Skiff_Reflection_V1_ListServicesResponse {
        .with { $0.services = serviceNames }
    }

    public func fileContainingSymbol(
        request: Skiff_Reflection_V1_FileContainingSymbolRequest,
        context: ServerContext
    ) async throws -> Skiff_Reflection_V1_FileDescriptorsResponse {
        guard let file = registry.fileName(containingSymbol: request.symbol) else {
            throw RPCError(code: .notFound, message: "No file declares the symbol '\(request.symbol)'.")
        }
        return try response(forFile: file)
    }

    public func fileByName(
        request: Skiff_Reflection_V1_FileByNameRequest,
        context: ServerContext
    ) async throws -> Skiff_Reflection_V1_FileDescriptorsResponse {
        guard registry.files[request.filename] != nil else {
            throw RPCError(code: .notFound, message: "No file named '\(request.filename)'.")
        }
        return try response(forFile: request.filename)
    }

    private func response(forFile name: String) throws -> Skiff_Reflection_V1_FileDescriptorsResponse {
        let files = try registry.serializedFileWithDependencies(named: name)
        return .with { $0.fileDescriptorProtos = files }
    }
}
