import SkiffClient
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffServer

@Suite("No per-call leaks", .serialized)
struct LeakTests {
    @Test("every stream is freed once its call is over: unary, streaming and rejected calls")
    func streamsAreFreed() async throws {
        try await withTestServer { server, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                for _ in 0..<200 { _ = try await client.unaryCall(.with { $0.responseSize = 10 }) }
                _ = try await client.streamingOutputCall(
                    .with { $0.responseParameters = [.with { $0.size = 5 }, .with { $0.size = 6 }] }
                ) { try await $0.messages.collect().count }
                _ = try? await client.unaryCall(.with { $0.responseStatus = .with { $0.code = 5 } })
                _ = try? await client.unaryCall(.with { $0.sleepMs = 2_000 }, timeout: .milliseconds(50))
            }
            // Streams of other tests running in parallel may be alive too, so wait for the count to
            // fall below what this test alone created rather than to zero.
            try await waitUntil { ServerStream.live.load(ordering: .relaxed) < 50 && server.observer.streams == 0 }
        }
    }
}
