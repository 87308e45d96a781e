import Foundation
import NIOCore
import NIOPosix
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffPostgres
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Two `skiff-server` processes on one PostgreSQL database behind a client-side
/// `BalancedClientTransport`, restarted one after the other while calls keep coming (issue 15).
@Suite("Rolling restart behind client-side balancing")
struct RollingRestartTests {
    static let workers = 4

    @Test("A rolling restart of two servers under continuous calls through a BalancedClientTransport fails no call")
    func rollingRestartFailsNoCall() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            // Verified accounts to log in with, straight in the database (the servers' mail outboxes are
            // in other processes).
            let storage = try await PostgresStorage.open(location)
            var userIDs: [String] = []
            do {
                for worker in 0..<Self.workers {
                    userIDs.append(
                        try await seedVerifiedAccount(
                            storage,
                            email: "worker\(worker)@campus.edu",
                            name: "Worker \(worker)"
                        )
                    )
                }
            } catch {
                await storage.close()
                throw error
            }
            await storage.close()

            let arguments = [
                "--storage", "memory", "--storage", "accounts=\(location)", "--password-hash-rounds", "1000",
                "--rate-limit-scale", "0", "--log-level", "info",
            ]
            let servers = Servers()
            let accounts = userIDs
            do {
                try await withTimeout(.seconds(60)) {
                    try await Self.restartUnderLoad(servers: servers, arguments: arguments, userIDs: accounts)
                }
            } catch {
                servers.killAll()
                throw error
            }
            for status in await servers.stopAll() { #expect(status == 0) }
        }
    }

    /// Starts the two servers, runs the workers through a balanced transport, restarts each server in
    /// turn on its port, and checks the outcome.
    private static func restartUnderLoad(servers: Servers, arguments: [String], userIDs: [String]) async throws {
        for _ in 0..<2 { servers.append(try await startServer(arguments, port: 0)) }
        let targets = servers.all.map { ClientConnection.Target.host("127.0.0.1", port: $0.process.port) }
        let transport = BalancedClientTransport(
            targets: targets,
            configuration: .init(healthCheckInterval: .milliseconds(200), healthCheckTimeout: .seconds(1)),
            connection: ClientConfiguration(backoff: .init(initial: .milliseconds(20), maximum: .milliseconds(200)))
        )
        let ledger = Ledger()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        await work(
                            worker,
                            userID: userIDs[worker],
                            accounts: AccountsClient(transport: transport),
                            ledger
                        )
                    }
                }
                defer {
                    ledger.stop.store(true, ordering: .relaxed)
                }
                try await waitUntil(timeout: .seconds(20)) { ledger.succeeded >= 50 }
                for index in 0..<2 {
                    let old = servers.all[index]
                    let port = old.process.port
                    #expect(await old.process.stopGracefully() == 0, "server \(index) did not stop cleanly")
                    // Calls go on while it is down.
                    let down = ledger.succeeded
                    try await waitUntil(timeout: .seconds(20)) { ledger.succeeded >= down + 20 }
                    servers.replace(index, with: try await startServer(arguments, port: port))
                    try await waitUntil(timeout: .seconds(20)) { transport.healthyTargets.contains(targets[index]) }
                    let before = ledger.succeeded
                    try await waitUntil(timeout: .seconds(20)) { ledger.succeeded >= before + 50 }
                }
                // Both restarted servers serve calls of the balanced transport.
                let start = ContinuousClock.now
                var served = [0, 0]
                while served.contains(0), ContinuousClock.now - start < .seconds(10) {
                    for index in 0..<2 { served[index] = try await servers.all[index].accountsCalls() }
                    if served.contains(0) { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(
                    served.allSatisfy { $0 > 0 },
                    "account calls served by each server since its restart: \(served)"
                )
                ledger.stop.store(true, ordering: .relaxed)
                try await group.waitForAll()
            }
        } catch {
            await transport.close()
            throw error
        }
        await transport.close()
        let failures = ledger.failures.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) failed calls, the first: \(failures.prefix(5))")
        #expect(ledger.succeeded > 200)
    }

    /// One worker's loop until told to stop: a sign-up of a new user, a log-in, the account, a profile
    /// edit, the profile; every call's outcome recorded.
    private static func work(_ worker: Int, userID: String, accounts: AccountsClient, _ ledger: Ledger) async {
        var round = 0
        while !ledger.stop.load(ordering: .relaxed) {
            round += 1
            await ledger.record("SignUp") {
                try await accounts.signUp(
                    .with {
                        $0.email = "new-\(worker)-\(round)@campus.edu"
                        $0.password = "a good password"
                        $0.displayName = "New \(worker) \(round)"
                    }
                )
            }
            let session = await ledger.record("LogIn") {
                try await accounts.logIn(
                    .with {
                        $0.email = "worker\(worker)@campus.edu"
                        $0.password = "shared password"
                    }
                )
            }
            guard let session else { continue }
            let auth: Metadata = ["authorization": "Bearer \(session.sessionToken)"]
            await ledger.record("GetMyAccount") { try await accounts.getMyAccount(.init(), metadata: auth) }
            await ledger.record("UpdateProfile") {
                try await accounts.updateProfile(
                    .with {
                        $0.account.bio = "worker \(worker), round \(round)"
                        $0.updateMask = Google_Protobuf_FieldMask(protoPaths: ["bio"])
                    },
                    metadata: auth
                )
            }
            await ledger.record("GetProfile") {
                try await accounts.getProfile(.with { $0.userID = userID }, metadata: auth)
            }
        }
    }

    /// Starts `skiff-server` (with a metrics endpoint of its own) on a thread of its own: starting
    /// waits for the process's log.
    private static func startServer(_ arguments: [String], port: Int) async throws -> RunningServer {
        let metricsPort = try await freePort()
        let process = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try ServerProcess(arguments: arguments + ["--metrics-port", "\(metricsPort)"], port: port)
                    }
                )
            }
        }
        return RunningServer(process: process, metricsPort: metricsPort)
    }

    /// A loopback port nothing listens on now (bound, then closed).
    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}

/// A server process and its metrics endpoint.
private struct RunningServer: Sendable {
    let process: ServerProcess
    let metricsPort: Int

    /// How many calls of the Accounts service the process has answered, from its metrics.
    func accountsCalls() async throws -> Int {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: metricsPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let text = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            )
            var response = ""
            for try await chunk in inbound { response += String(buffer: chunk) }
            return response
        }
        // skiff_server_calls_total{method="/skiff.accounts.v1.Accounts/LogIn",status="OK"} 12
        return text.split(separator: "\n")
            .filter { $0.hasPrefix(#"skiff_server_calls_total{method="/skiff.accounts.v1.Accounts/"#) }
            .compactMap { line in line.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0) { $0 + Int($1) }
    }
}

/// The running servers, for the test and its clean-up.
private final class Servers: Sendable {
    private let servers = Mutex<[RunningServer]>([])

    var all: [RunningServer] { servers.withLock { $0 } }

    func append(_ server: RunningServer) { servers.withLock { $0.append(server) } }

    func replace(_ index: Int, with server: RunningServer) { servers.withLock { $0[index] = server } }

    func killAll() {
        for server in all where server.process.isRunning { server.process.kill() }
    }

    /// Stops every running server with SIGTERM; their exit statuses.
    func stopAll() async -> [Int32] {
        var statuses: [Int32] = []
        for server in all where server.process.isRunning { statuses.append(await server.process.stopGracefully()) }
        return statuses
    }
}

/// What the workers did: calls that succeeded, calls that failed (with their errors).
private final class Ledger: Sendable {
    let stop = Atomic<Bool>(false)
    private let successes = Atomic<Int>(0)
    let failures = Mutex<[String]>([])

    var succeeded: Int { successes.load(ordering: .relaxed) }

    /// Runs one call; its response, or `nil` after recording its failure.
    @discardableResult
    func record<T: Sendable>(_ name: String, _ call: () async throws -> T) async -> T? {
        do {
            let result = try await call()
            successes.wrappingAdd(1, ordering: .relaxed)
            return result
        } catch {
            failures.withLock { $0.append("\(name): \(error)") }
            return nil
        }
    }
}
