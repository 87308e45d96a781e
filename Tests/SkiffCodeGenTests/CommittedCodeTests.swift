import Foundation
import SkiffCodeGen
import SkiffTesting
import SwiftProtobuf
import SwiftProtobufPluginLibrary
import Testing

/// Checks that the generated `*.skiff.swift` files committed under `Sources/` are what the
/// generator produces today from `Protos/`, with the options of `Protos/generate-code.conf`.
///
/// Needs `protoc` on the PATH (or in `PROTOC`) to parse the protos; skipped otherwise.
@Suite("Committed generated code")
struct CommittedCodeTests {
    static let packageRoot = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let protoc: URL? = {
        let environment = ProcessInfo.processInfo.environment
        if let protoc = environment["PROTOC"], !protoc.isEmpty { return URL(filePath: protoc) }
        return (environment["PATH"] ?? "").split(separator: ":")
            .map { URL(filePath: String($0)).appending(path: "protoc") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The lines of `Protos/generate-code.conf`: proto directory, output directory, visibility.
    static func configuration() throws -> [(protoDirectory: String, outputDirectory: String, visibility: String)] {
        let text = try String(contentsOf: packageRoot.appending(path: "Protos/generate-code.conf"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard fields.count >= 3, !fields[0].hasPrefix("#") else { return nil }
            return (fields[0], fields[1], fields[2])
        }
    }

    /// Runs protoc to get the descriptors of the given protos (paths relative to `Protos/`).
    static func descriptors(of protos: [String], protoc: URL) throws -> DescriptorSet {
        let output = FileManager.default.temporaryDirectory.appending(path: "skiff-codegen-\(UUID().uuidString).pb")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = protoc
        process.currentDirectoryURL = packageRoot
        process.arguments =
            [
                "--proto_path=Protos", "--include_imports", "--include_source_info",
                "--descriptor_set_out=\(output.path)",
            ]
            + protos
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "protoc failed on \(protos)")
        let set = try Google_Protobuf_FileDescriptorSet(serializedBytes: try Data(contentsOf: output))
        return DescriptorSet(proto: set)
    }

    @Test(
        "the committed *.skiff.swift files are up to date",
        .enabled(if: protoc != nil, "protoc is not on PATH (apt-get install protobuf-compiler); skipping")
    )
    func committedFilesAreUpToDate() throws {
        let protoc = try #require(Self.protoc)
        let entries = try Self.configuration()
        #expect(entries.contains { $0.protoDirectory == "skiff/testing/v1" })
        var checked = 0
        for entry in entries {
            let directory = Self.packageRoot.appending(path: "Protos").appending(path: entry.protoDirectory)
            let protos = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".proto") }
                .map { "\(entry.protoDirectory)/\($0)" }
            let set = try Self.descriptors(of: protos, protoc: protoc)
            let options = try GeneratorOptions(parameter: "Visibility=\(entry.visibility),FileNaming=PathToUnderscores")
            for proto in protos {
                let file = try #require(set.fileDescriptor(named: proto))
                guard let generated = try FileGenerator(file: file, options: options).generate() else { continue }
                let committed = Self.packageRoot.appending(path: entry.outputDirectory).appending(path: generated.name)
                let contents = try? String(contentsOf: committed, encoding: .utf8)
                #expect(
                    contents == generated.contents,
                    "\(entry.outputDirectory)/\(generated.name) is stale or missing: run dev/generate-code.sh"
                )
                checked += 1
            }
        }
        #expect(checked >= 2)
    }
}
