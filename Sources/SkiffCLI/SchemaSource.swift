import Foundation
import SkiffCore
import SkiffReflection
import SwiftProtobuf

/// Loads the schemas `skiff` needs: from the server's reflection service, or from local protos.
enum SchemaSource {
    /// Every service name and a registry describing them (all of them, or only `onlyService`).
    static func load(
        options: ConnectionOptions,
        transport: any ClientTransport,
        onlyService: String? = nil
    ) async throws -> (services: [String], registry: DescriptorRegistry) {
        if let directory = options.protoDirectory {
            let registry = try compile(directory: directory)
            return (registry.serviceNames, registry)
        }
        let client = Skiff_Reflection_V1_Reflection.Client(transport: transport)
        let metadata = try options.metadata(io: CommandIO.current)
        let services = try await client.listServices(.init(), metadata: metadata).services
        var registry = DescriptorRegistry()
        for service in services where onlyService == nil || service == onlyService {
            let response = try await client.fileContainingSymbol(.with { $0.symbol = service }, metadata: metadata)
            for file in response.fileDescriptorProtos { try registry.add(serialized: Array(file)) }
        }
        if let onlyService, !services.contains(onlyService) {
            throw CLIError(
                .notFound,
                "The server has no service '\(onlyService)' (services: \(services.joined(separator: ", ")))."
            )
        }
        return (services, registry)
    }

    /// Runs `protoc --include_imports --descriptor_set_out` over the `.proto` files under `directory`.
    static func compile(directory: String) throws -> DescriptorRegistry {
        let root = URL(fileURLWithPath: directory)
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            throw CLIError(.invalidArgument, "Cannot read the directory \(directory).")
        }
        let rootPath = root.standardizedFileURL.path
        var protos: [String] = []
        for case let url as URL in enumerator where url.pathExtension == "proto" {
            let path = url.standardizedFileURL.path
            protos.append(path.hasPrefix(rootPath + "/") ? String(path.dropFirst(rootPath.count + 1)) : path)
        }
        guard !protos.isEmpty else { throw CLIError(.invalidArgument, "No .proto files under \(directory).") }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("skiff-\(UUID().uuidString).pb")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        let protoc = ProcessInfo.processInfo.environment["PROTOC"] ?? "protoc"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [protoc, "--proto_path=\(rootPath)", "--include_imports", "--descriptor_set_out=\(output.path)"]
            + protos.sorted()
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch { throw CLIError(.unavailable, "Could not run protoc: \(error)") }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError(.invalidArgument, "protoc failed: \(String(decoding: message, as: UTF8.self))")
        }
        let set = try Google_Protobuf_FileDescriptorSet(serializedBytes: try Data(contentsOf: output))
        return DescriptorRegistry(set: set)
    }

    /// Splits `Service/Method` (or `Service.Method`) into its parts.
    static func splitMethod(_ path: String) throws -> (service: String, method: String) {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard let separator = trimmed.lastIndex(of: "/") ?? trimmed.lastIndex(of: "."), separator > trimmed.startIndex
        else { throw CLIError(.invalidArgument, "Expected Service/Method, got '\(path)'.") }
        return (String(trimmed[..<separator]), String(trimmed[trimmed.index(after: separator)...]))
    }
}
