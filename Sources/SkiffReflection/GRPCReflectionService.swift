public import SkiffCore
public import SwiftProtobuf

/// The one implementation of the standard gRPC server reflection protocol behind both
/// ``GRPCReflectionService`` (`grpc.reflection.v1`) and ``GRPCReflectionV1AlphaService``
/// (`grpc.reflection.v1alpha`): it answers a `ServerReflectionRequest` from a
/// ``DescriptorRegistry`` and a list of service names, and serves a `ServerReflectionInfo` stream.
///
/// It speaks `grpc.reflection.v1`; the v1alpha messages are the same on the wire, field for field,
/// so the v1alpha service converts to and from them by serializing and parsing.
///
/// As gRPC's server reflection specification says, every response echoes the request's `host` as
/// `valid_host` and the request itself as `original_request`. A request that cannot be answered
/// gets an `error_response` and the stream stays open:
/// - NOT_FOUND for an unknown file, symbol, message type or extension;
/// - INVALID_ARGUMENT for a request that asks nothing, or carries a string (host, file name,
///   symbol, type name) longer than ``maxRequestStringBytes``.
///
/// Bounds: a stream's requests are answered in order, one at a time (the next is read once the
/// answer to the previous one is written), and a stream is answered at most
/// ``maxRequestsPerStream`` requests; the next ends it with RESOURCE_EXHAUSTED (a client opens
/// another).
public struct GRPCReflectionResponder: Sendable {
    /// A request in the package the responder speaks.
    public typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
    /// A response in the package the responder speaks.
    public typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

    /// The longest string a request may carry, in UTF-8 bytes (1 KiB): real file and symbol names
    /// are far shorter, and answers echo the request.
    public static let maxRequestStringBytes = 1024
    /// The most requests one `ServerReflectionInfo` stream is answered. grpcurl's `describe` of a
    /// whole server takes a few dozen.
    public static let maxRequestsPerStream = 1_000

    /// The schemas served.
    public let registry: DescriptorRegistry
    /// The names `list_services` answers, sorted.
    public let serviceNames: [String]

    /// A responder serving the given schemas and listing the given services.
    public init(registry: DescriptorRegistry, serviceNames: [String]) {
        self.registry = registry
        self.serviceNames = serviceNames.sorted()
    }

    /// A responder serving what `reflection` serves: the same descriptors and service names.
    public init(_ reflection: ReflectionService) {
        self.init(registry: reflection.registry, serviceNames: reflection.serviceNames)
    }

    /// The answer to one request.
    public func answer(_ request: Request) -> Response {
        var response = Response()
        response.validHost = request.host
        response.originalRequest = request
        response.messageResponse = body(answering: request)
        return response
    }

    private func body(answering request: Request) -> Response.OneOf_MessageResponse {
        let strings = [
            request.host, request.fileByFilename, request.fileContainingSymbol,
            request.fileContainingExtension.containingType, request.allExtensionNumbersOfType, request.listServices,
        ]
        if strings.contains(where: { $0.utf8.count > Self.maxRequestStringBytes }) {
            return Self.error(
                .invalidArgument,
                "A string of the request is longer than \(Self.maxRequestStringBytes) bytes."
            )
        }
        switch request.messageRequest {
        case .fileByFilename(let name):
            guard registry.files[name] != nil else { return Self.error(.notFound, "No file named '\(name)'.") }
            return files(named: name)
        case .fileContainingSymbol(let symbol):
            guard let file = registry.fileName(containingSymbol: symbol) else {
                return Self.error(.notFound, "No file declares the symbol '\(symbol)'.")
            }
            return files(named: file)
        case .fileContainingExtension(let wanted):
            guard registry.message(named: wanted.containingType) != nil else {
                return Self.error(.notFound, "No message type '\(wanted.containingType)'.")
            }
            guard let file = registry.fileName(containingExtension: wanted.extensionNumber, of: wanted.containingType)
            else {
                return Self.error(
                    .notFound,
                    "No extension \(wanted.extensionNumber) of '\(wanted.containingType)'."
                )
            }
            return files(named: file)
        case .allExtensionNumbersOfType(let type):
            guard registry.message(named: type) != nil else {
                return Self.error(.notFound, "No message type '\(type)'.")
            }
            return .allExtensionNumbersResponse(
                .with {
                    $0.baseTypeName = type
                    $0.extensionNumber = registry.extensionNumbers(of: type)
                }
            )
        case .listServices:
            return .listServicesResponse(.with { $0.service = serviceNames.map { name in .with { $0.name = name } } })
        case nil:
            return Self.error(
                .invalidArgument,
                "The request asks nothing: set one of file_by_filename, file_containing_symbol, "
                    + "file_containing_extension, all_extension_numbers_of_type, list_services."
            )
        }
    }

    private func files(named name: String) -> Response.OneOf_MessageResponse {
        do {
            let files = try registry.serializedFileWithDependencies(named: name)
            return .fileDescriptorResponse(.with { $0.fileDescriptorProto = files })
        } catch {
            return Self.error(.internal, "The descriptor of '\(name)' could not be serialized.")
        }
    }

    private static func error(_ code: StatusCode, _ message: String) -> Response.OneOf_MessageResponse {
        .errorResponse(
            .with {
                $0.errorCode = Int32(code.rawValue)
                $0.errorMessage = message
            }
        )
    }

    /// Serves a `ServerReflectionInfo` stream in either reflection package: answers each request in
    /// order, one at a time, until the client ends its side.
    ///
    /// - Throws: ``RPCError`` RESOURCE_EXHAUSTED on the request after ``maxRequestsPerStream``;
    ///   INTERNAL if a message does not convert between the packages (they are wire-identical).
    public func serve<In: SwiftProtobuf.Message, Out: SwiftProtobuf.Message>(
        requests: RPCAsyncSequence<In>,
        response: RPCWriter<Out>
    ) async throws {
        var answered = 0
        for try await request in requests {
            guard answered < Self.maxRequestsPerStream else {
                throw RPCError(
                    code: .resourceExhausted,
                    message: "A reflection stream is answered at most \(Self.maxRequestsPerStream) requests; "
                        + "open another."
                )
            }
            answered += 1
            let answer = self.answer(try Self.converted(request, to: Request.self))
            try await response.write(try Self.converted(answer, to: Out.self))
        }
    }

    /// `message` as the same message of the other reflection package (or itself, in the same one).
    static func converted<From: SwiftProtobuf.Message, To: SwiftProtobuf.Message>(
        _ message: From,
        to type: To.Type
    ) throws -> To {
        if let same = message as? To { return same }
        do {
            return try To(serializedBytes: try message.serializedBytes() as [UInt8])
        } catch {
            throw RPCError(
                code: .internal,
                message: "\(From.protoMessageName) does not convert to \(To.protoMessageName)."
            )
        }
    }
}

/// The standard gRPC server reflection service, `grpc.reflection.v1.ServerReflection`, so that
/// stock tools (grpcurl, Postman, grpcio's reflection client) call the server with no `.proto`
/// files at hand. It serves what a ``ReflectionService`` (`skiff.reflection.v1`) serves; see
/// ``GRPCReflectionResponder`` for the answers, errors and bounds, and
/// ``ReflectionService/withGRPCReflection(services:fileDescriptors:)`` to register all three.
public struct GRPCReflectionService: Grpc_Reflection_V1_ServerReflection.ServiceProtocol {
    /// What answers.
    public let responder: GRPCReflectionResponder

    /// The service serving what `reflection` serves.
    public init(_ reflection: ReflectionService) { self.responder = GRPCReflectionResponder(reflection) }

    public func serverReflectionInfo(
        requests: RPCAsyncSequence<Grpc_Reflection_V1_ServerReflectionRequest>,
        response: RPCWriter<Grpc_Reflection_V1_ServerReflectionResponse>,
        context: ServerContext
    ) async throws {
        try await responder.serve(requests: requests, response: response)
    }
}

/// The pre-release gRPC server reflection service, `grpc.reflection.v1alpha.ServerReflection`,
/// which many tools still call first: the same answers as ``GRPCReflectionService``, from the same
/// ``GRPCReflectionResponder``, in the v1alpha package's messages.
public struct GRPCReflectionV1AlphaService: Grpc_Reflection_V1alpha_ServerReflection.ServiceProtocol {
    /// What answers.
    public let responder: GRPCReflectionResponder

    /// The service serving what `reflection` serves.
    public init(_ reflection: ReflectionService) { self.responder = GRPCReflectionResponder(reflection) }

    public func serverReflectionInfo(
        requests: RPCAsyncSequence<Grpc_Reflection_V1alpha_ServerReflectionRequest>,
        response: RPCWriter<Grpc_Reflection_V1alpha_ServerReflectionResponse>,
        context: ServerContext
    ) async throws {
        try await responder.serve(requests: requests, response: response)
    }
}
