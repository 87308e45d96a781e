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

@Suite("Reconnection and pools")
struct ReconnectTests {
    @Test func droppedConnectionFailsInFlightCallsAndReconnects() async throws {
        // Connection 0 drops as soon as a request arrives; later connections echo.
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            if connection.index == 0 {
                connection.channel.close(promise: nil)
            } else {
                echoScript(connection, frame)
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: text("a"),
                        options: .defaults,
                        responseType: Text.self
                    )
                }
                #expect(error?.code == .unavailable)
                let response = try await connection.unary(
                    unaryMethod,
                    request: text("b"),
                    options: .defaults,
                    responseType: Text.self
                )
                #expect(response.message.value == "b")
            }
        }
        #expect(server.connectionCount == 2)
        try await server.close()
    }

    @Test func backoffGrowsWithJitterAndIsCapped() {
        let backoff = ClientConfiguration.Backoff()
        #expect(backoff.delay(afterFailures: 0) == .zero)
        for _ in 0..<20 {
            let first = backoff.delay(afterFailures: 1)
            #expect(first >= .milliseconds(80) && first <= .milliseconds(120))
            let third = backoff.delay(afterFailures: 3)  // 100 ms × 1.6² = 256 ms ± 20 %
            #expect(third >= .milliseconds(204) && third <= .milliseconds(308))
            let late = backoff.delay(afterFailures: 100)
            #expect(late >= .seconds(24) && late <= .seconds(36))
        }
    }

    @Test func poolSpreadsCallsOverItsConnections() async throws {
        let server = try await FakeServer.start(script: echoScript)
        let pool = ClientConnectionPool(target: .host("127.0.0.1", port: server.port), size: 3)
        try await withTimeout {
            try await pool.connect()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<30 {
                    group.addTask {
                        let r = try await pool.unary(
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
            await pool.close()
        }
        #expect(server.connectionCount == 3)
        try await server.close()
    }

    @Test func closeWaitsForCallsInFlight() async throws {
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            connection.channel.eventLoop.scheduleTask(in: .milliseconds(100)) { echoScript(connection, frame) }
        }
        let connection = ClientConnection(target: .host("127.0.0.1", port: server.port))
        try await withTimeout {
            async let call = connection.unary(
                unaryMethod,
                request: text("slow"),
                options: .defaults,
                responseType: Text.self
            )
            try await server.waitFor { $0.contains { $0.frame.type == .message } }
            await connection.close()
            #expect(try await call.message.value == "slow")
            let error = await #expect(throws: RPCError.self) {
                _ = try await connection.unary(
                    unaryMethod,
                    request: text("late"),
                    options: .defaults,
                    responseType: Text.self
                )
            }
            #expect(error?.code == .unavailable)
        }
        try await server.close()
    }

    @Test func responseOverOurMaxMessageSizeIsReset() async throws {
        var settings = ConnectionSettings()
        settings.maxMessageSize = 16_384
        let localSettings = settings
        let server = try await FakeServer.start { connection, frame in
            guard frame.endsClientSide else { return }
            let id = frame.streamID
            var big = try! blob(count: 20_000).serializedBuffer()
            let first = big.readSlice(length: 10_000)!
            connection.send {
                $0.writeHeaders(streamID: id, metadata: [:])
                $0.writeMessageFrame(streamID: id, flags: .more, bytes: first)
                $0.writeMessageFrame(streamID: id, flags: [], bytes: big)
            }
        }
        let port = server.port
        try await withTimeout {
            try await withClientConnection(
                target: .host("127.0.0.1", port: port),
                configuration: ClientConfiguration(settings: localSettings)
            ) { connection in
                try await connection.connect()
                let error = await #expect(throws: RPCError.self) {
                    _ = try await connection.unary(
                        unaryMethod,
                        request: text("x"),
                        options: .defaults,
                        responseType: Blob.self
                    )
                }
                #expect(error?.code == .resourceExhausted)
                try await server.waitFor { $0.contains { $0.frame.type == .rstStream } }
            }
        }
        let reset = try #require(server.frames.first { $0.frame.type == .rstStream }?.frame)
        #expect(try FramePayload.rstStream(reset).status == .resourceExhausted)
        try await server.close()
    }
}
