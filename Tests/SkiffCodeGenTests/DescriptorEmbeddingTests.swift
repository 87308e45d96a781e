import Foundation
import SkiffCodeGen
import SwiftProtobuf
import SwiftProtobufPluginLibrary
import Testing

@Suite("Embedded file descriptors")
struct DescriptorEmbeddingTests {
    static let withDependency = Fixtures.testingFile(
        """
        dependency: "google/protobuf/empty.proto"
        service { name: "Svc" \(Fixtures.method("Ping", input: ".google.protobuf.Empty")) }
        """
    )

    /// The byte arrays of `_skiffFileDescriptors` in generated source, in order.
    static func embedded(in source: String) throws -> [[UInt8]] {
        let start = try #require(source.range(of: "fileprivate let _skiffFileDescriptors: [[Swift.UInt8]] = [\n"))
        var arrays: [[UInt8]] = []
        var current: [UInt8]? = nil
        for line in source[start.upperBound...].split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "[" {
                current = []
            } else if trimmed == "]," {
                arrays.append(current ?? [])
                current = nil
            } else if current != nil {
                current! += trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }.map { UInt8($0.dropFirst(2), radix: 16)! }
            }
        }
        return arrays
    }

    @Test("the namespace exposes the file's descriptor and its dependencies'")
    func accessors() throws {
        let source = try Fixtures.source(Fixtures.emptyProto, Self.withDependency)
        #expect(source.contains("    static var fileDescriptor: [Swift.UInt8] { _skiffFileDescriptors[0] }\n"))
        #expect(source.contains("    static var fileDescriptors: [[Swift.UInt8]] { _skiffFileDescriptors }\n"))
        #expect(source.contains("    // google/protobuf/empty.proto\n"))
    }

    @Test("the embedded bytes are the file's FileDescriptorProto, then its dependency's")
    func bytes() throws {
        let source = try Fixtures.source(Fixtures.emptyProto, Self.withDependency)
        let files = try Self.embedded(in: source).map { try Google_Protobuf_FileDescriptorProto(serializedBytes: $0) }
        #expect(files.map(\.name) == ["skiff/testing/v1/fixture.proto", "google/protobuf/empty.proto"])
        #expect(files[0] == (try Google_Protobuf_FileDescriptorProto(textFormatString: Self.withDependency)))
        #expect(files[1].messageType.map(\.name) == ["Empty"])
    }
}
