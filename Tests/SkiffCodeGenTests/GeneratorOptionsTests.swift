import Foundation
import SkiffCodeGen
import SwiftProtobuf
import SwiftProtobufPluginLibrary
import Testing

@Suite("GeneratorOptions and the protoc plugin entry point")
struct GeneratorOptionsTests {
    @Test("defaults")
    func defaults() throws {
        let options = try GeneratorOptions(parameter: "")
        #expect(options.visibility == .internal)
        #expect(options.generateServer && options.generateClient)
        #expect(options.useAccessLevelOnImports == nil)
    }

    @Test("options are spelled as in protoc-gen-swift")
    func parsing() throws {
        let options = try GeneratorOptions(parameter: "Visibility=public, FileNaming=DropPath,Client=false")
        #expect(options.visibility == .public)
        #expect(options.fileNaming == .dropPath)
        #expect(!options.generateClient)
    }

    @Test(
        "unknown options and bad values are errors",
        arguments: ["Visibility=Open", "Nope=1", "Server=maybe", "FileNaming=x"]
    )
    func invalid(parameter: String) {
        #expect(throws: GenerationError.self) { try GeneratorOptions(parameter: parameter) }
    }

    @Test(
        "FileNaming names the output file",
        arguments: [
            ("FullPath", "skiff/testing/v1/fixture.skiff.swift"),
            ("PathToUnderscores", "skiff_testing_v1_fixture.skiff.swift"),
            ("DropPath", "fixture.skiff.swift"),
        ]
    )
    func fileNaming(option: String, name: String) throws {
        let file = try Fixtures.generate(FileGeneratorTests.allKinds, options: "FileNaming=\(option)")
        #expect(file?.name == name)
    }

    @Test("ProtoPathModuleMappings qualifies and imports message types from other modules")
    func moduleMappings() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "skiff-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "mappings.asciipb")
        try #"mapping { module_name: "CommonAPI" proto_file_path: "common.proto" }"#
            .write(to: path, atomically: true, encoding: .utf8)

        let source = try Fixtures.source(
            #"name: "common.proto" package: "common" syntax: "proto3" message_type { name: "Id" }"#,
            """
            name: "svc.proto" package: "svc" syntax: "proto3" dependency: "common.proto"
            service { name: "S" \(Fixtures.method("Get", input: ".common.Id", output: ".common.Id")) }
            """,
            options: "Visibility=Public,ProtoPathModuleMappings=\(path.path)"
        )
        #expect(source.contains("\npublic import SkiffCore\npublic import CommonAPI\nimport SwiftProtobuf\n"))
        #expect(source.contains("typealias Input = CommonAPI.Common_Id\n"))
    }

    @Test("the plugin answers a CodeGeneratorRequest, supports proto3 optional, and skips protos without services")
    func pluginResponse() throws {
        var request = Google_Protobuf_Compiler_CodeGeneratorRequest()
        request.protoFile = [
            try Google_Protobuf_FileDescriptorProto(textFormatString: FileGeneratorTests.allKinds),
            try Google_Protobuf_FileDescriptorProto(
                textFormatString: #"name: "plain.proto" package: "x" syntax: "proto3" message_type { name: "M" }"#
            ),
        ]
        request.fileToGenerate = ["skiff/testing/v1/fixture.proto", "plain.proto"]
        request.parameter = "Visibility=Public,FileNaming=PathToUnderscores"

        let response = generateCode(request: request, generator: SkiffCodeGenerator())
        #expect(response.error == "")
        let features = Google_Protobuf_Compiler_CodeGeneratorResponse.Feature.self
        #expect(response.supportedFeatures & UInt64(features.proto3Optional.rawValue) != 0)
        #expect(response.file.map(\.name) == ["skiff_testing_v1_fixture.skiff.swift"])
        #expect(response.file.first?.content.contains("public enum Skiff_Testing_V1_TestService {") == true)

        request.parameter = "Visibility=Nope"
        #expect(generateCode(request: request, generator: SkiffCodeGenerator()).error.contains("Visibility"))
    }
}
