import BenchGRPC
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SwiftProtobuf

/// Connect unary over HTTP/1.1 against Skiff's `HTTP1Protocol`: `POST /skiff.testing.v1.TestService/UnaryCall`,
/// `content-type: application/proto`, the body the `SimpleRequest`'s bytes, the response body the `SimpleResponse`'s.
/// HTTP/1.1 does not multiplex, so the client opens one keep-alive connection per call in flight (NIOHTTP1 client
/// pipeline, `TCP_NODELAY`), each carrying one request at a time; a call borrows an idle connection and returns it.
enum ConnectTarget {
    static let path = "/skiff.testing.v1.TestService/UnaryCall"

    static func withClient<R: Sendable>(
        port: Int,
        mode: Mode,
        connections: Int,
        _ body: (ConnectBenchClient) async throws -> R
    ) async throws -> R {
        guard mode == .unary else { throw ConnectBenchError.unaryOnly }
        var channels: [any Channel] = []
        do {
            for _ in 0..<connections {
                channels.append(try await connect(port: port))
            }
            let client = try await ConnectBenchClient(channels: channels, port: port)
            _ = try await client.call()
            let result = try await body(client)
            for channel in channels { try? await channel.close() }
            return result
        } catch {
            for channel in channels { try? await channel.close() }
            throw error
        }
    }

    private static func connect(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ConnectClientHandler())
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
    }

    /// The borrowed connection's handler, bound to its event loop.
    struct Connection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<ConnectClientHandler>
    }

    struct ConnectBenchClient: BenchClient {
        /// Idle connections; the closed loop never has more calls in flight than connections.
        let idle: NIOLockedValueBox<[Connection]>
        let host: String

        init(channels: [any Channel], port: Int) async throws {
            var connections: [Connection] = []
            for channel in channels {
                let handler = try await channel.eventLoop.submit {
                    NIOLoopBound(
                        try channel.pipeline.syncOperations.handler(type: ConnectClientHandler.self),
                        eventLoop: channel.eventLoop
                    )
                }.get()
                connections.append(Connection(channel: channel, handler: handler))
            }
            self.idle = NIOLockedValueBox(connections)
            self.host = "127.0.0.1:\(port)"
        }

        func call() async throws -> Int {
            guard let connection = idle.withLockedValue({ $0.popLast() }) else {
                throw ConnectBenchError.noIdleConnection
            }
            defer { idle.withLockedValue { $0.append(connection) } }
            // Encoded per call, as the other clients do.
            let bytes: [UInt8] = try Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = Workload.payloadSize }
                .serializedBytes()
            let handler = connection.handler
            let host = self.host
            let body = try await connection.channel.eventLoop.flatSubmit {
                handler.value.start(host: host, body: bytes)
            }.get()
            let response = try body.withUnsafeReadableBytes { raw in
                try Skiff_Testing_V1_SimpleResponse(serializedBytes: Data(raw))
            }
            guard response.payload.body.count == Int(Workload.payloadSize) else { throw BenchError.badResponse }
            return 1
        }
    }
}

enum ConnectBenchError: Error {
    case unaryOnly
    case noIdleConnection
    case busy
    case status(HTTPResponseStatus)
    case closed
}

/// One request at a time on one HTTP/1.1 connection: writes the request, collects the response body.
final class ConnectClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private var context: ChannelHandlerContext?
    private var promise: EventLoopPromise<ByteBuffer>?
    private var status: HTTPResponseStatus = .ok
    private var body: ByteBuffer?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        fail(ConnectBenchError.closed)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ConnectBenchError.closed)
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error) {
        let promise = self.promise
        self.promise = nil
        promise?.fail(error)
    }

    func start(host: String, body bytes: [UInt8]) -> EventLoopFuture<ByteBuffer> {
        guard let context else {
            return MultiThreadedEventLoopGroup.singleton.any().makeFailedFuture(ConnectBenchError.closed)
        }
        guard promise == nil else { return context.eventLoop.makeFailedFuture(ConnectBenchError.busy) }
        let promise = context.eventLoop.makePromise(of: ByteBuffer.self)
        self.promise = promise
        body = nil
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: ConnectTarget.path)
        head.headers.add(name: "host", value: host)
        head.headers.add(name: "content-type", value: "application/proto")
        head.headers.add(name: "connect-protocol-version", value: "1")
        head.headers.add(name: "content-length", value: String(bytes.count))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body(var part):
            if body == nil {
                body = part
            } else {
                body!.writeBuffer(&part)
            }
        case .end:
            let promise = self.promise
            self.promise = nil
            if status == .ok {
                promise?.succeed(body ?? context.channel.allocator.buffer(capacity: 0))
            } else {
                promise?.fail(ConnectBenchError.status(status))
            }
            body = nil
        }
    }
}
