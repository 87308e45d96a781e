import Foundation
import SkiffCore
import SkiffStandardServices
import SwiftProtobuf
import Synchronization
import Testing

typealias TestClient = Skiff_Testing_V1_TestService.Client

/// The four call kinds, errors, metadata and deadlines through the generated typed client,
/// run over every transport: in-process, and the real server over a socket.
@Suite("Conformance service through the typed client")
struct ConformanceTests {
    @Test("EmptyCall and UnaryCall round trip", arguments: TransportKind.allCases)
    func unary(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            _ = try await client.emptyCall(Skiff_Testing_V1_Empty())
            let response = try await client.unaryCall(.with { $0.responseSize = 1_000 })
            #expect(response.payload.body == Data(count: 1_000))
            #expect(!response.peerMetadata.isEmpty)
        }
    }

    @Test("a status set by the request comes back exactly", arguments: TransportKind.allCases)
    func status(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.unaryCall(
                    .with {
                        $0.responseStatus = .with {
                            $0.code = 7
                            $0.message = "nope: ünïcødé ✓"
                        }
                    }
                )
            }
            #expect(error?.code == .permissionDenied)
            #expect(error?.message == "nope: ünïcødé ✓")
        }
    }

    @Test("UnimplementedCall and unknown methods are UNIMPLEMENTED", arguments: TransportKind.allCases)
    func unimplemented(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let error = await #expect(throws: RPCError.self) { _ = try await client.unimplementedCall(.init()) }
            #expect(error?.code == .unimplemented)
            let unknown = MethodDescriptor(service: "skiff.testing.v1.TestService", method: "Nope", kind: .unary)
            let error2 = await #expect(throws: RPCError.self) {
                _ = try await transport.unary(
                    unknown,
                    request: Skiff_Testing_V1_Empty(),
                    options: .defaults,
                    responseType: Skiff_Testing_V1_Empty.self
                )
            }
            #expect(error2?.code == .unimplemented)
        }
    }

    @Test("a request in a grpc-encoding other than identity is UNIMPLEMENTED", arguments: TransportKind.allCases)
    func compressedRequest(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.emptyCall(.init(), metadata: ["grpc-encoding": "gzip"])
            }
            #expect(error?.code == .unimplemented)
            #expect(error?.message == "grpc-encoding \"gzip\" is not supported; use identity.")
            _ = try await client.emptyCall(.init())
        }
    }

    @Test("server streaming delivers every response in order", arguments: TransportKind.allCases)
    func serverStreaming(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let sizes: [Int32] = [1, 10, 100, 1_000, 100_000, 0, 7]
            let received = try await client.streamingOutputCall(
                .with { $0.responseParameters = sizes.map { size in .with { $0.size = size } } }
            ) { response in
                try await response.messages.collect().map { Int32($0.payload.body.count) }
            }
            #expect(received == sizes)
        }
    }

    @Test("server streaming ends with the requested status after its responses", arguments: TransportKind.allCases)
    func serverStreamingError(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let count = Counter()
            let error = await #expect(throws: RPCError.self) {
                try await client.streamingOutputCall(
                    .with {
                        $0.responseParameters = [.with { $0.size = 3 }, .with { $0.size = 4 }]
                        $0.responseStatus = .with {
                            $0.code = 10
                            $0.message = "aborted after two"
                        }
                    }
                ) { response in
                    for try await _ in response.messages { count.value.withLock { $0 += 1 } }
                }
            }
            #expect(error?.code == .aborted)
            #expect(count.value.withLock { $0 } == 2)
        }
    }

    @Test("client streaming aggregates every request, large ones included", arguments: TransportKind.allCases)
    func clientStreaming(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let sizes = [27_182, 8, 1_828, 45_904, 1_000_000]
            let response = try await client.streamingInputCall { writer in
                for size in sizes { try await writer.write(.with { $0.payload.body = Data(count: size) }) }
            }
            #expect(Int(response.aggregatedPayloadSize) == sizes.reduce(0, +))
        }
    }

    @Test("bidirectional ping-pong", arguments: TransportKind.allCases)
    func bidi(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let sizes: [Int32] = [31_415, 9, 2_653, 58_979]
            let received = try await client.fullDuplexCall { writer in
                for size in sizes {
                    try await writer.write(.with { $0.responseParameters = [.with { $0.size = size }] })
                }
            } onResponse: { response in
                try await response.messages.collect().map { Int32($0.payload.body.count) }
            }
            #expect(received == sizes)
        }
    }

    @Test("metadata echo through the typed transport", arguments: TransportKind.allCases)
    func metadata(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            var metadata: Metadata = ["x-skiff-echo-initial": "hello"]
            metadata.add("x-skiff-echo-trailing-bin", binary: [1, 2, 3])
            let response = try await transport.unary(
                Skiff_Testing_V1_TestService.Method.EmptyCall.descriptor,
                request: Skiff_Testing_V1_Empty(),
                options: CallOptions(metadata: metadata),
                responseType: Skiff_Testing_V1_Empty.self
            )
            #expect(response.metadata.first("x-skiff-echo-initial") == "hello")
            #expect(response.trailingMetadata.values("x-skiff-echo-trailing-bin") == [.binary([1, 2, 3])])
        }
    }

    @Test("a deadline fails the call with DEADLINE_EXCEEDED", arguments: TransportKind.allCases)
    func deadline(_ kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let client = TestClient(transport: transport)
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.unaryCall(.with { $0.sleepMs = 5_000 }, timeout: .milliseconds(100))
            }
            #expect(error?.code == .deadlineExceeded)
        }
    }

    @Test("server interceptors see every call and can reject it", arguments: TransportKind.allCases)
    func interceptors(_ kind: TransportKind) async throws {
        let seen = Recorder()
        let interceptor = RecordingInterceptor(seen: seen)
        try await withTransport(kind, interceptors: [interceptor]) { transport in
            let client = TestClient(transport: transport)
            _ = try await client.emptyCall(.init())
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.emptyCall(.init(), metadata: ["x-reject": "yes"])
            }
            #expect(error?.code == .unauthenticated)
        }
        #expect(
            seen.values.withLock { $0 } == [
                "/skiff.testing.v1.TestService/EmptyCall", "/skiff.testing.v1.TestService/EmptyCall",
            ]
        )
    }
}

struct RecordingInterceptor: ServerInterceptor {
    let seen: Recorder
    func intercept(context: ServerContext, next: (ServerContext) async throws -> Void) async throws {
        seen.values.withLock { $0.append(context.descriptor.path) }
        if context.metadata.first("x-reject") != nil {
            throw RPCError(code: .unauthenticated, message: "rejected by the interceptor")
        }
        try await next(context)
    }
}

final class Recorder: Sendable {
    let values = Mutex<[String]>([])
}

final class Counter: Sendable {
    let value = Mutex(0)
}
