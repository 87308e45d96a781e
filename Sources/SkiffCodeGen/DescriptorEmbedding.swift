import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// Embeds serialized `FileDescriptorProto`s in generated code, so a server can serve reflection
/// without the `.proto` files.
enum DescriptorEmbedding {
    /// The name of the file-level constant holding a file's descriptors.
    static let constantName = "_skiffFileDescriptors"

    /// `file` followed by its transitive dependencies (depth first, each once).
    static func fileAndDependencies(_ file: FileDescriptor) -> [FileDescriptor] {
        var seen: Set<String> = []
        var result: [FileDescriptor] = []
        func visit(_ file: FileDescriptor) {
            guard seen.insert(file.name).inserted else { return }
            result.append(file)
            for dependency in file.dependencies { visit(dependency) }
        }
        visit(file)
        return result
    }

    /// The serialized descriptor of one file, without source code info.
    static func serialized(_ file: FileDescriptor) throws -> [UInt8] {
        try file.extractProto().serializedBytes()
    }

    /// Writes `fileprivate let _skiffFileDescriptors: [[UInt8]] = [...]` for `file`.
    static func write(for file: FileDescriptor, into writer: inout SourceWriter) throws {
        writer.line(
            "/// Serialized `google.protobuf.FileDescriptorProto`s: \(file.name), then its transitive dependencies."
        )
        try writer.block("fileprivate let \(constantName): [[Swift.UInt8]] =", opening: "[", closing: "]") { writer in
            for dependency in fileAndDependencies(file) {
                let bytes = try serialized(dependency)
                writer.line("// \(dependency.name)")
                writer.line("[")
                var index = 0
                while index < bytes.count {
                    let chunk = bytes[index..<min(index + 24, bytes.count)]
                    writer.line("    " + chunk.map { byte in "0x" + hex(byte) + "," }.joined(separator: " "))
                    index += 24
                }
                writer.line("],")
            }
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
