import SkiffCodeGen
import SwiftProtobuf
import SwiftProtobufPluginLibrary
import Testing

/// Builds descriptors from `FileDescriptorProto`s written in text format, and runs the generator.
enum Fixtures {
    /// `google/protobuf/empty.proto`, for methods that use `google.protobuf.Empty`.
    static let emptyProto = """
        name: "google/protobuf/empty.proto" package: "google.protobuf" syntax: "proto3"
        message_type { name: "Empty" }
        """

    /// A proto3 file in package `skiff.testing.v1` with one message `Msg` and the given extra text
    /// (services, options, source info).
    static func testingFile(_ extra: String, name: String = "skiff/testing/v1/fixture.proto") -> String {
        """
        name: "\(name)" package: "skiff.testing.v1" syntax: "proto3"
        message_type { name: "Msg" }
        \(extra)
        """
    }

    /// A method of the given name and kind on `Msg`.
    static func method(
        _ name: String,
        clientStreaming: Bool = false,
        serverStreaming: Bool = false,
        input: String = ".skiff.testing.v1.Msg",
        output: String = ".skiff.testing.v1.Msg"
    ) -> String {
        """
        method { name: "\(name)" input_type: "\(input)" output_type: "\(output)" \
        client_streaming: \(clientStreaming) server_streaming: \(serverStreaming) }
        """
    }

    /// The last of the given files, as a descriptor (the others are its dependencies).
    static func file(_ texts: [String]) throws -> FileDescriptor {
        let protos = try texts.map { try Google_Protobuf_FileDescriptorProto(textFormatString: $0) }
        let set = DescriptorSet(protos: protos)
        return try #require(set.fileDescriptor(named: protos.last!.name))
    }

    /// Generates code for the last of the given files.
    static func generate(_ texts: String..., options: String = "") throws -> GeneratedFile? {
        try FileGenerator(file: file(texts), options: GeneratorOptions(parameter: options)).generate()
    }

    /// Generates code for the last of the given files, which must have a service.
    static func source(_ texts: String..., options: String = "") throws -> String {
        let file = try FileGenerator(file: file(texts), options: GeneratorOptions(parameter: options)).generate()
        return try #require(file).contents
    }
}
