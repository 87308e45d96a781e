import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Testing

/// What a `skiff-server` tells health checks while it shuts down (issue 15: rolling restarts).
@Suite("Health during shutdown")
struct ShutdownHealthTests {
    @Test("On SIGTERM with --shutdown-delay: NOT_SERVING at once while calls are still served, then a clean exit")
    func notServingBeforeTheDrain() async throws {
        let server = try ServerProcess(arguments: [
            "--storage", "memory", "--password-hash-rounds", "1000", "--shutdown-delay", "3",
        ])
        defer { if server.isRunning { server.kill() } }
        try await withClientConnection(target: .host("127.0.0.1", port: server.port)) { connection in
            let health = Skiff_Health_V1_Health.Client(transport: connection)
            let listings = ListingsClient(transport: connection)
            #expect(try await health.check(.init()).status == .serving)
            #expect(try await health.check(.with { $0.service = "skiff.listings.v1.Listings" }).status == .serving)

            async let exit = server.stopGracefully(timeout: .seconds(20))
            var status = Skiff_Health_V1_HealthCheckResponse.ServingStatus.serving
            for _ in 0..<100 where status == .serving {
                try await Task.sleep(for: .milliseconds(10))
                status = try await health.check(.with { $0.service = "skiff.listings.v1.Listings" }).status
            }
            #expect(status == .notServing, "the health check did not turn NOT_SERVING within a second of SIGTERM")
            #expect(try await health.check(.init()).status == .notServing)
            // Still serving calls meanwhile.
            let found = try await listings.searchListings(.with { $0.query = "lamp" })
            #expect(found.results.isEmpty)
            #expect(await exit == 0)
        }
    }
}
