import Foundation
import SkiffCore
import SkiffGRPC
import SkiffHTTPClient
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Every call kind over each protocol, through the generated client, against a real server on
/// a real socket.
@Suite("HTTP client transport against a real server")
struct SocketTests {
    typealias Client = Skiff_Testing_V1_TestService.Client

    /// Runs `body` with a client of `callProtocol` connected to a fresh test server.
    private func withClient<R: Sendable>(
        _ callProtocol: HTTPClientProtocol,
        _ body: @Sendable (Client) async throws -> R
    ) async throws -> R {
        try await withTestServer(
            services: [TestService(), HealthService()],
            protocols: [SkiffWireProtocol(), HTTP2Protocol(), HTTP1Protocol()]
        ) { _, port in
            try await withHTTPClientTransport(host: "127.0.0.1", port: port, protocol: callProtocol) { transport in
                try await body(Client(transport: transport))
            }
        }
    }

    @Test("unary with metadata both ways", arguments: HTTPClientProtocol.allCases)
    func unaryMetadata(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            var metadata = Metadata()
            metadata.add("x-skiff-echo-initial", "hello")
            metadata.add("x-skiff-echo-trailing-bin", binary: [0, 1, 2, 0xFE, 0xFF])
            let response = try await client.transport.unary(
                Skiff_Testing_V1_TestService.Method.UnaryCall.descriptor,
                request: Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = 10 },
                options: CallOptions(metadata: metadata),
                responseType: Skiff_Testing_V1_SimpleResponse.self
            )
            #expect(response.message.payload.body.count == 10)
            #expect(response.metadata.first("x-skiff-echo-initial") == "hello")
            #expect(response.trailingMetadata.values("x-skiff-echo-trailing-bin") == [.binary([0, 1, 2, 0xFE, 0xFF])])
        }
    }

    @Test("a forced status arrives with its code and non-ASCII message", arguments: HTTPClientProtocol.allCases)
    func forcedStatus(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let message = "Café — 100% ✓ \"quoted\"\nnext line"
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.unaryCall(
                    .with {
                        $0.responseStatus.code = Int32(StatusCode.failedPrecondition.rawValue)
                        $0.responseStatus.message = message
                    }
                )
            }
            #expect(error?.code == .failedPrecondition)
            #expect(error?.message == message)
            // Streams end with it too.
            let streamed = await #expect(throws: RPCError.self) {
                try await client.streamingOutputCall(
                    .with {
                        $0.responseParameters = [.with { $0.size = 1 }]
                        $0.responseStatus.code = Int32(StatusCode.aborted.rawValue)
                        $0.responseStatus.message = message
                    }
                ) { response in try await response.messages.collect().count }
            }
            #expect(streamed?.code == .aborted)
            #expect(streamed?.message == message)
        }
    }

    @Test("a deadline that passes ends the call with DEADLINE_EXCEEDED", arguments: HTTPClientProtocol.allCases)
    func deadline(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let started = ContinuousClock.now
            let error = await #expect(throws: RPCError.self) {
                _ = try await client.unaryCall(.with { $0.sleepMs = 5_000 }, timeout: .milliseconds(200))
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(ContinuousClock.now - started < .seconds(4))
            // The connection still works.
            _ = try await client.emptyCall(.init())
        }
    }

    @Test("server, client and bidirectional streaming", arguments: HTTPClientProtocol.allCases)
    func streaming(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let sizes: [Int32] = [0, 1, 100, 70_000, 3]
            let (received, initial, trailing) = try await client.streamingOutputCall(
                .with { $0.responseParameters = sizes.map { size in .with { $0.size = size } } },
                metadata: ["x-skiff-echo-initial": "s", "x-skiff-echo-trailing-bin": .binary([9])]
            ) { response in
                let messages = try await response.messages.collect()
                return (
                    messages.map { Int32($0.payload.body.count) }, response.metadata,
                    try await response.trailingMetadata()
                )
            }
            #expect(received == sizes)
            #expect(initial.first("x-skiff-echo-initial") == "s")
            #expect(trailing.values("x-skiff-echo-trailing-bin") == [.binary([9])])

            let aggregated = try await client.streamingInputCall { writer in
                for size in [1, 10, 100_000] {
                    try await writer.write(.with { $0.payload.body = Data(count: size) })
                }
            }
            #expect(aggregated.aggregatedPayloadSize == 100_011)

            // Each response is read before the next request is written: the streams interleave.
            // (The server sends its HEADERS with the first response, so the first request goes first.)
            let (requests, responses) = AsyncStream.makeStream(of: Int32.self)
            responses.yield(5)
            let echoed = try await client.fullDuplexCall { writer in
                for await size in requests {
                    try await writer.write(.with { $0.responseParameters = [.with { $0.size = size }] })
                }
            } onResponse: { response in
                var sizes: [Int] = []
                for try await message in response.messages {
                    sizes.append(message.payload.body.count)
                    if sizes.count < 4 { responses.yield(Int32(5 + sizes.count)) } else { responses.finish() }
                }
                return sizes
            }
            #expect(echoed == [5, 6, 7, 8])
        }
    }

    @Test("UnimplementedCall and an unknown method end with UNIMPLEMENTED", arguments: HTTPClientProtocol.allCases)
    func unimplemented(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let error = await #expect(throws: RPCError.self) { _ = try await client.unimplementedCall(.init()) }
            #expect(error?.code == .unimplemented)
            let unknown = await #expect(throws: RPCError.self) {
                _ = try await client.transport.unary(
                    MethodDescriptor(service: "skiff.testing.v1.TestService", method: "NoSuchCall", kind: .unary),
                    request: Skiff_Testing_V1_Empty(),
                    options: .defaults,
                    responseType: Skiff_Testing_V1_Empty.self
                )
            }
            #expect(unknown?.code == .unimplemented)
        }
    }

    @Test(
        "cancelling the calling task ends a long stream; the connection stays usable",
        arguments: HTTPClientProtocol.allCases
    )
    func cancellation(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let firstMessage = AsyncStream.makeStream(of: Void.self)
            let call = Task {
                try await client.streamingOutputCall(
                    .with {
                        // 1,000 messages 100 ms apart: far longer than the test.
                        $0.responseParameters = (0..<1_000).map { _ in
                            .with {
                                $0.size = 8
                                $0.intervalUs = 100_000
                            }
                        }
                    }
                ) { response in
                    var count = 0
                    for try await _ in response.messages {
                        count += 1
                        firstMessage.continuation.yield()
                    }
                    return count
                }
            }
            for await _ in firstMessage.stream { break }
            let started = ContinuousClock.now
            call.cancel()
            let result = await call.result
            #expect(ContinuousClock.now - started < .seconds(3))
            #expect(throws: (any Error).self) { try result.get() }
            if case .failure(let error as RPCError) = result { #expect(error.code == .cancelled) }
            _ = try await client.emptyCall(.init())
        }
    }

    @Test("a 3 MiB message each way", arguments: HTTPClientProtocol.allCases)
    func largeMessage(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            let size = 3 * 1024 * 1024
            let response = try await client.unaryCall(
                .with {
                    $0.payload.body = Data(repeating: 7, count: size)
                    $0.responseSize = Int32(size)
                }
            )
            #expect(response.payload.body.count == size)
        }
    }

    @Test("many concurrent calls share the connection", arguments: HTTPClientProtocol.allCases)
    func concurrentCalls(_ callProtocol: HTTPClientProtocol) async throws {
        try await withClient(callProtocol) { client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await client.unaryCall(.with { $0.responseSize = Int32(index) }).payload.body.count
                    }
                }
                var total = 0
                for try await count in group { total += count }
                #expect(total == (0..<200).reduce(0, +))
            }
        }
    }

    @Test("a refused connection is UNAVAILABLE")
    func refused() async throws {
        // A port that was free a moment ago.
        let port = try await withTestServer { _, port in port }
        let error = await #expect(throws: RPCError.self) {
            try await withHTTPClientTransport(host: "127.0.0.1", port: port, protocol: .grpc) { _ in }
        }
        #expect(error?.code == .unavailable)
    }
}
