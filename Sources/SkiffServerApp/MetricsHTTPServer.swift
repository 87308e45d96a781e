public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix
public import Prometheus
public import ServiceLifecycle

/// Serves the Prometheus text exposition of the metrics registry on `GET /metrics`.
public struct MetricsHTTPServer: Service {
    let host: String
    let port: Int
    let registry: PrometheusCollectorRegistry
    let logger: Logger
    let onBound: @Sendable (SocketAddress) -> Void

    /// Creates the endpoint; `onBound` learns the bound address (port 0 picks a free port).
    public init(
        host: String,
        port: Int,
        registry: PrometheusCollectorRegistry,
        logger: Logger,
        onBound: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.registry = registry
        self.logger = logger
        self.onBound = onBound
    }

    public func run() async throws {
        let registry = self.registry
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(registry: registry))
                }
            }
            .bind(host: host, port: port).get()
        logger.info("metrics listening", metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        if let address = channel.localAddress { onBound(address) }
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}

private final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let registry: PrometheusCollectorRegistry
    private var path = ""

    init(registry: PrometheusCollectorRegistry) { self.registry = registry }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): path = head.uri
        case .body: break
        case .end:
            let found = path == "/metrics" || path == "/"
            var body = context.channel.allocator.buffer(capacity: 4096)
            if found {
                var bytes: [UInt8] = []
                registry.emit(into: &bytes)
                body.writeBytes(bytes)
            } else {
                body.writeString("not found\n")
            }
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: "text/plain; version=0.0.4")
            headers.add(name: "content-length", value: "\(body.readableBytes)")
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers))
                ),
                promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            // One response per connection: scrapers reconnect, and nothing is left half-open.
            let context = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.value.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                context.value.close(promise: nil)
            }
        }
    }
}
