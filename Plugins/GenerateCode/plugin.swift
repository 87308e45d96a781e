import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-code`
///
/// Regenerates the Swift code for the protos under `Protos/`, as listed in
/// `Protos/generate-code.conf` (shared with `dev/generate-code.sh`, which CI uses): for each
/// proto-package directory it runs `protoc` with `protoc-gen-swift` (messages) and
/// `protoc-gen-skiff` (services) into the listed output directory. Generated files already in an
/// output directory (`*.pb.swift`, `*.skiff.swift`) are removed first, so files of deleted protos
/// go away too.
@main
struct GenerateCode: CommandPlugin {
    /// Options given to both generators besides `Visibility`.
    static let commonOptions = "FileNaming=PathToUnderscores"
    static let configPath = "Protos/generate-code.conf"

    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let root = context.package.directoryURL
        let protoc = try Self.findProtoc()
        let protocGenSwift = try executable(named: "protoc-gen-swift", context: context)
        let protocGenSkiff = try executable(named: "protoc-gen-skiff", context: context)
        let entries = try Entry.load(from: root.appending(path: Self.configPath))

        var cleared: Set<String> = []
        for entry in entries where cleared.insert(entry.outputDirectory).inserted {
            try Self.removeGeneratedFiles(in: root.appending(path: entry.outputDirectory))
        }

        for entry in entries {
            let protoDirectory = root.appending(path: "Protos").appending(path: entry.protoDirectory)
            let protos = try FileManager.default.contentsOfDirectory(atPath: protoDirectory.path)
                .filter { $0.hasSuffix(".proto") }
                .sorted()
                .map { "Protos/\(entry.protoDirectory)/\($0)" }
            guard !protos.isEmpty else {
                throw PluginError("no .proto files in Protos/\(entry.protoDirectory) (listed in \(Self.configPath)).")
            }
            let options = "Visibility=\(entry.visibility),\(Self.commonOptions)"
            print(
                "Generating \(protos.joined(separator: " ")) -> \(entry.outputDirectory) (Visibility=\(entry.visibility))"
            )
            try Self.run(
                protoc,
                arguments: [
                    "--proto_path=Protos",
                    "--plugin=protoc-gen-swift=\(protocGenSwift.path)",
                    "--swift_out=\(entry.outputDirectory)",
                    "--swift_opt=\(options),UseAccessLevelOnImports=true",
                    "--plugin=protoc-gen-skiff=\(protocGenSkiff.path)",
                    "--skiff_out=\(entry.outputDirectory)",
                    "--skiff_opt=\(options)",
                ] + protos,
                in: root
            )
        }
    }

    /// One line of the table: which protos generate code where.
    struct Entry {
        /// Relative to `Protos/`, e.g. `skiff/testing/v1`.
        var protoDirectory: String
        /// Relative to the package root, e.g. `Sources/SkiffStandardServices/Generated`.
        var outputDirectory: String
        /// `Public`, `Package` or `Internal`.
        var visibility: String

        static func load(from url: URL) throws -> [Entry] {
            let text = try String(contentsOf: url, encoding: .utf8)
            return try text.split(separator: "\n").compactMap { line in
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                guard let first = fields.first, !first.hasPrefix("#") else { return nil }
                guard fields.count >= 3 else {
                    throw PluginError(
                        "\(configPath): expected 'proto-directory output-directory visibility' in '\(line)'."
                    )
                }
                return Entry(protoDirectory: fields[0], outputDirectory: fields[1], visibility: fields[2])
            }
        }
    }

    /// A generator executable: provided to the plugin if it were declared as a dependency,
    /// otherwise built with SwiftPM in the current scratch path.
    private func executable(named name: String, context: PluginContext) throws -> URL {
        if let tool = try? context.tool(named: name) { return tool.url }
        print("Building \(name)...")
        let result = try packageManager.build(
            .product(name),
            parameters: .init(configuration: .debug, logging: .concise)
        )
        guard result.succeeded else {
            print(result.logText)
            throw PluginError("building \(name) failed.")
        }
        guard
            let artifact = result.builtArtifacts.first(where: {
                $0.kind == .executable && $0.url.lastPathComponent == name
            })
        else {
            throw PluginError("building \(name) produced no executable.")
        }
        return artifact.url
    }

    /// `protoc` from `PROTOC` or the `PATH`.
    private static func findProtoc() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let protoc = environment["PROTOC"], !protoc.isEmpty { return URL(filePath: protoc) }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(filePath: String(directory)).appending(path: "protoc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw PluginError("protoc not found on PATH; install it (apt-get install protobuf-compiler) or set PROTOC.")
    }

    private static func removeGeneratedFiles(in directory: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: directory.path)
        where name.hasSuffix(".pb.swift") || name.hasSuffix(".skiff.swift") {
            try manager.removeItem(at: directory.appending(path: name))
        }
    }

    private static func run(_ executable: URL, arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw PluginError("\(executable.lastPathComponent) failed with status \(process.terminationStatus).")
        }
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
