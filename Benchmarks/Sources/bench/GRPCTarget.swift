import ArgumentParser
import BenchGRPC
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// The gRPC anchor: `GRPCServer` + `HTTP2ServerTransport.Posix` (plaintext) serving the same UnaryCall and
/// StreamingOutputCall semantics as Skiff's TestService, and the generated client over one
/// `HTTP2ClientTransport.Posix` connection. Both transports use the library's default configuration except for
/// flush coalescing (`--flush-coalescing`, see ``FlushCoalescing``).
enum GRPCTarget {
    static func serve(port: Int, flushCoalescing: FlushCoalescing) async throws {
        let transport = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: port),
            transportSecurity: .plaintext,
            config: .defaults {
                if flushCoalescing == .off { $0.connection.flushCoalescing = nil }
            }
        )
        let server = GRPCServer(transport: transport, services: [GRPCTestService()])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.serve() }
            let bound = try await transport.listeningAddress.ipv4?.port ?? port
            announceListening(.grpc, port: bound)
            try await group.next()
        }
    }

    static func withClient<R: Sendable>(
        port: Int,
        mode: Mode,
        flushCoalescing: FlushCoalescing,
        _ body: (GRPCBenchClient) async throws -> R
    ) async throws -> R {
        let transport = try HTTP2ClientTransport.Posix(
            target: .ipv4(host: "127.0.0.1", port: port),
            transportSecurity: .plaintext,
            config: .defaults {
                if flushCoalescing == .off { $0.connection.flushCoalescing = nil }
            }
        )
        let grpcClient = GRPCClient(transport: transport)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await grpcClient.runConnections() }
            let client = GRPCBenchClient(client: grpcClient, mode: mode)
            do {
                _ = try await client.call()
                let result = try await body(client)
                grpcClient.beginGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                grpcClient.beginGracefulShutdown()
                throw error
            }
        }
    }

    /// grpc-swift-nio-transport (2.8+) delays every flush of an HTTP/2 connection, client and server, by up to
    /// `maxFlushDelay` (100 µs by default) to batch writes: `library` keeps that default, `off` sets
    /// `connection.flushCoalescing` to `nil`, as its documentation advises for latency-sensitive, low-throughput
    /// workloads. Off is faster at 1 call in flight, the default at 64 (grpc-baseline.sh measures both); run.sh
    /// gives the baseline the better of the two for each configuration. See RESULTS.md, issue 13's second run.
    enum FlushCoalescing: String, ExpressibleByArgument, CaseIterable, Sendable {
        case off
        case library
    }

    struct GRPCBenchClient: BenchClient {
        let client: Skiff_Testing_V1_TestService.Client<HTTP2ClientTransport.Posix>
        let mode: Mode
        let request = Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = Workload.payloadSize }
        let streamRequest = Skiff_Testing_V1_StreamingOutputCallRequest.with {
            $0.responseParameters = Array(
                repeating: .with { $0.size = Workload.payloadSize },
                count: Workload.messagesPerCall
            )
        }

        init(client: GRPCClient<HTTP2ClientTransport.Posix>, mode: Mode) {
            self.client = Skiff_Testing_V1_TestService.Client(wrapping: client)
            self.mode = mode
        }

        func call() async throws -> Int {
            switch mode {
            case .unary:
                let response = try await client.unaryCall(request)
                guard response.payload.body.count == Int(Workload.payloadSize) else { throw BenchError.badResponse }
                return 1
            case .stream:
                return try await client.streamingOutputCall(streamRequest) { response in
                    var count = 0
                    for try await message in response.messages {
                        guard message.payload.body.count == Int(Workload.payloadSize) else {
                            throw BenchError.badResponse
                        }
                        count += 1
                    }
                    return count
                }
            }
        }
    }
}

/// UnaryCall and StreamingOutputCall as Skiff's `TestService` does them (no metadata echo, no status or sleep
/// requested by the workload); the other methods are unimplemented.
struct GRPCTestService: Skiff_Testing_V1_TestService.SimpleServiceProtocol {
    private func payload(size: Int32) throws -> Skiff_Testing_V1_Payload {
        guard size >= 0 else {
            throw RPCError(code: .invalidArgument, message: "response size must not be negative (got \(size))")
        }
        return .with { $0.body = Data(count: Int(size)) }
    }

    func emptyCall(request: Skiff_Testing_V1_Empty, context: ServerContext) async throws -> Skiff_Testing_V1_Empty {
        Skiff_Testing_V1_Empty()
    }

    func unaryCall(
        request: Skiff_Testing_V1_SimpleRequest,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_SimpleResponse {
        try .with {
            $0.payload = try payload(size: request.responseSize)
            $0.peerMetadata = context.remotePeer
        }
    }

    func streamingOutputCall(
        request: Skiff_Testing_V1_StreamingOutputCallRequest,
        response: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>,
        context: ServerContext
    ) async throws {
        for parameters in request.responseParameters {
            let body = try payload(size: parameters.size)
            try await response.write(.with { $0.payload = body })
        }
    }

    func streamingInputCall(
        request: RPCAsyncSequence<Skiff_Testing_V1_StreamingInputCallRequest, any Error>,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_StreamingInputCallResponse {
        throw RPCError(code: .unimplemented, message: "not part of the benchmark")
    }

    func fullDuplexCall(
        request: RPCAsyncSequence<Skiff_Testing_V1_StreamingOutputCallRequest, any Error>,
        response: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>,
        context: ServerContext
    ) async throws {
        throw RPCError(code: .unimplemented, message: "not part of the benchmark")
    }

    func unimplementedCall(
        request: Skiff_Testing_V1_Empty,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_Empty {
        throw RPCError(code: .unimplemented, message: "UnimplementedCall is never implemented.")
    }
}
