import NIOCore
import SkiffCore
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import Testing

@testable import SkiffClient

/// Calls wait for the server's SETTINGS before they are sent: a connection the kernel completed but
/// no server process took (a listener about to close, a wedged server) never sees a call, so its
/// reset or its silence leaves the call safe to send elsewhere.
@Suite("A connection carries calls only once the server's SETTINGS arrived")
struct ConnectionReadinessTests {
    /// Calls queued on `manager`'s connections now, read on its loop.
    private func queuedCalls(_ manager: ConnectionManager) async throws -> Int {
        try await manager.loop.submit { manager.queuedCalls }.get()
    }

    @Test(
        "A call on a connection reset before the server's SETTINGS (a listener closing with it unaccepted) moves to another address and succeeds"
    )
    func resetBeforeSettingsMovesTheCall() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        try await withNodes(1) { nodes in
            let transport = BalancedClientTransport(
                targets: [.host("127.0.0.1", port: silent.port), nodes[0].target],
                // One health check each, at once; the one to the silent address waits with the call.
                configuration: .init(healthCheckInterval: .seconds(3600), healthCheckTimeout: .seconds(30)),
                connection: quickReconnect
            )
            let client = Skiff_Testing_V1_TestService.Client(transport: transport)
            // The first call goes to the first address (every address counts as healthy at first).
            let call = Task { try await client.unaryCall(simpleRequest()) }
            let silentManager = transport.balancer.addresses[0].connection.manager
            try await withTimeout(.seconds(30)) {
                while try await queuedCalls(silentManager) < 2 || silent.queuedConnections < 1 {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            // The kernel took the connection and the client wrote its preface; the health check and
            // the call wait for SETTINGS that never come.
            #expect(nodes[0].calls == 0)
            silent.close()  // resets the queued connection
            _ = try await call.value
            #expect(nodes[0].calls == 1)
            try await waitUntil { transport.healthyTargets == [nodes[0].target] }
            await transport.close()
        }
    }

    @Test("A server that never sends its SETTINGS holds a call no longer than the connect timeout")
    func silentServerTimesOut() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let connection = ClientConnection(
            target: .host("127.0.0.1", port: silent.port),
            configuration: ClientConfiguration(connectTimeout: .milliseconds(300))
        )
        let client = Skiff_Testing_V1_TestService.Client(transport: connection)
        let start = ContinuousClock.now
        let error = await #expect(throws: RPCError.self) { _ = try await client.unaryCall(simpleRequest()) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("did not complete the connection (its SETTINGS)") == true)
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(silent.queuedConnections >= 1)
        await connection.close()

        // Behind a balanced transport the call was never sent, so it moves on and succeeds.
        try await withNodes(1) { nodes in
            let transport = BalancedClientTransport(
                targets: [.host("127.0.0.1", port: silent.port), nodes[0].target],
                configuration: .init(healthCheckInterval: .seconds(3600), healthCheckTimeout: .seconds(30)),
                connection: ClientConfiguration(connectTimeout: .milliseconds(300))
            )
            let balanced = Skiff_Testing_V1_TestService.Client(transport: transport)
            for _ in 0..<3 { _ = try await balanced.unaryCall(simpleRequest()) }
            #expect(nodes[0].calls == 3)
            #expect(transport.healthyTargets == [nodes[0].target])
            await transport.close()
        }
    }

    @Test("A call that ends while it waits for the server's SETTINGS does not keep a closing connection open")
    func endedWaitingCallDoesNotHoldTheClose() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        // The connect timeout (10 s by default) would end the wait; the close must not need it.
        let connection = ClientConnection(target: .host("127.0.0.1", port: silent.port))
        let client = Skiff_Testing_V1_TestService.Client(transport: connection)
        let error = await #expect(throws: RPCError.self) {
            _ = try await client.unaryCall(simpleRequest(), timeout: .milliseconds(200))
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(silent.queuedConnections >= 1)
        let start = ContinuousClock.now
        await connection.close()
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}
