public import Foundation
public import SwiftProtobuf

/// A set of `FileDescriptorProto`s indexed by file name and by fully qualified symbol: the
/// schemas reflection serves and the transcoder reads.
///
/// Names are fully qualified without a leading dot, e.g. `skiff.listings.v1.Listing`.
public struct DescriptorRegistry: Sendable {
    /// The registered files by name, e.g. `google/protobuf/timestamp.proto`.
    public private(set) var files: [String: Google_Protobuf_FileDescriptorProto] = [:]
    /// Messages by full name.
    public private(set) var messages: [String: Google_Protobuf_DescriptorProto] = [:]
    /// Enums by full name.
    public private(set) var enums: [String: Google_Protobuf_EnumDescriptorProto] = [:]
    /// Services by full name.
    public private(set) var services: [String: Google_Protobuf_ServiceDescriptorProto] = [:]
    /// The file declaring each symbol (messages, enums, services, methods, fields, oneofs, enum
    /// values, extensions).
    private var fileOfSymbol: [String: String] = [:]
    /// The file declaring each extension, by the full name of the message it extends and its number.
    private var fileOfExtension: [String: [Int32: String]] = [:]

    /// An empty registry.
    public init() {}

    /// A registry of serialized `FileDescriptorProto`s, e.g. generated `fileDescriptors`.
    public init(serializedFiles: [[UInt8]]) throws {
        for bytes in serializedFiles { try add(serialized: bytes) }
    }

    /// A registry of the files of a `FileDescriptorSet` (e.g. from `protoc --descriptor_set_out`).
    public init(set: Google_Protobuf_FileDescriptorSet) {
        for file in set.file { add(file) }
    }

    /// Adds a serialized `FileDescriptorProto`.
    public mutating func add(serialized bytes: [UInt8]) throws {
        add(try Google_Protobuf_FileDescriptorProto(serializedBytes: bytes))
    }

    /// Adds a file; a file already registered under the same name is kept.
    public mutating func add(_ file: Google_Protobuf_FileDescriptorProto) {
        guard files[file.name] == nil else { return }
        files[file.name] = file
        let prefix = file.package.isEmpty ? "" : file.package + "."
        for message in file.messageType { index(message, prefix: prefix, file: file.name) }
        for enumType in file.enumType { index(enumType, prefix: prefix, file: file.name) }
        for field in file.extension { index(extension: field, prefix: prefix, file: file.name) }
        for service in file.service {
            let name = prefix + service.name
            services[name] = service
            fileOfSymbol[name] = file.name
            for method in service.method { fileOfSymbol[name + "." + method.name] = file.name }
        }
    }

    private mutating func index(_ message: Google_Protobuf_DescriptorProto, prefix: String, file: String) {
        let name = prefix + message.name
        messages[name] = message
        fileOfSymbol[name] = file
        for field in message.field { fileOfSymbol[name + "." + field.name] = file }
        for oneof in message.oneofDecl { fileOfSymbol[name + "." + oneof.name] = file }
        for nested in message.nestedType { index(nested, prefix: name + ".", file: file) }
        for nested in message.enumType { index(nested, prefix: name + ".", file: file) }
        for field in message.extension { index(extension: field, prefix: name + ".", file: file) }
    }

    private mutating func index(_ enumType: Google_Protobuf_EnumDescriptorProto, prefix: String, file: String) {
        let name = prefix + enumType.name
        enums[name] = enumType
        fileOfSymbol[name] = file
        // As in protobuf's scoping, enum values are siblings of their enum.
        for value in enumType.value { fileOfSymbol[prefix + value.name] = file }
    }

    private mutating func index(extension field: Google_Protobuf_FieldDescriptorProto, prefix: String, file: String) {
        fileOfSymbol[prefix + field.name] = file
        fileOfExtension[Self.trimmed(field.extendee), default: [:]][field.number] = file
    }

    /// Every service's full name, sorted.
    public var serviceNames: [String] { services.keys.sorted() }

    /// The name of the file declaring `symbol`, if registered.
    public func fileName(containingSymbol symbol: String) -> String? {
        fileOfSymbol[Self.trimmed(symbol)]
    }

    /// The name of the file declaring extension `number` of the message `type` (fully qualified),
    /// if registered.
    public func fileName(containingExtension number: Int32, of type: String) -> String? {
        fileOfExtension[Self.trimmed(type)]?[number]
    }

    /// The numbers of the registered extensions of the message `type` (fully qualified), ascending;
    /// empty when none is registered.
    public func extensionNumbers(of type: String) -> [Int32] {
        (fileOfExtension[Self.trimmed(type)] ?? [:]).keys.sorted()
    }

    /// The named file followed by its transitive dependencies (each once, those registered), each a
    /// serialized `FileDescriptorProto`: what a reflection response carries.
    public func serializedFileWithDependencies(named name: String) throws -> [Data] {
        try fileWithDependencies(named: name).map { try Data($0.serializedBytes() as [UInt8]) }
    }

    /// The named file followed by its transitive dependencies (each once, those registered).
    public func fileWithDependencies(named name: String) -> [Google_Protobuf_FileDescriptorProto] {
        var seen: Set<String> = []
        var result: [Google_Protobuf_FileDescriptorProto] = []
        func visit(_ name: String) {
            guard seen.insert(name).inserted, let file = files[name] else { return }
            result.append(file)
            for dependency in file.dependency { visit(dependency) }
        }
        visit(name)
        return result
    }

    /// A message by full name (a leading dot, as in field type names, is allowed).
    public func message(named name: String) -> Google_Protobuf_DescriptorProto? { messages[Self.trimmed(name)] }

    /// An enum by full name (a leading dot is allowed).
    public func enumType(named name: String) -> Google_Protobuf_EnumDescriptorProto? { enums[Self.trimmed(name)] }

    /// A method by `Service/Method` or `Service.Method`, with its service's full name.
    public func method(_ path: String) -> (service: String, method: Google_Protobuf_MethodDescriptorProto)? {
        let trimmed = Self.trimmed(path)
        let separator = trimmed.lastIndex(of: "/") ?? trimmed.lastIndex(of: ".")
        guard let separator else { return nil }
        let service = String(trimmed[..<separator])
        let method = String(trimmed[trimmed.index(after: separator)...])
        guard let descriptor = services[service]?.method.first(where: { $0.name == method }) else { return nil }
        return (service, descriptor)
    }

    static func trimmed(_ name: String) -> String {
        name.hasPrefix(".") ? String(name.dropFirst()) : name
    }
}
