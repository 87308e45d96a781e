import Foundation
import NIOCore
import NIOPosix
import SkiffClient
import SkiffCore
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

typealias Text = Google_Protobuf_StringValue
typealias Blob = Google_Protobuf_BytesValue

let unaryMethod = MethodDescriptor(service: "skiff.testing.v1.TestService", method: "UnaryCall", kind: .unary)
let bidiMethod = MethodDescriptor(
    service: "skiff.testing.v1.TestService",
    method: "FullDuplexCall",
    kind: .bidirectionalStreaming
)

/// A script answering every finished request with its own messages (echo).
let echoScript: FakeServer.Script = { connection, frame in
    guard frame.endsClientSide else { return }
    let id = frame.streamID
    var headers = Metadata()
    if let value = connection.metadata[id]?.first("x-in") { headers.add("x-echo", value) }
    connection.respond(
        stream: id,
        headers: headers,
        messages: connection.messages[id] ?? [],
        trailers: ["x-trailer": "t"]
    )
}

func text(_ value: String) -> Text {
    var message = Text()
    message.value = value
    return message
}

func blob(count: Int) -> Blob {
    var message = Blob()
    message.value = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    return message
}

@Suite("ClientConnection against a scripted server")
struct ClientConnectionTests {
    @Test func unaryRoundTripWithMetadata() async throws {
        let server = try await FakeServer.start(script: echoScript)
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let response = try await connection.unary(
                    unaryMethod,
                    request: text("hello"),
                    options: CallOptions(metadata: ["x-in": "abc"]),
                    responseType: Text.self
                )
                #expect(response.message.value == "hello")
                #expect(response.metadata.first("x-echo") == "abc")
                #expect(response.trailingMetadata.first("x-trailer") == "t")
            }
        }
        try await server.waitFor { $0.contains { $0.frame.type == .settings && $0.frame.flags.contains(.ack) } }
        let frames = server.frames.map(\.frame)
        let headers = try #require(frames.first { $0.type == .headers })
        #expect(headers.streamID == 1)
        let (path, decoded) = try FramePayload.headers(headers)
        #expect(path == "/skiff.testing.v1.TestService/UnaryCall")
        #expect(decoded.metadata.first("x-in") == "abc")
        #expect(decoded.metadata.first("grpc-timeout") == nil)
        let message = try #require(frames.first { $0.type == .message })
        #expect(message.flags == .endStream)
        // Client SETTINGS and the ACK of the server's.
        #expect(frames.contains { $0.type == .settings && !$0.flags.contains(.ack) })
        #expect(frames.contains { $0.type == .settings && $0.flags.contains(.ack) })
        try await server.close()
    }

    @Test func manyConcurrentUnaryCallsOnOneConnection() async throws {
        let server = try await FakeServer.start(script: echoScript)
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<200 {
                        group.addTask {
                            let response = try await connection.unary(
                                unaryMethod,
                                request: text("m\(i)"),
                                options: .defaults,
                                responseType: Text.self
                            )
                            #expect(response.message.value == "m\(i)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        #expect(server.connectionCount == 1)
        try await server.close()
    }

    @Test func trailersOnlyErrorBecomesRPCError() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            connection.send {
                $0.writeTrailers(
                    streamID: frame.streamID,
                    status: .notFound,
                    message: "nope ✓",
                    metadata: ["x-why": "because"]
                )
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: text("x"),
                        options: .defaults,
                        responseType: Text.self
                    )
                }
                #expect(error?.code == .notFound)
                #expect(error?.message == "nope ✓")
                #expect(error?.metadata.first("x-why") == "because")
            }
        }
        try await server.close()
    }

    @Test func fragmentedResponseIsReassembled() async throws {
        let expected = blob(count: 40_000)
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            var bytes = try! expected.serializedBuffer()
            let first = bytes.readSlice(length: 15_000)!
            let second = bytes.readSlice(length: 15_000)!
            connection.send {
                $0.writeHeaders(streamID: frame.streamID, metadata: [:])
                $0.writeMessageFrame(streamID: frame.streamID, flags: .more, bytes: first)
                $0.writeMessageFrame(streamID: frame.streamID, flags: .more, bytes: second)
                $0.writeMessageFrame(streamID: frame.streamID, flags: [], bytes: bytes)
                $0.writeTrailers(streamID: frame.streamID, status: .ok, message: "", metadata: [:])
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let response = try await connection.unary(
                    unaryMethod,
                    request: text("x"),
                    options: .defaults,
                    responseType: Blob.self
                )
                #expect(response.message == expected)
            }
        }
        try await server.close()
    }

    @Test func requestIsFragmentedToServerMaxFrameSize() async throws {
        let server = try await FakeServer.start(settings: [(.maxFrameSize, 16_384)], script: echoScript)
        let port = server.port
        let request = blob(count: 50_000)
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                let response = try await connection.unary(
                    unaryMethod,
                    request: request,
                    options: .defaults,
                    responseType: Blob.self
                )
                #expect(response.message == request)
            }
        }
        let messages = server.frames.map(\.frame).filter { $0.type == .message }
        #expect(messages.count == 4)
        #expect(messages.allSatisfy { $0.payload.readableBytes <= 16_384 })
        #expect(messages.dropLast().allSatisfy { $0.flags == .more })
        #expect(messages.last?.flags == .endStream)
        try await server.close()
    }

    @Test func refusedStreamIsRetriedTransparently() async throws {
        let server = try await FakeServer.start { connection, frame in
            if frame.type == .headers, frame.streamID == 1 {
                connection.send { $0.writeRSTStream(streamID: 1, status: .unavailable, refused: true) }
                return
            }
            if frame.streamID != 1 { echoScript(connection, frame) }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let response = try await connection.unary(
                    unaryMethod,
                    request: text("again"),
                    options: .defaults,
                    responseType: Text.self
                )
                #expect(response.message.value == "again")
            }
        }
        let opened = server.frames.filter { $0.frame.type == .headers }.map(\.frame.streamID)
        #expect(opened == [1, 3])
        try await server.close()
    }

    @Test func goAwayRetriesHigherStreamsOnANewConnection() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            guard connection.index == 0 else { return echoScript(connection, frame) }
            connection.userState["done", default: 0] += 1
            guard connection.userState["done"] == 2 else { return }
            // Both calls arrived: process only stream 1.
            connection.send { $0.writeGoAway(lastStreamID: 1, status: .ok, debug: "draining") }
            connection.respond(stream: 1, messages: connection.messages[1] ?? [])
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                async let first = connection.unary(
                    unaryMethod,
                    request: text("a"),
                    options: .defaults,
                    responseType: Text.self
                )
                try await Task.sleep(for: .milliseconds(50))
                async let second = connection.unary(
                    unaryMethod,
                    request: text("b"),
                    options: .defaults,
                    responseType: Text.self
                )
                let (a, b) = try await (first, second)
                #expect(a.message.value == "a")
                #expect(b.message.value == "b")
            }
        }
        #expect(server.connectionCount == 2)
        let retried = server.frames.filter { $0.frame.type == .headers && $0.connection == 1 }
        #expect(retried.count == 1)
        try await server.close()
    }

    @Test func cancellationSendsRSTStreamCancelled() async throws {
        let server = try await FakeServer.start { _, _ in }  // never answers
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let call = Task {
                    try await connection.unary(
                        unaryMethod,
                        request: text("x"),
                        options: .defaults,
                        responseType: Text.self
                    )
                }
                try await server.waitFor { $0.contains { $0.frame.type == .message } }
                call.cancel()
                let error = await #expect(throws: RPCError.self) { _ = try await call.value }
                #expect(error?.code == .cancelled)
                try await server.waitFor { $0.contains { $0.frame.type == .rstStream } }
                let reset = try #require(server.frames.first { $0.frame.type == .rstStream }?.frame)
                #expect(reset.streamID == 1)
                #expect(try FramePayload.rstStream(reset).status == .cancelled)
            }
        }
        try await server.close()
    }

    @Test func deadlineSendsTimeoutAndFailsLocally() async throws {
        let server = try await FakeServer.start { _, _ in }  // never answers
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                // Connected first: a deadline that passes while still connecting opens no stream.
                try await connection.connect()
                let start = ContinuousClock.now
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: text("x"),
                        options: CallOptions(timeout: .milliseconds(200)),
                        responseType: Text.self
                    )
                }
                let elapsed = ContinuousClock.now - start
                #expect(error?.code == .deadlineExceeded)
                #expect(elapsed >= .milliseconds(190))  // not before the deadline; the server never answers
                try await server.waitFor { $0.contains { $0.frame.type == .rstStream } }
            }
        }
        let headers = try #require(server.frames.first { $0.frame.type == .headers }?.frame)
        let timeout = try #require(try FramePayload.headers(headers).metadata.metadata.first("grpc-timeout"))
        let parsed = try #require(GRPCTimeout.parse(timeout))
        // The remaining time when the HEADERS left: positive, never more than the timeout (a loaded
        // machine may take a while to connect first).
        #expect(parsed > .zero && parsed <= .milliseconds(200))
        let reset = try #require(server.frames.first { $0.frame.type == .rstStream }?.frame)
        #expect(try FramePayload.rstStream(reset).status == .cancelled)
        try await server.close()
    }

    @Test func waitsForWindowUpdateBeforeSendingBeyondTheWindow() async throws {
        let server = try await FakeServer.start(settings: [(.initialConnectionWindow, 10_000)], script: echoScript)
        let port = server.port
        let request = blob(count: 30_000)
        @Sendable func sent(_ frames: [ReceivedFrame]) -> Int {
            frames.filter { $0.frame.type == .message }.reduce(0) { $0 + $1.frame.payload.readableBytes }
        }
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                let call = Task {
                    try await connection.unary(
                        unaryMethod,
                        request: request,
                        options: .defaults,
                        responseType: Blob.self
                    )
                }
                try await server.waitFor { sent($0) == 10_000 }
                try await Task.sleep(for: .milliseconds(100))
                #expect(sent(server.frames) == 10_000)
                try await server.sendToAll { $0.writeWindowUpdate(streamID: 0, increment: 25_000) }
                let response = try await call.value
                #expect(response.message == request)
            }
        }
        #expect(sent(server.frames) == (try request.serializedBuffer()).readableBytes)
        try await server.close()
    }

    @Test func messageOverServerLimitFailsLocally() async throws {
        let server = try await FakeServer.start(settings: [(.maxMessageSize, 1_024)], script: echoScript)
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: blob(count: 2_000),
                        options: .defaults,
                        responseType: Blob.self
                    )
                }
                #expect(error?.code == .resourceExhausted)
                let bad = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: text("x"),
                        options: CallOptions(metadata: ["Bad Key": "v"]),
                        responseType: Text.self
                    )
                }
                #expect(bad?.code == .internal)
                // The connection still works.
                let ok = try await connection.unary(
                    unaryMethod,
                    request: text("ok"),
                    options: .defaults,
                    responseType: Text.self
                )
                #expect(ok.message.value == "ok")
            }
        }
        #expect(server.frames.filter { $0.frame.type == .headers }.count == 1)
        try await server.close()
    }

    @Test func callsQueueWhileMaxConcurrentStreamsIsReached() async throws {
        let open = Atomic<Int>(0)
        let maxOpen = Atomic<Int>(0)
        let server = try await FakeServer.start(settings: [(.maxConcurrentStreams, 2)]) { connection, frame in
            if frame.type == .headers {
                let now = open.add(1, ordering: .relaxed).newValue
                _ = maxOpen.max(now, ordering: .relaxed)
            }
            guard frame.endsClientSide else { return }
            connection.channel.eventLoop.scheduleTask(in: .milliseconds(10)) {
                open.subtract(1, ordering: .relaxed)
                echoScript(connection, frame)
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<10 {
                        group.addTask {
                            let r = try await connection.unary(
                                unaryMethod,
                                request: text("\(i)"),
                                options: .defaults,
                                responseType: Text.self
                            )
                            #expect(r.message.value == "\(i)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        #expect(maxOpen.load(ordering: .relaxed) <= 2)
        try await server.close()
    }
}

extension FakeServer {
    /// Writes frames on every accepted connection.
    func sendToAll(_ body: @escaping @Sendable (inout ByteBuffer) -> Void) async throws {
        for connection in shared.connections.withLock({ $0 }) {
            try await connection.channel.eventLoop.submit { connection.send(body) }.get()
        }
    }
}
