import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffReflection
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Testing

private typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
private typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

/// Two small files made here, for what Skiff's own protos lack: a nested message, and an extension
/// declared in another file than the message it extends (proto2).
private enum Example {
    static let base = Google_Protobuf_FileDescriptorProto.with {
        $0.name = "example/v1/base.proto"
        $0.package = "example.v1"
        $0.syntax = "proto2"
        $0.messageType = [
            .with {
                $0.name = "Outer"
                $0.nestedType = [.with { $0.name = "Inner" }]
                $0.extensionRange = [
                    .with {
                        $0.start = 100
                        $0.end = 200
                    }
                ]
            }
        ]
    }
    static let notes = Google_Protobuf_FileDescriptorProto.with {
        $0.name = "example/v1/notes.proto"
        $0.package = "example.v1"
        $0.syntax = "proto2"
        $0.dependency = ["example/v1/base.proto"]
        $0.extension = [
            .with {
                $0.name = "note"
                $0.number = 150
                $0.label = .optional
                $0.type = .string
                $0.extendee = ".example.v1.Outer"
            },
            .with {
                $0.name = "priority"
                $0.number = 101
                $0.label = .optional
                $0.type = .int32
                $0.extendee = ".example.v1.Outer"
            },
        ]
    }
    static var fileDescriptors: [[UInt8]] {
        get throws { [try notes.serializedBytes(), try base.serializedBytes()] }
    }
}

/// The three reflection services over the health, test and listings schemas and the example files.
private func reflectionServices() throws -> (skiff: ReflectionService, all: [any RegistrableService]) {
    let health = HealthService(services: [])
    let services = try ReflectionService.withGRPCReflection(
        services: [health, GRPCHealthService(health), TestService()],
        fileDescriptors: Skiff_Health_V1_Health.fileDescriptors + Grpc_Health_V1_Health.fileDescriptors
            + Skiff_Testing_V1_TestService.fileDescriptors + Skiff_Listings_V1_Listings.fileDescriptors
            + Example.fileDescriptors
    )
    let skiff = try #require(services.first as? ReflectionService)
    return (skiff, [health, GRPCHealthService(health), TestService()] + services)
}

private func responder() throws -> GRPCReflectionResponder {
    GRPCReflectionResponder(try reflectionServices().skiff)
}

/// The file names of a file descriptor response, in order; nil for another kind of response.
private func fileNames(_ response: Response) throws -> [String]? {
    guard case .fileDescriptorResponse(let files) = response.messageResponse else { return nil }
    return try files.fileDescriptorProto.map { try Google_Protobuf_FileDescriptorProto(serializedBytes: $0).name }
}

/// The error code of an error response; nil for another kind of response.
private func errorCode(_ response: Response) -> Int32? {
    guard case .errorResponse(let error) = response.messageResponse else { return nil }
    #expect(!error.errorMessage.isEmpty)
    return error.errorCode
}

private let allNames = [
    "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
    "skiff.health.v1.Health", "skiff.reflection.v1.Reflection", "skiff.testing.v1.TestService",
]

@Suite("gRPC server reflection: the answering core")
struct GRPCReflectionResponderTests {
    @Test("list_services lists every service, the three reflection services included, as skiff.reflection.v1 does")
    func listServices() async throws {
        let (skiff, _) = try reflectionServices()
        let response = GRPCReflectionResponder(skiff).answer(.with { $0.listServices = "*" })
        guard case .listServicesResponse(let list) = response.messageResponse else {
            Issue.record("not a list: \(response)")
            return
        }
        #expect(list.service.map(\.name) == allNames)
        let own = try await Skiff_Reflection_V1_Reflection.Client(transport: InProcessTransport(services: [skiff]))
            .listServices(.init())
        #expect(own.services == allNames)
    }

    @Test(
        "file_containing_symbol: services, methods, messages, nested types, fields, enum values",
        arguments: [
            ("skiff.listings.v1.Listings", "skiff/listings/v1/listings.proto"),
            ("skiff.listings.v1.Listings.SearchListings", "skiff/listings/v1/listings.proto"),
            ("skiff.listings.v1.Listing", "skiff/listings/v1/listings.proto"),
            ("skiff.listings.v1.Listing.title", "skiff/listings/v1/listings.proto"),
            ("skiff.listings.v1.Category", "skiff/listings/v1/listings.proto"),
            ("grpc.health.v1.HealthCheckResponse.ServingStatus", "grpc/health/v1/health.proto"),
            ("grpc.health.v1.HealthCheckResponse.SERVING", "grpc/health/v1/health.proto"),
            ("example.v1.Outer.Inner", "example/v1/base.proto"),
            ("example.v1.note", "example/v1/notes.proto"),
            ("grpc.reflection.v1.ServerReflection", "grpc/reflection/v1/reflection.proto"),
            (
                "grpc.reflection.v1alpha.ServerReflection.ServerReflectionInfo",
                "grpc/reflection/v1alpha/reflection.proto"
            ),
            ("skiff.reflection.v1.Reflection", "skiff/reflection/v1/reflection.proto"),
        ]
    )
    func fileContainingSymbol(symbol: String, file: String) throws {
        let names = try fileNames(try responder().answer(.with { $0.fileContainingSymbol = symbol }))
        #expect(names?.first == file, "\(symbol)")
    }

    @Test("a file comes with its transitive dependencies, each once, the file first")
    func dependencies() throws {
        let responder = try responder()
        let listings = try #require(
            try fileNames(responder.answer(.with { $0.fileByFilename = "skiff/listings/v1/listings.proto" }))
        )
        #expect(listings.first == "skiff/listings/v1/listings.proto")
        #expect(Set(listings).isSuperset(of: ["google/protobuf/timestamp.proto", "google/protobuf/field_mask.proto"]))
        #expect(Set(listings).count == listings.count)
        let notes = try fileNames(responder.answer(.with { $0.fileContainingSymbol = "example.v1.note" }))
        #expect(notes == ["example/v1/notes.proto", "example/v1/base.proto"])
        let timestamp = try fileNames(responder.answer(.with { $0.fileByFilename = "google/protobuf/timestamp.proto" }))
        #expect(timestamp == ["google/protobuf/timestamp.proto"])
    }

    @Test("the bytes served are those of the generated descriptors: the same file as skiff.reflection.v1 serves")
    func sameBytes() async throws {
        let (skiff, _) = try reflectionServices()
        let response = GRPCReflectionResponder(skiff).answer(
            .with { $0.fileContainingSymbol = "grpc.health.v1.Health" }
        )
        guard case .fileDescriptorResponse(let files) = response.messageResponse else {
            Issue.record("not files: \(response)")
            return
        }
        let own = try await Skiff_Reflection_V1_Reflection.Client(transport: InProcessTransport(services: [skiff]))
            .fileContainingSymbol(.with { $0.symbol = "grpc.health.v1.Health" })
        #expect(files.fileDescriptorProto == own.fileDescriptorProtos)
        #expect(
            try Google_Protobuf_FileDescriptorProto(serializedBytes: files.fileDescriptorProto[0])
                == Google_Protobuf_FileDescriptorProto(serializedBytes: Grpc_Health_V1_Health.fileDescriptor)
        )
    }

    @Test("extensions: the file declaring one, the numbers of a type's; NOT_FOUND for unknown ones")
    func extensions() throws {
        let responder = try responder()
        let declaring = try fileNames(
            responder.answer(
                .with {
                    $0.fileContainingExtension = .with {
                        $0.containingType = "example.v1.Outer"
                        $0.extensionNumber = 150
                    }
                }
            )
        )
        #expect(declaring?.first == "example/v1/notes.proto")
        let numbers = responder.answer(.with { $0.allExtensionNumbersOfType = "example.v1.Outer" })
        #expect(numbers.allExtensionNumbersResponse.baseTypeName == "example.v1.Outer")
        #expect(numbers.allExtensionNumbersResponse.extensionNumber == [101, 150])
        let none = responder.answer(.with { $0.allExtensionNumbersOfType = "skiff.listings.v1.Listing" })
        guard case .allExtensionNumbersResponse(let empty) = none.messageResponse else {
            Issue.record("not extension numbers: \(none)")
            return
        }
        #expect(empty.baseTypeName == "skiff.listings.v1.Listing")
        #expect(empty.extensionNumber.isEmpty)
        let notFound = Int32(StatusCode.notFound.rawValue)
        #expect(errorCode(responder.answer(.with { $0.allExtensionNumbersOfType = "no.such.Type" })) == notFound)
        #expect(
            errorCode(
                responder.answer(
                    .with {
                        $0.fileContainingExtension = .with {
                            $0.containingType = "example.v1.Outer"
                            $0.extensionNumber = 120
                        }
                    }
                )
            ) == notFound
        )
        #expect(
            errorCode(
                responder.answer(
                    .with {
                        $0.fileContainingExtension = .with {
                            $0.containingType = "no.such.Type"
                            $0.extensionNumber = 1
                        }
                    }
                )
            )
                == notFound
        )
    }

    @Test("unknown symbols and files are NOT_FOUND error responses; every response echoes host and request")
    func notFound() throws {
        let responder = try responder()
        for request in [
            Request.with { $0.fileContainingSymbol = "skiff.listings.v1.Nope" },
            .with { $0.fileContainingSymbol = "skiff.listings.v1.Listings.Nope" },
            .with { $0.fileContainingSymbol = "" },
            .with { $0.fileByFilename = "nope.proto" },
            .with {
                $0.host = "skiff.example"
                $0.fileByFilename = "skiff/listings/v1"
            },
        ] {
            let response = responder.answer(request)
            #expect(errorCode(response) == Int32(StatusCode.notFound.rawValue), "\(request)")
            #expect(response.originalRequest == request)
            #expect(response.validHost == request.host)
        }
        let found = responder.answer(
            .with {
                $0.host = "skiff.example"
                $0.listServices = ""
            }
        )
        #expect(found.validHost == "skiff.example")
        #expect(
            found.originalRequest
                == .with {
                    $0.host = "skiff.example"
                    $0.listServices = ""
                }
        )
    }

    @Test("a string over 1 KiB, or a request that asks nothing, is an INVALID_ARGUMENT error response")
    func invalid() throws {
        let responder = try responder()
        let long = String(repeating: "x", count: GRPCReflectionResponder.maxRequestStringBytes + 1)
        let limit = String(repeating: "x", count: GRPCReflectionResponder.maxRequestStringBytes)
        let invalidArgument = Int32(StatusCode.invalidArgument.rawValue)
        for request in [
            Request.with { $0.fileContainingSymbol = long },
            .with { $0.fileByFilename = long },
            .with { $0.allExtensionNumbersOfType = long },
            .with { $0.fileContainingExtension.containingType = long },
            .with { $0.listServices = long },
            .with {
                $0.host = long
                $0.listServices = ""
            },
            Request(),
        ] {
            #expect(
                errorCode(responder.answer(request)) == invalidArgument,
                "\(request.messageRequest.debugDescription)"
            )
        }
        // At the limit it is only not found.
        #expect(
            errorCode(responder.answer(.with { $0.fileContainingSymbol = limit }))
                == Int32(StatusCode.notFound.rawValue)
        )
    }

    @Test("a stream is answered in order in either package, errors keep it open, and it ends after the cap")
    func stream() async throws {
        let responder = try responder()
        let requests: [Grpc_Reflection_V1alpha_ServerReflectionRequest] = [
            .with { $0.listServices = "" },
            .with { $0.fileContainingSymbol = "no.such.Symbol" },
            .with { $0.fileContainingSymbol = "skiff.testing.v1.TestService" },
        ]
        let written = Recorded<Grpc_Reflection_V1alpha_ServerReflectionResponse>()
        try await responder.serve(requests: sequence(requests), response: RPCWriter { await written.append($0) })
        let responses = await written.values
        #expect(responses.map(\.originalRequest) == requests)
        #expect(responses[0].listServicesResponse.service.map(\.name) == allNames)
        #expect(responses[1].errorResponse.errorCode == Int32(StatusCode.notFound.rawValue))
        #expect(responses[2].fileDescriptorResponse.fileDescriptorProto.count >= 1)

        let many = Array(
            repeating: Request.with { $0.listServices = "" },
            count: GRPCReflectionResponder.maxRequestsPerStream + 1
        )
        let counted = Recorded<Response>()
        do {
            try await responder.serve(requests: sequence(many), response: RPCWriter { await counted.append($0) })
            Issue.record("a stream past the cap was answered whole")
        } catch let error as RPCError {
            #expect(error.code == .resourceExhausted)
        }
        #expect(await counted.values.count == GRPCReflectionResponder.maxRequestsPerStream)
    }
}

/// What a writer got.
private actor Recorded<Element: Sendable> {
    var values: [Element] = []
    func append(_ value: Element) { values.append(value) }
}

/// An `RPCAsyncSequence` of the given elements.
private func sequence<Element: Sendable>(_ elements: [Element]) -> RPCAsyncSequence<Element> {
    let all = elements
    let index = Counter()
    return RPCAsyncSequence {
        let position = await index.next()
        return position < all.count ? all[position] : nil
    }
}

private actor Counter {
    var value = 0
    func next() -> Int {
        defer { value += 1 }
        return value
    }
}

@Suite("gRPC server reflection over a socket")
struct GRPCReflectionSocketTests {
    @Test("grpc.reflection.v1 and v1alpha on a real server: several requests on one stream each, same answers")
    func socket() async throws {
        let (_, services) = try reflectionServices()
        try await withTestServer(services: services, protocols: [SkiffWireProtocol(), HTTP2Protocol()]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let requests: [Request] = [
                    .with {
                        $0.host = "skiff.example"
                        $0.listServices = ""
                    },
                    .with { $0.fileContainingSymbol = "skiff.listings.v1.Listings.SearchListings" },
                    .with { $0.fileContainingSymbol = "no.such.Symbol" },
                    .with { $0.fileByFilename = "google/protobuf/timestamp.proto" },
                ]
                let v1 = try await Grpc_Reflection_V1_ServerReflection.Client(transport: connection)
                    .serverReflectionInfo { writer in
                        for request in requests { try await writer.write(request) }
                    } onResponse: { response in
                        try await response.messages.collect()
                    }
                #expect(v1.count == requests.count)
                #expect(v1.map(\.originalRequest) == requests)
                #expect(v1.first?.validHost == "skiff.example")
                #expect(v1.first?.listServicesResponse.service.map(\.name) == allNames)
                #expect(try v1.dropFirst().first.flatMap(fileNames)?.first == "skiff/listings/v1/listings.proto")
                #expect(v1.count > 2 && errorCode(v1[2]) == Int32(StatusCode.notFound.rawValue))

                let alphaRequests = try requests.map {
                    try Grpc_Reflection_V1alpha_ServerReflectionRequest(
                        serializedBytes: $0.serializedBytes() as [UInt8]
                    )
                }
                let alpha = try await Grpc_Reflection_V1alpha_ServerReflection.Client(transport: connection)
                    .serverReflectionInfo { writer in
                        for request in alphaRequests { try await writer.write(request) }
                    } onResponse: { response in
                        try await response.messages.collect()
                    }
                let alphaAsV1 = try alpha.map { try Response(serializedBytes: $0.serializedBytes() as [UInt8]) }
                #expect(alphaAsV1 == v1)
            }
        }
    }
}
