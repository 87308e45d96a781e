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
        var registry = DescriptorRegistry()
        for bytes in fileDescriptors + Skiff_Reflection_V1_Reflection.fileDescriptors {
            try? registry.add(serialized: bytes)
        }
        let router = RPCRouter(services: services)
        var names = Set(router.services.map(\.name))
        names.insert(Skiff_Reflection_V1_Reflection.name)
        self.registry = registry
        self.serviceNames = names.sorted()
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
        let files = try registry.fileWithDependencies(named: name).map { try Data($0.serializedBytes() as [UInt8]) }
        return .with { $0.fileDescriptorProtos = files }
    }
}
