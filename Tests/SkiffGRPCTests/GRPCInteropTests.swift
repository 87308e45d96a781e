import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Testing

/// Where the repository's files are, from this file's path.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Runs `python3 script args…` and returns its exit status and output. The test fails (it is never
/// skipped) when python3 or its packages are missing: `dev/test.sh` installs them.
func runPython(_ script: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let result = try runProcess("python3", [script.path] + arguments)
    return (result.status, result.output)
}

@Suite("gRPC over HTTP/2 with stock clients")
struct GRPCInteropTests {
    @Test("Python grpcio calls the conformance service on the port skiff/1 also serves")
    func grpcio() async throws {
        try await withTestServer(
            services: [TestService(), HealthService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol()]
        ) { _, port in
            let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop/grpcio_conformance.py")
            let protos = repository.appendingPathComponent("Protos").path
            let result = try await Task.detached {
                try runPython(script, ["--port", "\(port)", "--protos", protos])
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
            // Every check ran: unary with metadata both ways, forced statuses, the streaming kinds, a
            // multi-MiB message, UNIMPLEMENTED, a deadline, cancellation, concurrent calls.
            let passed = result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
            #expect(passed.count == 16, "\(result.output)")
            // skiff/1 clients still share the port.
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                _ = try await Skiff_Testing_V1_TestService.Client(transport: connection).emptyCall(.init())
            }
        }
    }

    @Test("the README's example: a guest SearchListings from grpcio against the application's default protocols")
    func readmeSearch() async throws {
        try await withTestApplication { test in
            let seller = try await test.signedInUser(email: "sel@campus.edu", name: "Sel")
            _ = try await test.listings.createListing(
                .with {
                    $0.listing.title = "Red bike"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            )
            let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop/grpcio_search.py")
            let protos = repository.appendingPathComponent("Protos").path
            let port = test.port
            let result = try await Task.detached {
                try runPython(script, ["--port", "\(port)", "--protos", protos, "--query", "bike"])
            }.value
            #expect(result.status == 0, "\(result.output)")
            let lines = result.output.split(separator: "\n")
            #expect(lines.first == "Red bike", "\(result.output)")
            #expect(lines.last?.hasPrefix("INVALID_ARGUMENT: ") == true, "\(result.output)")
        }
    }

    @Test("an oversize request message is RESOURCE_EXHAUSTED for that call only")
    func oversizeMessage() async throws {
        try await withTestServer(
            services: [TestService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol()],
            configure: { $0.settings.maxMessageSize = 64 * 1024 }
        ) { _, port in
            let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop/grpcio_limits.py")
            let protos = repository.appendingPathComponent("Protos").path
            let result = try await Task.detached {
                try runPython(script, ["--port", "\(port)", "--protos", protos, "--max-message-size", "65536"])
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
        }
    }

    @Test("grpc.health.v1 from the stock grpcio-health-checking client: Check and Watch, known and unknown services")
    func health() async throws {
        try await withTestApplication { test in
            let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop/grpcio_health.py")
            let port = test.port
            let result = try await Task.detached { try runPython(script, ["--port", "\(port)"]) }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
            #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 5, "\(result.output)")
        }
    }

    @Test(
        "gRPC server reflection from stock clients, no protos: grpcio-reflection's v1alpha client resolves and calls dynamically, v1 by upstream stubs"
    )
    func reflection() async throws {
        try await withTestApplication { test in
            let seller = try await test.signedInUser(email: "sel@campus.edu", name: "Sel")
            _ = try await test.listings.createListing(
                .with {
                    $0.listing.title = "Red bike"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            )
            let script = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop/grpcio_reflection.py")
            let port = test.port
            let result = try await Task.detached { try runPython(script, ["--port", "\(port)"]) }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
            #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 17, "\(result.output)")
        }
    }
}
