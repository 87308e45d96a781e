public import SwiftProtobufPluginLibrary

/// The options of `protoc-gen-skiff`, passed as `--skiff_opt=Key=Value,Key=Value`.
///
/// The spelling follows `protoc-gen-swift`, so both generators can be given the same options:
///
/// - `Visibility=Internal|Public|Package` (default `Internal`): access level of the generated code.
/// - `FileNaming=FullPath|PathToUnderscores|DropPath` (default `FullPath`): how output files are named.
/// - `ProtoPathModuleMappings=<path>`: a `swift_protobuf_module_mappings` text file, for message
///   types generated into other modules.
/// - `UseAccessLevelOnImports=true|false`: write `<Visibility> import SkiffCore` (and modules
///   from `ProtoPathModuleMappings`) rather than a plain `import`. The default is `true` for
///   `Public`, which is right whether or not the module enables `InternalImportsByDefault`, and
///   `false` otherwise, since an `internal` or `package` import next to a plain `import` of the same
///   module elsewhere in a Swift 6 module without that feature is an error. `SwiftProtobuf` is
///   always imported plainly: the generated API does not expose it.
/// - `Server=true|false`, `Client=true|false` (default `true`): whether to generate the service
///   protocol and its registration, and the typed client.
/// - `Language=Swift|C` (default `Swift`): `C` generates, for each `.proto` file with services, a
///   `<path>.skiff.h` of typed C client functions over libskiff and protobuf-c's message types
///   (``CFileGenerator``); the other options do not apply to it.
public struct GeneratorOptions {
    /// The language generated.
    public enum Language: String, Sendable {
        case swift
        case c
    }

    /// The access level of generated declarations.
    public enum Visibility: String, Sendable {
        case `internal`
        case `public`
        case `package`

        /// The keyword to put before a declaration, with a trailing space; empty for internal.
        var declarationPrefix: String {
            switch self {
            case .internal: ""
            case .public: "public "
            case .package: "package "
            }
        }
    }

    /// How output file names are derived from the `.proto` path.
    public enum FileNaming: Sendable {
        /// `a/b/c.proto` → `a/b/c.skiff.swift`.
        case fullPath
        /// `a/b/c.proto` → `a_b_c.skiff.swift`.
        case pathToUnderscores
        /// `a/b/c.proto` → `c.skiff.swift`.
        case dropPath
    }

    public var visibility: Visibility = .internal
    public var fileNaming: FileNaming = .fullPath
    /// Whether imports carry the visibility; `nil` means `true` only for `Public`.
    public var useAccessLevelOnImports: Bool? = nil
    public var generateServer = true
    public var generateClient = true
    public var moduleMappings = ProtoFileToModuleMappings()
    public var language: Language = .swift

    /// Default options: internal, full-path file names, server and client.
    public init() {}

    /// Parses a protoc parameter string such as `Visibility=Public,FileNaming=DropPath`.
    public init(parameter: String) throws {
        let pairs: [(key: String, value: String)] = parameter.split(separator: ",").map { part in
            let pieces = part.split(separator: "=", maxSplits: 1)
            let key = pieces[0].trimmingWhitespace()
            let value = pieces.count > 1 ? pieces[1].trimmingWhitespace() : ""
            return (key, value)
        }
        try self.init(pairs: pairs)
    }

    /// Parses the parameter protoc passed to the plugin.
    public init(parameter: any CodeGeneratorParameter) throws {
        try self.init(pairs: parameter.parsedPairs)
    }

    init(pairs: [(key: String, value: String)]) throws {
        func invalid(_ key: String, _ value: String) -> GenerationError {
            GenerationError("protoc-gen-skiff: invalid value '\(value)' for option '\(key)'.")
        }
        func bool(_ key: String, _ value: String) throws -> Bool {
            guard let result = Bool(value.lowercased()) else { throw invalid(key, value) }
            return result
        }
        for (key, value) in pairs where !key.isEmpty {
            switch key {
            case "Visibility":
                guard let visibility = Visibility(rawValue: value.lowercased()) else { throw invalid(key, value) }
                self.visibility = visibility
            case "FileNaming":
                switch value.lowercased() {
                case "fullpath", "full_path": fileNaming = .fullPath
                case "pathtounderscores", "path_to_underscores": fileNaming = .pathToUnderscores
                case "droppath", "drop_path": fileNaming = .dropPath
                default: throw invalid(key, value)
                }
            case "ProtoPathModuleMappings":
                guard !value.isEmpty else { continue }
                do {
                    moduleMappings = try ProtoFileToModuleMappings(path: value)
                } catch {
                    throw GenerationError("protoc-gen-skiff: cannot load ProtoPathModuleMappings '\(value)': \(error)")
                }
            case "UseAccessLevelOnImports":
                useAccessLevelOnImports = try bool(key, value)
            case "Server":
                generateServer = try bool(key, value)
            case "Client":
                generateClient = try bool(key, value)
            case "Language":
                guard let language = Language(rawValue: value.lowercased()) else { throw invalid(key, value) }
                self.language = language
            default:
                throw GenerationError("protoc-gen-skiff: unknown option '\(key)'.")
            }
        }
    }

    /// The name of the file generated for a `.proto` path.
    func outputFileName(forProto protoPath: String) -> String {
        var base = protoPath
        if base.hasSuffix(".proto") { base.removeLast(".proto".count) }
        switch fileNaming {
        case .fullPath:
            break
        case .pathToUnderscores:
            base = String(base.map { $0 == "/" ? "_" : $0 })
        case .dropPath:
            if let slash = base.lastIndex(of: "/") { base = String(base[base.index(after: slash)...]) }
        }
        return base + ".skiff.swift"
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
