import ArgumentParser
public import SkiffCore
public import SkiffReflection
public import SwiftProtobuf

/// `skiff call HOST:PORT Service/Method [JSON]`: calls a method with JSON in and out.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call a method with a JSON request; print the JSON responses.",
        discussion: """
            Unary and server-streaming calls take the request as JSON (default {}; '-' reads it from \
            standard input). Client- and bidirectional-streaming calls read newline-delimited JSON \
            requests from standard input. Each response is printed as it arrives.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "The method, as Service/Method, e.g. skiff.listings.v1.Listings/SearchListings.")
    var method: String

    @Argument(help: "The request as JSON ('-' for standard input).")
    var request: String?

    @Flag(help: "Print each response on one line instead of indented.")
    var compact = false

    @Flag(name: .shortAndLong, help: "Print the response metadata and trailers to standard error.")
    var verbose = false

    func run() async throws {
        let io = CommandIO.current
        let (serviceName, methodName) = try SchemaSource.splitMethod(method)
        let metadata = try connection.metadata(io: io)
        let timeout = try connection.parsedTimeout()
        try await connection.withConnection { transport in
            let (_, registry) = try await SchemaSource.load(
                options: connection,
                transport: transport,
                onlyService: serviceName
            )
            guard let descriptor = registry.services[serviceName]?.method.first(where: { $0.name == methodName }) else {
                throw CLIError(.unimplemented, "Service '\(serviceName)' has no method '\(methodName)'.")
            }
            let invoker = Invoker(transcoder: ProtoJSONTranscoder(registry: registry))
            let requests: Invoker.Requests
            if descriptor.clientStreaming {
                requests = .lines(io.readLine)
            } else if request == "-" {
                var lines: [String] = []
                while let line = io.readLine() { lines.append(line) }
                requests = .single(lines.joined(separator: "\n"))
            } else {
                requests = .single(request ?? "{}")
            }
            let pretty = !compact
            let printMetadata: @Sendable (String, Metadata) -> Void = { label, metadata in
                io.printError("\(label):")
                for entry in metadata { io.printError("  \(entry.key): \(entry.value.description)") }
            }
            try await invoker.call(
                service: serviceName,
                method: descriptor,
                requests: requests,
                options: CallOptions(metadata: metadata, timeout: timeout),
                transport: transport,
                onMetadata: verbose ? printMetadata : nil
            ) { response in
                io.print(response.serialized(pretty: pretty))
            }
        }
    }
}

/// Makes a call of any kind with JSON requests and responses.
public struct Invoker: Sendable {
    /// Where the requests come from.
    public enum Requests: Sendable {
        /// One request.
        case single(String)
        /// One request per non-empty line, until the reader returns nil.
        case lines(@Sendable () -> String?)
    }

    /// Converts the messages.
    public let transcoder: ProtoJSONTranscoder

    /// Creates an invoker.
    public init(transcoder: ProtoJSONTranscoder) { self.transcoder = transcoder }

    /// Calls `method` of `service`, handing each response to `onResponse` as it arrives.
    /// - Throws: ``CLIError`` (INVALID_ARGUMENT for bad JSON) or the call's ``RPCError``.
    public func call(
        service: String,
        method: Google_Protobuf_MethodDescriptorProto,
        requests: Requests,
        options: CallOptions,
        transport: any ClientTransport,
        onMetadata: (@Sendable (_ label: String, Metadata) -> Void)? = nil,
        onResponse: @escaping @Sendable (JSONValue) -> Void
    ) async throws {
        let kind: RPCKind =
            switch (method.clientStreaming, method.serverStreaming) {
            case (false, false): .unary
            case (true, false): .clientStreaming
            case (false, true): .serverStreaming
            case (true, true): .bidirectionalStreaming
            }
        let descriptor = MethodDescriptor(service: service, method: method.name, kind: kind)
        let transcoder = self.transcoder
        let inputType = method.inputType
        let outputType = method.outputType
        @Sendable func encode(_ json: String) throws -> RawMessage {
            do {
                return try RawMessage(bytes: transcoder.binary(fromJSON: json, messageType: inputType))
            } catch let error as TranscodingError {
                throw CLIError(.invalidArgument, "Invalid request: \(error.description)")
            }
        }
        @Sendable func decode(_ message: RawMessage) throws -> JSONValue {
            do {
                return try transcoder.decode(message.bytes, messageType: outputType)
            } catch let error as TranscodingError {
                throw CLIError(.internal, "Cannot decode the response: \(error.description)")
            }
        }
        switch requests {
        case .single(let json) where kind == .unary:
            let response = try await transport.unary(
                descriptor,
                request: try encode(json),
                options: options,
                responseType: RawMessage.self
            )
            onMetadata?("Response headers", response.metadata)
            onResponse(try decode(response.message))
            onMetadata?("Response trailers", response.trailingMetadata)
        case .single(let json):
            let message = try encode(json)
            try await stream(
                descriptor,
                options: options,
                requests: { try await $0.write(message) },
                decode: decode,
                onMetadata: onMetadata,
                onResponse: onResponse,
                transport: transport
            )
        case .lines(let readLine):
            let encodeLine: @Sendable (String) throws -> RawMessage = { line in try encode(line) }
            try await stream(
                descriptor,
                options: options,
                requests: { writer in
                    while let line = readLine() {
                        guard !line.allSatisfy(\.isWhitespace) else { continue }
                        try await writer.write(try encodeLine(line))
                    }
                },
                decode: decode,
                onMetadata: onMetadata,
                onResponse: onResponse,
                transport: transport
            )
        }
    }

    private func stream(
        _ descriptor: MethodDescriptor,
        options: CallOptions,
        requests: @escaping @Sendable (RPCWriter<RawMessage>) async throws -> Void,
        decode: @escaping @Sendable (RawMessage) throws -> JSONValue,
        onMetadata: (@Sendable (String, Metadata) -> Void)?,
        onResponse: @escaping @Sendable (JSONValue) -> Void,
        transport: any ClientTransport
    ) async throws {
        try await transport.streaming(
            descriptor,
            options: options,
            requestType: RawMessage.self,
            responseType: RawMessage.self,
            requests: requests
        ) { response in
            onMetadata?("Response headers", response.metadata)
            for try await message in response.messages { onResponse(try decode(message)) }
            if let onMetadata { onMetadata("Response trailers", try await response.trailingMetadata()) }
        }
    }
}
