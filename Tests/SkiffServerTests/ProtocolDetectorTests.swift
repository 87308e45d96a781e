import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import NIOTLS
import SkiffClient
import SkiffCore
import SkiffStandardServices
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

@testable import SkiffServer

/// A toy line protocol, registered the way any protocol plugin is: a client sends `PING\n` and gets
/// `PONG\n`, until the server drains (then `BYE\n` and close).
struct PingProtocol: ConnectionProtocol {
    var name: String { "ping/1" }

    func recognize(_ prefix: ByteBufferView) -> ProtocolRecognition {
        let word = Array("PING".utf8)
        let head = Array(prefix.prefix(word.count))
        guard head == Array(word.prefix(head.count)) else { return .noMatch }
        return head.count == word.count ? .match : .needMoreBytes
    }

    func configure(_ channel: any Channel, context: ConnectionContext) throws {
        try channel.pipeline.syncOperations.addHandler(PingHandler())
    }

    func refuse(_ channel: any Channel, reason: String, context: ConnectionContext) throws {
        try channel.pipeline.syncOperations.addHandler(PingRefuser())
    }

    final class PingHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var pending = ""

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            pending += String(buffer: unwrapInboundIn(data))
            while let newline = pending.firstIndex(of: "\n") {
                let line = pending[..<newline]
                pending = String(pending[pending.index(after: newline)...])
                if line == "PING" {
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "PONG\n")), promise: nil)
                }
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "BYE\n"))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    final class PingRefuser: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "BUSY\n"))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }
}

@Suite("Protocol detection on a listener that serves several protocols")
struct ProtocolDetectorTests {
    final class Chosen: Sendable {
        let names = Mutex<[String]>([])
    }

    static func detector(_ chosen: Chosen, prefaceTimeout: Duration = .seconds(10)) -> ProtocolDetector {
        var configuration = ServerConfiguration()
        configuration.prefaceTimeout = prefaceTimeout
        let context = ConnectionContext(
            configuration: configuration,
            router: RPCRouter(),
            interceptors: [],
            logger: quietLogger,
            observer: ServerObserver()
        )
        return ProtocolDetector(protocols: [SkiffWireProtocol(), PingProtocol()], context: context) {
            chosen_,
            channel in
            chosen.names.withLock { $0.append(chosen_.name) }
            // A stand-in for the protocol's handlers: records what reaches it.
            try channel.pipeline.syncOperations.addHandler(Recorder())
        }
    }

    final class Recorder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var received = ByteBuffer()
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
        }
    }

    static func received(_ channel: EmbeddedChannel) throws -> [UInt8] {
        let recorder = try channel.pipeline.syncOperations.handler(type: Recorder.self)
        return Array(recorder.received.readableBytesView)
    }

    @Test("the skiff/1 preface's first byte picks skiff/1; every byte held reaches its handlers, in order")
    func skiffByFirstByte() throws {
        let chosen = Chosen()
        let channel = EmbeddedChannel(handler: Self.detector(chosen))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(bytes: [0x89, 0x53]))
        try channel.writeInbound(ByteBuffer(bytes: [0x4B, 0x46]))
        #expect(chosen.names.withLock { $0 } == ["skiff/1"])
        #expect(try Self.received(channel) == [0x89, 0x53, 0x4B, 0x46])
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: ProtocolDetector.self) }
        #expect(channel.isActive)
    }

    @Test("a protocol that needs more bytes is asked again; its bytes arrive whole")
    func needsMoreBytes() throws {
        let chosen = Chosen()
        let channel = EmbeddedChannel(handler: Self.detector(chosen))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        for byte in "PIN".utf8 { try channel.writeInbound(ByteBuffer(bytes: [byte])) }
        #expect(chosen.names.withLock { $0 }.isEmpty)
        try channel.writeInbound(ByteBuffer(string: "G\n"))
        #expect(chosen.names.withLock { $0 } == ["ping/1"])
        #expect(try Self.received(channel) == Array("PING\n".utf8))
    }

    @Test("bytes no protocol recognizes close the connection without an answer")
    func unrecognized() throws {
        let channel = EmbeddedChannel(handler: Self.detector(Chosen()))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n"))
        #expect(!channel.isActive)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test("a connection that sends nothing recognizable is closed at the preface timeout")
    func prefaceTimeout() throws {
        let channel = EmbeddedChannel(handler: Self.detector(Chosen(), prefaceTimeout: .seconds(2)))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "PI"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test("the ALPN name agreed under TLS picks the protocol before any byte")
    func alpn() throws {
        let chosen = Chosen()
        let channel = EmbeddedChannel(handler: Self.detector(chosen))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "ping/1"))
        #expect(chosen.names.withLock { $0 } == ["ping/1"])
        try channel.writeInbound(ByteBuffer(bytes: [0x89]))  // now the chosen protocol's, whatever it is
        #expect(try Self.received(channel) == [0x89])
    }

    @Test("a drain before the protocol is known closes the connection")
    func drainWhileUndecided() throws {
        let channel = EmbeddedChannel(handler: Self.detector(Chosen()))
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!channel.isActive)
    }
}

@Suite("A server with two protocols on one port")
struct MultiProtocolServerTests {
    /// Sends `text` on a new TCP connection and returns everything the server sends until it closes
    /// or `lines` lines have arrived.
    static func exchange(_ text: String, port: Int, lines: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: text))
            var response = ""
            for try await chunk in inbound {
                response += String(buffer: chunk)
                if response.filter({ $0 == "\n" }).count >= lines { break }
            }
            return response
        }
    }

    @Test("skiff/1 clients and a plugin protocol's clients share the port; other bytes are closed; drain reaches both")
    func twoProtocols() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.drainGracePeriod = .seconds(5)
        let server = Server(
            configuration: configuration,
            services: [TestService()],
            logger: quietLogger,
            protocols: [SkiffWireProtocol(), PingProtocol()]
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let port = try await server.listeningAddress.port!
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                _ = try await client.emptyCall(.init())
                #expect(try await Self.exchange("PING\nPING\n", port: port, lines: 2) == "PONG\nPONG\n")
                #expect(try await Self.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n", port: port, lines: 1) == "")
                _ = try await client.unaryCall(.with { $0.responseSize = 10 })
            }
            // A ping client connected when the drain starts hears BYE; run() returns once all closed.
            let pinger = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            try await pinger.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: "PING\n"))
                var iterator = inbound.makeAsyncIterator()
                var heard = ""
                while !heard.contains("PONG\n") { heard += String(buffer: try await iterator.next()!) }
                server.beginGracefulShutdown()
                while let chunk = try await iterator.next() { heard += String(buffer: chunk) }
                #expect(heard == "PONG\nBYE\n")
            }
            // run() returns once every connection has closed (the test's own limit guards a hang).
            try await group.next()
        }
    }

    @Test("an attacker that sends half a protocol's first bytes and then nothing is closed at the preface timeout")
    func slowFirstBytes() async throws {
        try await withTestServer(
            protocols: [SkiffWireProtocol(), PingProtocol()],
            configure: { $0.prefaceTimeout = .milliseconds(300) }
        ) { _, port in
            let attacker = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            // "PI" could still become "PING": the server waits, but only until the preface timeout.
            let heard = try await withTimeout(.seconds(10)) {
                try await attacker.executeThenClose { inbound, outbound in
                    try await outbound.write(ByteBuffer(string: "PI"))
                    var heard = ""
                    for try await chunk in inbound { heard += String(buffer: chunk) }
                    return heard
                }
            }
            #expect(heard == "")
            // Other connections carry on.
            #expect(try await Self.exchange("PING\n", port: port, lines: 1) == "PONG\n")
        }
    }

    @Test("under TLS the ALPN name picks skiff/1 on a two-protocol listener, and the server speaks at once")
    func alpnOverTLS() async throws {
        let (cert, key) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: cert).deletingLastPathComponent()) }
        let tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        try await withTestServer(protocols: [PingProtocol(), SkiffWireProtocol()], configure: { $0.tls = tls }) {
            _,
            port in
            // A TLS client that agrees on ALPN skiff/1 and sends nothing: the server's preface comes
            // at once (on plaintext, a two-protocol listener would wait for the client's first byte).
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.trustRoots = .file(cert)
            tlsConfiguration.applicationProtocols = ["skiff/1"]
            let sslContext = try NIOSSLContext(configuration: tlsConfiguration)
            let silent = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: sslContext, serverHostname: "localhost")
                        )
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            let first = try await withTimeout(.seconds(10)) {
                try await silent.executeThenClose { inbound, _ in
                    var iterator = inbound.makeAsyncIterator()
                    return try await iterator.next().map { Array($0.readableBytesView.prefix(4)) }
                }
            }
            #expect(first == [0x89, 0x53, 0x4B, 0x46])
            let client = ClientConfiguration(tls: .trustRootsPEMFile(cert, serverHostname: "localhost"))
            try await withClientConnection(target: .host("localhost", port: port), configuration: client) {
                connection in
                let response = try await TestClient(transport: connection).unaryCall(.with { $0.responseSize = 1_000 })
                #expect(response.payload.body.count == 1_000)
            }
        }
    }
}
