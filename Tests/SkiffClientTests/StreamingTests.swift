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

/// Echoes each request message as it arrives; OK TRAILERS when the client's side ends.
let streamingEchoScript: FakeServer.Script = { connection, frame in
    let id = frame.streamID
    if frame.type == .headers {
        connection.send { $0.writeHeaders(streamID: id, metadata: ["x-stream": "yes"]) }
    }
    if frame.type == .message, !frame.flags.contains(.more), let last = connection.messages[id]?.last {
        connection.send { $0.writeMessageFrame(streamID: id, flags: [], bytes: last) }
    }
    if frame.endsClientSide {
        connection.send { $0.writeTrailers(streamID: id, status: .ok, message: "", metadata: ["x-done": "1"]) }
    }
}

@Suite("Streaming calls")
struct StreamingTests {
    @Test func bidirectionalEcho() async throws {
        let server = try await FakeServer.start(script: streamingEchoScript)
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let (values, trailers) = try await connection.streaming(
                    bidiMethod,
                    options: .defaults,
                    requestType: Text.self,
                    responseType: Text.self,
                    requests: { writer in
                        for value in ["a", "b", "c"] { try await writer.write(text(value)) }
                    },
                    body: { response in
                        #expect(response.metadata.first("x-stream") == "yes")
                        let values = try await response.messages.collect().map(\.value)
                        return (values, try await response.trailingMetadata())
                    }
                )
                #expect(values == ["a", "b", "c"])
                #expect(trailers.first("x-done") == "1")
            }
        }
        let frames = server.frames.map(\.frame)
        #expect(frames.filter { $0.type == .message }.count == 3)
        #expect(frames.filter(\.endsClientSide).count == 1)
        try await server.close()
    }

    @Test func trailersOnlyErrorThrowsWithoutCallingBody() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.type == .headers else { return }
            connection.send {
                $0.writeTrailers(streamID: frame.streamID, status: .permissionDenied, message: "no", metadata: [:])
            }
        }
        let port = server.port
        let called = Atomic<Bool>(false)
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let error = await #expect(throws: RPCError.self) {
                    try await connection.serverStreaming(
                        bidiMethod,
                        request: text("x"),
                        options: .defaults,
                        responseType: Text.self
                    ) { _ in called.store(true, ordering: .relaxed) }
                }
                #expect(error?.code == .permissionDenied)
                #expect(error?.message == "no")
            }
        }
        let wasCalled = called.load(ordering: .relaxed)
        #expect(!wasCalled)
        try await server.close()
    }

    @Test func trailersOnlyOKGivesNoMessages() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            connection.send {
                $0.writeTrailers(streamID: frame.streamID, status: .ok, message: "", metadata: ["k": "v"])
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let (count, trailers) = try await connection.serverStreaming(
                    bidiMethod,
                    request: text("x"),
                    options: .defaults,
                    responseType: Text.self
                ) { response in
                    (try await response.messages.collect().count, try await response.trailingMetadata())
                }
                #expect(count == 0)
                #expect(trailers.first("k") == "v")
            }
        }
        try await server.close()
    }

    @Test func errorAfterMessagesIsThrownByTheIterator() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            let id = frame.streamID
            connection.send {
                $0.writeHeaders(streamID: id, metadata: [:])
                $0.writeMessageFrame(streamID: id, flags: [], bytes: try! text("one").serializedBuffer())
                $0.writeTrailers(streamID: id, status: .aborted, message: "stop", metadata: ["x-t": "1"])
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let seen = Mutex<[String]>([])
                let error = await #expect(throws: RPCError.self) {
                    try await connection.serverStreaming(
                        bidiMethod,
                        request: text("x"),
                        options: .defaults,
                        responseType: Text.self
                    ) { response in
                        for try await message in response.messages { seen.withLock { $0.append(message.value) } }
                    }
                }
                #expect(error?.code == .aborted)
                #expect(error?.metadata.first("x-t") == "1")
                #expect(seen.withLock { $0 } == ["one"])
            }
        }
        try await server.close()
    }

    @Test func bodyReturningEarlyCancelsTheStream() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.type == .headers else { return }
            let id = frame.streamID
            connection.send {
                $0.writeHeaders(streamID: id, metadata: [:])
                $0.writeMessageFrame(streamID: id, flags: [], bytes: try! text("first").serializedBuffer())
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let first = try await connection.streaming(
                    bidiMethod,
                    options: .defaults,
                    requestType: Text.self,
                    responseType: Text.self,
                    requests: { writer in
                        try await writer.write(text("x"))
                        try await Task.sleep(for: .seconds(30))  // cancelled when body returns
                    },
                    body: { response in
                        var iterator = response.messages.makeAsyncIterator()
                        return try await iterator.next()?.value
                    }
                )
                #expect(first == "first")
                try await server.waitFor { $0.contains { $0.frame.type == .rstStream } }
            }
        }
        let reset = try #require(server.frames.first { $0.frame.type == .rstStream }?.frame)
        #expect(try FramePayload.rstStream(reset).status == .cancelled)
        try await server.close()
    }

    @Test func streamCreditIsReturnedAsMessagesAreConsumed() async throws {
        // Our stream window is 16 KiB; the server sends 40 KiB in 4 KiB messages, respecting it.
        var settings = ConnectionSettings()
        settings.initialStreamWindow = 16_384
        settings.maxMessageSize = 16_384
        let message = try blob(count: 4_090).serializedBuffer()
        let localSettings = settings
        let server = try await FakeServer.start { connection, frame in
            let id = frame.streamID
            if frame.type == .headers {
                connection.userState["window"] = 16_384
                connection.userState["left"] = 10
                connection.send { $0.writeHeaders(streamID: id, metadata: [:]) }
            } else if frame.type == .windowUpdate, id != 0 {
                connection.userState["window", default: 0] += Int(try! FramePayload.windowUpdate(frame))
            } else {
                return
            }
            while connection.userState["left", default: 0] > 0,
                connection.userState["window", default: 0] >= message.readableBytes
            {
                connection.userState["left", default: 0] -= 1
                connection.userState["window", default: 0] -= message.readableBytes
                connection.send { $0.writeMessageFrame(streamID: id, flags: [], bytes: message) }
            }
            if connection.userState["left"] == 0 {
                connection.userState["left"] = -1
                connection.send { $0.writeTrailers(streamID: id, status: .ok, message: "", metadata: [:]) }
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(
                target: .host("127.0.0.1", port: port),
                configuration: ClientConfiguration(settings: localSettings)
            ) { connection in
                let count = try await connection.serverStreaming(
                    bidiMethod,
                    request: text("x"),
                    options: .defaults,
                    responseType: Blob.self
                ) { response in
                    try await response.messages.collect().count
                }
                #expect(count == 10)
            }
        }
        #expect(server.frames.contains { $0.frame.type == .windowUpdate && $0.frame.streamID == 1 })
        try await server.close()
    }

    @Test func requestWriterIsBoundedByFlowControl() async throws {
        // A 10 KB connection window that the server never reopens: the producer must stall.
        let server = try await FakeServer.start(settings: [(.initialConnectionWindow, 10_000)]) { connection, frame in
            if frame.type == .headers { connection.send { $0.writeHeaders(streamID: frame.streamID, metadata: [:]) } }
        }
        let port = server.port
        let written = Counter()
        var configuration = ClientConfiguration()
        configuration.requestBufferLimit = 64 * 1024
        let config = configuration
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port), configuration: config) {
                connection in
                try await connection.connect()
                let call = Task {
                    try await connection.streaming(
                        bidiMethod,
                        options: .defaults,
                        requestType: Blob.self,
                        responseType: Blob.self,
                        requests: { writer in
                            let chunk = blob(count: 8_000)
                            for _ in 0..<1_000 {
                                try await writer.write(chunk)
                                written.value.add(1, ordering: .relaxed)
                            }
                        },
                        body: { response in try await response.messages.collect().count }
                    )
                }
                // The producer starts (on a loaded machine this can take a while), then stalls: the
                // window and the request buffer hold at most 12 chunks, however long we wait.
                for _ in 0..<500 where written.value.load(ordering: .relaxed) == 0 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await Task.sleep(for: .milliseconds(300))
                let count = written.value.load(ordering: .relaxed)
                #expect(count >= 1 && count <= 12)
                call.cancel()
                let error = await #expect(throws: RPCError.self) { _ = try await call.value }
                #expect(error?.code == .cancelled)
            }
        }
        try await server.close()
    }

    @Test func serverPingIsAcknowledged() async throws {
        let server = try await FakeServer.start { connection, frame in
            if frame.type == .settings, frame.flags.contains(.ack) {
                connection.send { $0.writePing(0x0102_0304_0506_0708, ack: false) }
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await connection.connect()
                try await server.waitFor { $0.contains { $0.frame.type == .ping } }
            }
        }
        let ping = try #require(server.frames.first { $0.frame.type == .ping }?.frame)
        #expect(ping.flags == .ack)
        #expect(try FramePayload.ping(ping) == 0x0102_0304_0506_0708)
        try await server.close()
    }

    @Test func badServerSettingsFailWithGoAway() async throws {
        let server = try await FakeServer.start(settings: [(.maxFrameSize, 100)]) { _, _ in }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let error = await #expect(throws: RPCError.self) { try await connection.connect() }
                #expect(error?.code == .internal || error?.code == .unavailable)
                try await server.waitFor { $0.contains { $0.frame.type == .goAway } }
            }
        }
        let goAway = try #require(server.frames.first { $0.frame.type == .goAway }?.frame)
        #expect(try FramePayload.goAway(goAway).status == .internal)
        try await server.close()
    }

    @Test func unreachableServerFailsWithUnavailable() async throws {
        // Bind and close a port, so nothing listens on it.
        let server = try await FakeServer.start { _, _ in }
        let port = server.port
        try await server.close()
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
                #expect(error?.code == .unavailable)
            }
        }
    }
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
