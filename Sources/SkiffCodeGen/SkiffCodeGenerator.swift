public import SwiftProtobuf
public import SwiftProtobufPluginLibrary

/// The `protoc` plugin: generates a `<name>.skiff.swift` file for each `.proto` file with services
/// (or, with `Language=C`, a `<path>.skiff.h` of typed C functions).
///
/// Messages are left to `protoc-gen-swift`; the generated code refers to them by the names that
/// generator gives them. See ``GeneratorOptions`` for the options.
public struct SkiffCodeGenerator: CodeGenerator {
    public init() {}

    public func generate(
        files: [FileDescriptor],
        parameter: any CodeGeneratorParameter,
        protoCompilerContext: any ProtoCompilerContext,
        generatorOutputs: any GeneratorOutputs
    ) throws {
        let options = try GeneratorOptions(parameter: parameter)
        for file in files {
            let generated =
                switch options.language {
                case .swift: try FileGenerator(file: file, options: options).generate()
                case .c: try CFileGenerator(file: file).generate()
                }
            if let generated {
                try generatorOutputs.add(fileName: generated.name, contents: generated.contents)
            }
        }
    }

    public var supportedFeatures: [Google_Protobuf_Compiler_CodeGeneratorResponse.Feature] {
        [.proto3Optional, .supportsEditions]
    }

    public var supportedEditionRange: ClosedRange<Google_Protobuf_Edition> {
        DescriptorSet.bundledEditionsSupport
    }

    public var version: String? { "1.0.0" }
}
