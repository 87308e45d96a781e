import Foundation
import Logging
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffServer
import SkiffStandardServices

/// Skiff: `Server` with the conformance `TestService`, and its generated typed client over one
/// `ClientConnection`.
enum SkiffTarget {
    /// Serves skiff/1 (`.skiff`), gRPC over HTTP/2 alone (`.skiffGRPC`: `HTTP2Protocol`) or HTTP/1.1 alone
    /// (`.skiffConnect`: `HTTP1Protocol`, answering Connect and gRPC-Web).
    static func serve(port: Int, target: Target = .skiff) async throws {
        let protocols: [any ConnectionProtocol] =
            switch target {
            case .skiffGRPC: [HTTP2Protocol()]
            case .skiffConnect: [HTTP1Protocol()]
            default: [SkiffWireProtocol()]
            }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        let server = Server(
            configuration: configuration,
            services: [TestService()],
            logger: Logger(label: "bench.skiff") { _ in SwiftLogNoOpLogHandler() },
            protocols: protocols
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let bound = try await server.listeningAddress.port ?? port
            announceListening(target, port: bound)
            try await group.next()
        }
    }

    static func withClient<R: Sendable>(
        port: Int,
        mode: Mode,
        executor: ClientExecutor,
        _ body: (SkiffBenchClient) async throws -> R
    ) async throws -> R {
        let connection = ClientConnection(target: .host("127.0.0.1", port: port))
        try await connection.connect()
        let client = SkiffBenchClient(connection: connection, mode: mode, executor: executor)
        _ = try await client.call()
        let result = try await body(client)
        await connection.close()
        return result
    }

    /// Opens `count` connections (each waits for the server's SETTINGS), runs `measure` while they are idle
    /// after `seconds`, then closes them.
    static func holdIdleConnections(
        port: Int,
        count: Int,
        seconds: Double,
        measure: () -> (peak: Double?, current: Double?)
    ) async throws -> (count: Int, peak: Double?, current: Double?) {
        let connections = (0..<count).map { _ in ClientConnection(target: .host("127.0.0.1", port: port)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, connection) in connections.enumerated() {
                if index >= 64 { try await group.next() }
                group.addTask { try await connection.connect() }
            }
            try await group.waitForAll()
        }
        try await Task.sleep(for: .seconds(seconds))
        let rss = measure()
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.close() } }
        }
        return (connections.count, rss.peak, rss.current)
    }

    struct SkiffBenchClient: BenchClient {
        let client: Skiff_Testing_V1_TestService.Client
        let mode: Mode
        let executor: (any TaskExecutor)?
        let request = Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = Workload.payloadSize }
        let streamRequest = Skiff_Testing_V1_StreamingOutputCallRequest.with {
            $0.responseParameters = Array(
                repeating: .with { $0.size = Workload.payloadSize },
                count: Workload.messagesPerCall
            )
        }

        init(connection: ClientConnection, mode: Mode, executor: ClientExecutor) {
            self.client = Skiff_Testing_V1_TestService.Client(transport: connection)
            self.mode = mode
            self.executor = executor == .loop ? connection.taskExecutor : nil
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

/// A response that is not what the workload asked for.
enum BenchError: Error {
    case badResponse
}
