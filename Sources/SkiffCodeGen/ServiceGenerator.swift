import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// Writes the Skiff code for one service: its namespace of descriptors, the service protocol
/// with its registration, and the typed client.
struct ServiceGenerator {
    /// What the generated code needs to know about one method.
    struct Method {
        enum Kind: String {
            case unary, clientStreaming, serverStreaming, bidirectionalStreaming
        }

        /// The proto name, e.g. `UnaryCall`: the wire name and the name of its nested enum.
        let protoName: String
        /// The nested enum's name, e.g. `UnaryCall` (escaped when needed).
        let enumName: String
        /// The Swift function name, e.g. `unaryCall` (escaped when needed).
        let functionName: String
        let kind: Kind
        /// The `idempotency_level` option as a ``SkiffCore/MethodDescriptor/Idempotency`` case,
        /// `nil` when not declared.
        let idempotency: String?
        /// Fully qualified Swift names of the request and response messages.
        let input: String
        let output: String
        let comments: [String]
    }

    let service: ServiceDescriptor
    let namer: SwiftProtobufNamer
    let options: GeneratorOptions
    /// The Swift name of the namespace enum, e.g. `Skiff_Testing_V1_TestService`.
    let namespace: String
    let methods: [Method]

    init(service: ServiceDescriptor, namer: SwiftProtobufNamer, options: GeneratorOptions) throws {
        self.service = service
        self.namer = namer
        self.options = options

        var namespace = namer.typePrefix(forFile: service.file) + service.name
        if Naming.reservedTypeNames.contains(namespace) { namespace += "Service" }
        self.namespace = namespace

        self.methods = service.methods.map { method in
            let kind: Method.Kind =
                switch (method.clientStreaming, method.serverStreaming) {
                case (false, false): .unary
                case (true, false): .clientStreaming
                case (false, true): .serverStreaming
                case (true, true): .bidirectionalStreaming
                }
            return Method(
                protoName: method.name,
                enumName: Naming.nestedTypeName(method.name),
                functionName: Naming.escaped(Naming.lowerCamelCase(method.name)),
                kind: kind,
                idempotency: Self.idempotency(method.options.idempotencyLevel),
                input: namer.fullName(message: method.inputType),
                output: namer.fullName(message: method.outputType),
                comments: Self.docComment(method.sourceCodeInfoLocation)
            )
        }
        try checkNames()
    }

    static func idempotency(_ level: Google_Protobuf_MethodOptions.IdempotencyLevel) -> String? {
        switch level {
        case .noSideEffects: "noSideEffects"
        case .idempotent: "idempotent"
        default: nil
        }
    }

    /// Fails when a message type's Swift name would be shadowed by a name the generated code
    /// nests in the service's namespace (possible only for protos without a package), or when two
    /// methods get the same Swift name.
    private func checkNames() throws {
        var functionNames: [String: String] = [:]
        for method in methods {
            if let other = functionNames.updateValue(method.protoName, forKey: method.functionName) {
                throw GenerationError(
                    "\(service.file.name): methods '\(other)' and '\(method.protoName)' of service "
                        + "'\(service.fullName)' both map to the Swift name '\(method.functionName)'."
                )
            }
        }
        // Where message types are named, these generated names are in scope and would win.
        var nested = ["Method": "Method", "Client": "Client", "ServiceProtocol": "ServiceProtocol"]
        nested["Result"] = "Client.<Result>"
        for name in ["Input", "Output"] + methods.map(\.enumName) { nested[name] = "Method.\(name)" }
        for method in methods {
            for type in [method.input, method.output] {
                let head = String(type.prefix { $0 != "." })
                if let shadow = nested[head] {
                    throw GenerationError(
                        "\(service.file.name): message type '\(type)' used by '\(service.fullName)."
                            + "\(method.protoName)' would be shadowed by the generated '\(namespace).\(shadow)'. "
                            + "Give the file a package or an 'option swift_prefix'."
                    )
                }
            }
        }
    }

    /// The `///` lines for an element's leading comment, if it has one.
    static func docComment(_ location: Google_Protobuf_SourceCodeInfo.Location?) -> [String] {
        guard let location, location.hasLeadingComments else { return [] }
        var lines = location.leadingComments
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.hasSuffix("\r") ? String(line.dropLast()) : String(line) }
        while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
        return lines.map { $0.isEmpty ? "///" : "///" + $0 }
    }

    var v: String { options.visibility.declarationPrefix }
    var serviceComments: [String] { Self.docComment(service.sourceCodeInfoLocation) }

    func comment(_ lines: [String], into writer: inout SourceWriter) {
        for line in lines { writer.line(line) }
    }

    // MARK: - Namespace

    func write(into writer: inout SourceWriter) {
        comment(serviceComments, into: &writer)
        writer.block("\(v)enum \(namespace)") { writer in
            writer.line("/// The fully qualified service name.")
            writer.line("\(v)static let name = \(Naming.stringLiteral(service.fullName))")
            writer.line()
            writeMethods(into: &writer)
            writer.line()
            writer.line("/// The service's name and methods.")
            writer.line(
                "\(v)static let descriptor = SkiffCore.ServiceDescriptor(name: name, methods: Method.descriptors)"
            )
            writer.line()
            writer.line(
                "/// The serialized `google.protobuf.FileDescriptorProto` of \(service.file.name), which declares the service."
            )
            writer.line("\(v)static var fileDescriptor: [Swift.UInt8] { \(DescriptorEmbedding.constantName)[0] }")
            writer.line()
            writer.line(
                "/// The serialized `FileDescriptorProto`s of \(service.file.name) and of its transitive dependencies,"
            )
            writer.line("/// the file's own first: what a reflection service needs to describe the service.")
            writer.line("\(v)static var fileDescriptors: [[Swift.UInt8]] { \(DescriptorEmbedding.constantName) }")
            if options.generateServer {
                writer.line()
                writeServiceProtocol(into: &writer)
            }
            if options.generateClient {
                writer.line()
                writeClient(into: &writer)
            }
        }
        if options.generateServer {
            writer.line()
            writeRegistration(into: &writer)
        }
    }

    private func writeMethods(into writer: inout SourceWriter) {
        writer.line("/// The service's methods: their descriptors and message types.")
        writer.block("\(v)enum Method") { writer in
            for method in methods {
                writer.block("\(v)enum \(method.enumName)") { writer in
                    writer.line("\(v)typealias Input = \(method.input)")
                    writer.line("\(v)typealias Output = \(method.output)")
                    writer.line(
                        "\(v)static let descriptor = SkiffCore.MethodDescriptor("
                            + "service: \(Naming.stringLiteral(service.fullName)), "
                            + "method: \(Naming.stringLiteral(method.protoName)), kind: .\(method.kind.rawValue)"
                            + (method.idempotency.map { ", idempotency: .\($0)" } ?? "") + ")"
                    )
                }
            }
            writer.line("/// Every method of the service, in declaration order.")
            if methods.isEmpty {
                writer.line("\(v)static let descriptors: [SkiffCore.MethodDescriptor] = []")
            } else {
                writer.block("\(v)static let descriptors: [SkiffCore.MethodDescriptor] =", opening: "[", closing: "]") {
                    writer in
                    for method in methods { writer.line("\(method.enumName).descriptor,") }
                }
            }
        }
    }
}
