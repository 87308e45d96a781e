import Foundation
import SkiffAPI
import SkiffCore
import SkiffReflection
import SkiffStandardServices
import SwiftProtobuf
import Testing

@Suite("Reflection service, in process")
struct ReflectionServiceTests {
    static func client() -> Skiff_Reflection_V1_Reflection.Client {
        let service = ReflectionService(
            services: [HealthService(services: []), TestService()],
            fileDescriptors: Skiff_Health_V1_Health.fileDescriptors + Skiff_Testing_V1_TestService.fileDescriptors
                + Skiff_Listings_V1_Listings.fileDescriptors
        )
        let reflection: [any RegistrableService] = [service]
        return .init(transport: InProcessTransport(services: reflection))
    }

    @Test("ListServices lists the registered services and itself")
    func listServices() async throws {
        let response = try await Self.client().listServices(.init())
        #expect(
            response.services == [
                "skiff.health.v1.Health", "skiff.reflection.v1.Reflection", "skiff.testing.v1.TestService",
            ]
        )
    }

    @Test("FileContainingSymbol returns the file, then its dependencies")
    func fileContainingSymbol() async throws {
        for symbol in [
            "skiff.listings.v1.Listings", "skiff.listings.v1.Listing", "skiff.listings.v1.Listings.SearchListings",
        ] {
            let response = try await Self.client().fileContainingSymbol(.with { $0.symbol = symbol })
            let files = try response.fileDescriptorProtos.map {
                try Google_Protobuf_FileDescriptorProto(serializedBytes: $0)
            }
            #expect(files.first?.name == "skiff/listings/v1/listings.proto")
            #expect(
                Set(files.map(\.name)).isSuperset(of: [
                    "google/protobuf/timestamp.proto", "google/protobuf/field_mask.proto",
                ])
            )
        }
        let own = try await Self.client().fileContainingSymbol(.with { $0.symbol = "skiff.reflection.v1.Reflection" })
        #expect(own.fileDescriptorProtos.count == 1)
    }

    @Test("FileByName, and NOT_FOUND for unknown names and symbols")
    func fileByName() async throws {
        let response = try await Self.client().fileByName(.with { $0.filename = "google/protobuf/timestamp.proto" })
        #expect(
            try Google_Protobuf_FileDescriptorProto(serializedBytes: response.fileDescriptorProtos[0]).package
                == "google.protobuf"
        )
        await #expect(throws: RPCError.self) {
            _ = try await Self.client().fileByName(.with { $0.filename = "nope.proto" })
        }
        do {
            _ = try await Self.client().fileContainingSymbol(.with { $0.symbol = "skiff.Nope" })
            Issue.record("expected NOT_FOUND")
        } catch let error as RPCError {
            #expect(error.code == .notFound)
        }
    }

    @Test("generated namespaces embed their file's descriptor first")
    func embeddedDescriptors() throws {
        let file = try Google_Protobuf_FileDescriptorProto(serializedBytes: Skiff_Bids_V1_Bids.fileDescriptor)
        #expect(file.name == "skiff/bids/v1/bids.proto")
        #expect(file.service.map(\.name) == ["Bids"])
        let names = try Skiff_Bids_V1_Bids.fileDescriptors.map {
            try Google_Protobuf_FileDescriptorProto(serializedBytes: $0).name
        }
        #expect(names.contains("skiff/listings/v1/listings.proto"))
        #expect(Set(names).count == names.count)
    }
}
