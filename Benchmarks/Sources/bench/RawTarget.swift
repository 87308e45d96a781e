import BenchGRPC
import Foundation
import NIOCore
import NIOExtras
import NIOPosix
import SwiftProtobuf

/// The raw floor, as in the anchors' `nio-raw`: a plain SwiftNIO server on the singleton group. Frame = u32 BE
/// length, then u64 BE request id, u8 kind, protobuf bytes. The server decodes the request with swift-protobuf,
/// builds and encodes the same responses as the TestService (one frame per message), and flushes once per read
/// batch. The client pipelines every call on one connection and correlates responses by request id; calls are
/// `async` (promise + `await`), so the same load loop drives it as the others.
enum RawTarget {
    /// Frame kinds.
    enum Kind: UInt8 {
        case unaryRequest = 0
        case streamRequest = 1
        case unaryResponse = 2
        case streamMessage = 3
        case streamEnd = 4
        case error = 5
    }

    static func serve(port: Int) async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes))
                    )
                    try channel.pipeline.syncOperations.addHandler(RawServerHandler())
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        announceListening(.raw, port: channel.localAddress?.port ?? port)
        try await channel.closeFuture.get()
    }

    static func withClient<R: Sendable>(
        port: Int,
        mode: Mode,
        _ body: (RawBenchClient) async throws -> R
    ) async throws -> R {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes))
                    )
                    try channel.pipeline.syncOperations.addHandler(RawClientHandler())
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(
                try channel.pipeline.syncOperations.handler(type: RawClientHandler.self),
                eventLoop: channel.eventLoop
            )
        }.get()
        let client = try RawBenchClient(channel: channel, handler: handler, mode: mode)
        do {
            _ = try await client.call()
            let result = try await body(client)
            try? await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
        }
    }

    struct RawBenchClient: BenchClient {
        let channel: any Channel
        let handler: NIOLoopBound<RawClientHandler>
        let kind: Kind

        init(channel: any Channel, handler: NIOLoopBound<RawClientHandler>, mode: Mode) throws {
            self.channel = channel
            self.handler = handler
            self.kind = mode == .unary ? .unaryRequest : .streamRequest
        }

        func call() async throws -> Int {
            // Encoded per call, as the other clients do.
            let bytes: [UInt8]
            switch kind {
            case .unaryRequest:
                bytes = try Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = Workload.payloadSize }
                    .serializedBytes()
            default:
                bytes = try Skiff_Testing_V1_StreamingOutputCallRequest.with {
                    $0.responseParameters = Array(
                        repeating: .with { $0.size = Workload.payloadSize },
                        count: Workload.messagesPerCall
                    )
                }.serializedBytes()
            }
            let handler = self.handler
            let kind = self.kind
            return try await channel.eventLoop.flatSubmit {
                handler.value.start(kind: kind, payload: bytes)
            }.get()
        }
    }
}

/// Decodes a message from the readable bytes without copying them first.
private func decode<M: Message>(_ type: M.Type, from buffer: ByteBuffer) throws -> M {
    try buffer.withUnsafeReadableBytes { raw in
        guard let base = raw.baseAddress, raw.count > 0 else { return M() }
        let bytes = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: raw.count, deallocator: .none)
        return try M(serializedBytes: bytes)
    }
}

/// Writes one frame: length, id, kind, payload.
private func writeFrame(
    into buffer: inout ByteBuffer,
    id: UInt64,
    kind: RawTarget.Kind,
    payload: some Message
) throws {
    let lengthIndex = buffer.writerIndex
    buffer.writeInteger(UInt32(0))
    buffer.writeInteger(id)
    buffer.writeInteger(kind.rawValue)
    let bytes: [UInt8] = try payload.serializedBytes()
    buffer.writeBytes(bytes)
    buffer.setInteger(UInt32(buffer.writerIndex - lengthIndex - 4), at: lengthIndex)
}

final class RawServerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var peer = ""
    private var pendingWrites = false

    func channelActive(context: ChannelHandlerContext) {
        peer = context.remoteAddress.map { "\($0)" } ?? ""
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        guard let id = frame.readInteger(as: UInt64.self), let rawKind = frame.readInteger(as: UInt8.self),
            let kind = RawTarget.Kind(rawValue: rawKind)
        else {
            context.close(promise: nil)
            return
        }
        var out = context.channel.allocator.buffer(capacity: 512)
        do {
            switch kind {
            case .unaryRequest:
                let request = try decode(Skiff_Testing_V1_SimpleRequest.self, from: frame)
                let response = try Skiff_Testing_V1_SimpleResponse.with {
                    $0.payload = try Self.payload(size: request.responseSize)
                    $0.peerMetadata = peer
                }
                try writeFrame(into: &out, id: id, kind: .unaryResponse, payload: response)
                context.write(wrapOutboundOut(out), promise: nil)
            case .streamRequest:
                let request = try decode(Skiff_Testing_V1_StreamingOutputCallRequest.self, from: frame)
                for parameters in request.responseParameters {
                    var message = context.channel.allocator.buffer(capacity: 300)
                    let response = Skiff_Testing_V1_StreamingOutputCallResponse.with {
                        $0.payload = (try? Self.payload(size: parameters.size)) ?? .init()
                    }
                    try writeFrame(into: &message, id: id, kind: .streamMessage, payload: response)
                    context.write(wrapOutboundOut(message), promise: nil)
                }
                try writeFrame(into: &out, id: id, kind: .streamEnd, payload: Skiff_Testing_V1_Empty())
                context.write(wrapOutboundOut(out), promise: nil)
            default:
                try writeFrame(into: &out, id: id, kind: .error, payload: Skiff_Testing_V1_Empty())
                context.write(wrapOutboundOut(out), promise: nil)
            }
        } catch {
            out.clear()
            try? writeFrame(into: &out, id: id, kind: .error, payload: Skiff_Testing_V1_Empty())
            context.write(wrapOutboundOut(out), promise: nil)
        }
        pendingWrites = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if pendingWrites {
            pendingWrites = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private static func payload(size: Int32) throws -> Skiff_Testing_V1_Payload {
        guard size >= 0 else { throw BenchError.badResponse }
        return .with { $0.body = Data(count: Int(size)) }
    }
}

final class RawClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        var promise: EventLoopPromise<Int>
        var messages = 0
    }

    private var nextID: UInt64 = 0
    private var pending: [UInt64: Pending] = [:]
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        failAll()
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll()
        context.fireChannelInactive()
    }

    private func failAll() {
        let all = pending
        pending = [:]
        for entry in all.values { entry.promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Sends one request; the future completes with the number of response messages.
    func start(kind: RawTarget.Kind, payload: [UInt8]) -> EventLoopFuture<Int> {
        guard let context else {
            return MultiThreadedEventLoopGroup.singleton.any().makeFailedFuture(BenchError.badResponse)
        }
        nextID &+= 1
        let id = nextID
        let promise = context.eventLoop.makePromise(of: Int.self)
        pending[id] = Pending(promise: promise)
        var buffer = context.channel.allocator.buffer(capacity: payload.count + 13)
        buffer.writeInteger(UInt32(payload.count + 9))
        buffer.writeInteger(id)
        buffer.writeInteger(kind.rawValue)
        buffer.writeBytes(payload)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        guard let id = frame.readInteger(as: UInt64.self), let rawKind = frame.readInteger(as: UInt8.self),
            let kind = RawTarget.Kind(rawValue: rawKind), var entry = pending[id]
        else { return }
        do {
            switch kind {
            case .unaryResponse:
                let response = try decode(Skiff_Testing_V1_SimpleResponse.self, from: frame)
                pending[id] = nil
                if response.payload.body.count == Int(Workload.payloadSize) {
                    entry.promise.succeed(1)
                } else {
                    entry.promise.fail(BenchError.badResponse)
                }
            case .streamMessage:
                let message = try decode(Skiff_Testing_V1_StreamingOutputCallResponse.self, from: frame)
                guard message.payload.body.count == Int(Workload.payloadSize) else { throw BenchError.badResponse }
                entry.messages += 1
                pending[id] = entry
            case .streamEnd:
                pending[id] = nil
                entry.promise.succeed(entry.messages)
            default:
                throw BenchError.badResponse
            }
        } catch {
            pending[id] = nil
            entry.promise.fail(error)
        }
    }
}

extension RawTarget {
    /// The anchors' event-loop-driven raw client (`nio-raw`, pipelined): one connection, `concurrency` slots,
    /// each sending its next request from the callback of its previous response; one flush per read batch.
    /// Requests are encoded per call, as the other clients do. Latencies are measured on the event loop.
    static func runEventLoopClient(port: Int, mode: Mode, settings: LoopSettings) async throws -> LoopResult {
        let now = NIODeadline.now()
        let measureFrom = now + .nanoseconds(Int64(settings.warmup * 1e9))
        let end = measureFrom + .nanoseconds(Int64(min(settings.duration, 1e6) * 1e9))
        let plan = RawEventLoopClientHandler.Plan(
            kind: mode == .unary ? .unaryRequest : .streamRequest,
            slots: settings.concurrency,
            measureFrom: measureFrom,
            end: end,
            maxCalls: settings.maxCalls
        )
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes))
                    )
                    try channel.pipeline.syncOperations.addHandler(RawEventLoopClientHandler(plan: plan))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        let result = try await channel.eventLoop.flatSubmit {
            do {
                return try channel.pipeline.syncOperations.handler(type: RawEventLoopClientHandler.self).run()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
        try? await channel.close()
        return result
    }
}

/// See ``RawTarget/runEventLoopClient(port:mode:settings:)``.
final class RawEventLoopClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Plan: Sendable {
        var kind: RawTarget.Kind
        var slots: Int
        var measureFrom: NIODeadline
        var end: NIODeadline
        var maxCalls: Int?
    }

    private struct Pending {
        var started: NIODeadline
        var messages = 0
    }

    private let plan: Plan
    private var context: ChannelHandlerContext?
    private var nextID: UInt64 = 0
    private var pending: [UInt64: Pending] = [:]
    private var callsLeft: Int
    private var result = LoopResult()
    private var firstStart: NIODeadline?
    private var promise: EventLoopPromise<LoopResult>?
    private var needsFlush = false

    init(plan: Plan) {
        self.plan = plan
        self.callsLeft = plan.maxCalls ?? Int.max
        result.latencies.reserveCapacity(1 << 20)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Starts every slot; the future completes when the last call has come back.
    func run() -> EventLoopFuture<LoopResult> {
        guard let context else {
            return MultiThreadedEventLoopGroup.singleton.any().makeFailedFuture(BenchError.badResponse)
        }
        let promise = context.eventLoop.makePromise(of: LoopResult.self)
        self.promise = promise
        firstStart = .now()
        for _ in 0..<plan.slots { sendNext(context: context) }
        context.flush()
        finishIfDone()
        return promise.futureResult
    }

    private func sendNext(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        guard now < plan.end, callsLeft > 0 else { return }
        callsLeft -= 1
        let bytes: [UInt8]
        switch plan.kind {
        case .unaryRequest:
            bytes =
                (try? Skiff_Testing_V1_SimpleRequest.with { $0.responseSize = Workload.payloadSize }
                    .serializedBytes()) ?? []
        default:
            bytes =
                (try? Skiff_Testing_V1_StreamingOutputCallRequest.with {
                    $0.responseParameters = Array(
                        repeating: .with { $0.size = Workload.payloadSize },
                        count: Workload.messagesPerCall
                    )
                }.serializedBytes()) ?? []
        }
        nextID &+= 1
        pending[nextID] = Pending(started: now)
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 13)
        buffer.writeInteger(UInt32(bytes.count + 9))
        buffer.writeInteger(nextID)
        buffer.writeInteger(plan.kind.rawValue)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
        needsFlush = true
    }

    private func complete(_ entry: Pending, failed: Bool, context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        let counted = plan.maxCalls != nil || (now >= plan.measureFrom && now <= plan.end)
        if counted {
            if failed {
                result.errors += 1
            } else {
                result.calls += 1
                result.messages += entry.messages
                if plan.maxCalls != nil || entry.started >= plan.measureFrom {
                    result.latencies.append(
                        now.uptimeNanoseconds > entry.started.uptimeNanoseconds
                            ? Int64(now.uptimeNanoseconds - entry.started.uptimeNanoseconds) : 0
                    )
                }
            }
        }
        sendNext(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        guard let id = frame.readInteger(as: UInt64.self), let rawKind = frame.readInteger(as: UInt8.self),
            let kind = RawTarget.Kind(rawValue: rawKind), var entry = pending[id]
        else { return }
        switch kind {
        case .unaryResponse:
            pending[id] = nil
            let ok =
                (try? decode(Skiff_Testing_V1_SimpleResponse.self, from: frame))
                .map { $0.payload.body.count == Int(Workload.payloadSize) } ?? false
            entry.messages = 1
            complete(entry, failed: !ok, context: context)
        case .streamMessage:
            let ok =
                (try? decode(Skiff_Testing_V1_StreamingOutputCallResponse.self, from: frame))
                .map { $0.payload.body.count == Int(Workload.payloadSize) } ?? false
            if ok {
                entry.messages += 1
                pending[id] = entry
            } else {
                pending[id] = nil
                complete(entry, failed: true, context: context)
            }
        case .streamEnd:
            pending[id] = nil
            complete(entry, failed: false, context: context)
        default:
            pending[id] = nil
            complete(entry, failed: true, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        finishIfDone()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
        context.fireChannelInactive()
    }

    private func finishIfDone() {
        guard pending.isEmpty, let promise else { return }
        self.promise = nil
        if let firstStart {
            result.elapsedSeconds = Double((NIODeadline.now() - firstStart).nanoseconds) / 1e9
        }
        result.latencies.sort()
        promise.succeed(result)
    }
}
