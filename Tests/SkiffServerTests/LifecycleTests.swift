import ArgumentParser
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffServer
import SkiffServerApp
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Synchronization
import Testing

@Suite("Server lifecycle and options")
struct LifecycleTests {
    @Test("graceful shutdown through a ServiceGroup drains a call in flight and run() returns")
    func serviceGroupDrain() async throws {
        var options = try ServerOptions.parse([
            "--port", "0", "--storage", "memory", "--enable-test-service", "--drain-grace-period", "5",
        ])
        options.port = 0
        let app = try await Application(options: options, logger: quietLogger)
        let group = ServiceGroup(services: [app.server], logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try await app.server.listeningAddress.port!
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let client = TestClient(transport: connection)
                _ = try await client.emptyCall(.init())  // connected before the drain starts
                async let slow = client.unaryCall(.with { $0.sleepMs = 1_000 })
                try await waitUntil { app.server.observer.streams == 1 }
                await group.triggerGracefulShutdown()
                let response = try await slow
                #expect(response.peerMetadata.hasPrefix("127.0.0.1:"))
            }
            // run() returns once the drain is over (the group's own deadline would fail the test).
            try await tasks.next()
        }
    }

    @Test("on shutdown the application closes its SQLite database, after the server has drained")
    func storageClosesLast() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "skiff-close-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("skiff.sqlite").path
        var configuration = ApplicationConfiguration(storage: StorageSelection(defaultBackend: .sqlite(path: path)))
        configuration.server.port = 0
        configuration.enableTestService = true
        configuration.passwordHashRounds = 1_000
        let app = try await Application(configuration: configuration, logger: quietLogger)
        #expect(app.storage.backends.map(\.name) == ["sqlite:\(path)"])
        let group = ServiceGroup(services: app.services, logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try await app.server.listeningAddress.port!
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                let accounts = Skiff_Accounts_V1_Accounts.Client(transport: connection)
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "closing@campus.edu"
                        $0.password = "correct horse battery"
                        $0.displayName = "Closing"
                    }
                )
                // The write-ahead log exists while the database is open.
                #expect(FileManager.default.fileExists(atPath: path + "-wal"))
                async let slow = TestClient(transport: connection).unaryCall(.with { $0.sleepMs = 300 })
                try await waitUntil { app.server.observer.streams == 1 }
                await group.triggerGracefulShutdown()
                _ = try await slow  // the call in flight finishes before anything closes
            }
            try await tasks.next()
        }
        // Closing copied the log into the database and emptied it.
        let log = try? FileManager.default.attributesOfItem(atPath: path + "-wal")
        #expect((log?[.size] as? Int ?? 0) == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        // Every connection is closed: later use fails.
        let accounts = app.storage.backend(for: "accounts").makeAccountsStore()
        await #expect(throws: (any Error).self) { try await accounts.deleteExpired(now: Date()) }
    }

    @Test("options: defaults, limits and validation")
    func options() throws {
        let defaults = try ServerOptions.parse([])
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.port == 7700)
        #expect(!defaults.enableTestService)
        let configuration = try defaults.configuration()
        #expect(configuration.settings.maxConcurrentStreams == 1_000)

        let tuned = try ServerOptions.parse(["--max-message-size", "16777216", "--max-frame-size", "16384"])
        let tunedConfiguration = try tuned.configuration()
        #expect(tunedConfiguration.settings.initialStreamWindow >= 16_777_216)
        #expect(tunedConfiguration.settings.maxFrameSize == 16_384)

        #expect(throws: (any Error).self) { _ = try ServerOptions.parse(["--tls-cert", "x.pem"]) }
        #expect(throws: (any Error).self) { _ = try ServerOptions.parse(["--max-frame-size", "100"]) }
        #expect(throws: (any Error).self) { _ = try ServerOptions.parse(["--port", "70000"]) }
    }

    @Test("--log-level: one level, or a level and levels by label; a bad level or pair is refused by name")
    func logLevels() throws {
        #expect(try ServerOptions.parse([]).logLevels() == LogLevels(base: .info, byLabel: [:]))
        let levels = try ServerOptions.parse(["--log-level", "info, skiff.mail=debug,skiff=warning"]).logLevels()
        #expect(levels.level(for: "skiff.mail") == .debug)
        #expect(levels.level(for: "skiff.mail.smtp") == .debug, "a label sets the loggers below it")
        #expect(levels.level(for: "skiff.mailer") == .warning, "a label is matched whole, not as a prefix")
        #expect(levels.level(for: "skiff.server") == .warning)
        #expect(levels.level(for: "other") == .info)
        let refusals = [
            ("verbose", "\"verbose\" is not a level; use one of trace, debug"),
            ("info,skiff.mail", "\"skiff.mail\" is not LABEL=LEVEL"),
            ("info,=debug", "\"=debug\" is not LABEL=LEVEL"),
            ("info,skiff.mail=loud", "\"loud\" is not a level"),
            (String(repeating: "x", count: 5_000), "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…\" is not a level"),
            ("info" + String(repeating: ",a=debug", count: 33), "more than 32 labels"),
        ]
        for (text, message) in refusals {
            #expect {
                _ = try ServerOptions.parse(["--log-level", text])
            } throws: { error in
                let shown = ServerOptions.message(for: error)
                return shown.contains(message) && shown.count < 160
            }
        }
    }

    @Test("--protocols: all by default, a comma-separated choice, clear errors for unknown or repeated names")
    func protocolsOption() throws {
        #expect(
            try ServerOptions.parse([]).applicationConfiguration().protocols == [.skiff, .grpc, .grpcWeb, .connect]
        )
        #expect(try ServerOptions.parse(["--protocols", "skiff"]).applicationConfiguration().protocols == [.skiff])
        let reordered = try ServerOptions.parse(["--protocols", "grpc, skiff"]).applicationConfiguration()
        #expect(reordered.protocols == [.grpc, .skiff])
        for bad in ["http", "skiff,skiff", "", "skiff,"] {
            #expect(throws: (any Error).self, "\(bad)") {
                _ = try ServerOptions.parse(["--protocols", bad]).applicationConfiguration()
            }
        }
        var none = ApplicationConfiguration()
        none.protocols = []
        #expect(throws: (any Error).self) { try none.validate() }
    }

    @Test("--cors-origin: repeatable origins or *, anything else refused; the connection protocols follow --protocols")
    func corsOriginOption() throws {
        let parsed = try ServerOptions.parse([
            "--cors-origin", "https://market.example.edu", "--cors-origin", "http://127.0.0.1:8080",
        ]).applicationConfiguration()
        #expect(parsed.corsOrigins == ["https://market.example.edu", "http://127.0.0.1:8080"])
        try parsed.validate()
        #expect(try ServerOptions.parse([]).applicationConfiguration().corsOrigins.isEmpty)
        for bad in ["market.example.edu", "ftp://x.edu", "https://x.edu/app", "https://x.edu?q=1", ""] {
            var configuration = ApplicationConfiguration()
            configuration.corsOrigins = [bad]
            #expect(throws: (any Error).self, "\(bad)") { try configuration.validate() }
        }
        let web = try ServerOptions.parse(["--protocols", "grpc-web,connect"]).applicationConfiguration()
        #expect(web.protocols == [.grpcWeb, .connect])
        let names = { (protocols: [WireProtocolName]) in
            Application.connectionProtocols(protocols, corsOrigins: []).map(\.name)
        }
        #expect(names([.skiff]) == ["skiff/1"])
        #expect(names([.grpc]) == ["h2"])
        #expect(names([.connect]) == ["h2", "http/1.1"])
        #expect(names(WireProtocolName.allCases) == ["skiff/1", "h2", "http/1.1"])
    }

    @Test("the command line's defaults are the library's: an ApplicationConfiguration built directly serves the same")
    func defaultsAgree() throws {
        let parsed = try ServerOptions.parse([]).applicationConfiguration()
        let direct = ApplicationConfiguration()
        #expect(parsed.server.settings == direct.server.settings)
        #expect(parsed.server.host == direct.server.host)
        #expect(parsed.server.port == direct.server.port)
        #expect(parsed.server.maxConnections == direct.server.maxConnections)
        #expect(parsed.server.prefaceTimeout == direct.server.prefaceTimeout)
        #expect(parsed.server.frameTimeout == direct.server.frameTimeout)
        #expect(parsed.server.idleTimeout == direct.server.idleTimeout)
        #expect(parsed.server.requestTimeout == direct.server.requestTimeout)
        #expect(parsed.server.drainGracePeriod == direct.server.drainGracePeriod)
        #expect(parsed.server.sendStallTimeout == direct.server.sendStallTimeout)
        #expect(parsed.server.maxBufferedResponseBytes == direct.server.maxBufferedResponseBytes)
        #expect(parsed.server.maxBufferedRequestBytes == direct.server.maxBufferedRequestBytes)
        #expect(parsed.server.maxWindowHeldResponseBytes == direct.server.maxWindowHeldResponseBytes)
        #expect(parsed.storage == direct.storage)
        #expect(parsed.accounts.allowedEmailDomains == direct.accounts.allowedEmailDomains)
        #expect(parsed.accounts.maximumQueuedPasswordHashes == direct.accounts.maximumQueuedPasswordHashes)
        #expect(parsed.accounts.loginBackoffInitialDelay == direct.accounts.loginBackoffInitialDelay)
        #expect(parsed.passwordHashRounds == direct.passwordHashRounds)
        #expect(parsed.rateLimitScale == direct.rateLimitScale)
    }

    @Test("the command line becomes an ApplicationConfiguration value, field by field")
    func applicationConfiguration() throws {
        let defaults = try ServerOptions.parse([]).applicationConfiguration()
        #expect(defaults.server.port == 7700)
        #expect(defaults.storage == StorageSelection())
        #expect(!defaults.enableTestService)
        #expect(defaults.serviceToken == nil)
        #expect(defaults.passwordHashRounds == 600_000)
        #expect(defaults.rateLimitScale == 1)
        #expect(defaults.handoffPlaces.isEmpty)
        #expect(defaults.identityProviders == nil)

        let tuned = try ServerOptions.parse([
            "--port", "0", "--storage", "memory", "--storage", "chat=sqlite:/tmp/x.sqlite", "--enable-test-service",
            "--service-token", "a-long-enough-t0ken", "--email-domain", "campus.edu", "--password-hash-queue", "3",
            "--login-backoff", "0.25", "--password-hash-rounds", "1000", "--rate-limit-scale", "0.5",
        ]).applicationConfiguration()
        #expect(tuned.server.port == 0)
        #expect(tuned.storage.backend(for: "listings") == .memory)
        #expect(tuned.storage.backend(for: "chat") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(tuned.enableTestService)
        #expect(tuned.serviceToken == "a-long-enough-t0ken")
        #expect(tuned.accounts.allowedEmailDomains == ["campus.edu"])
        #expect(tuned.accounts.maximumQueuedPasswordHashes == 3)
        #expect(tuned.accounts.loginBackoffInitialDelay == .milliseconds(250))
        #expect(tuned.passwordHashRounds == 1_000)
        #expect(tuned.rateLimitScale == 0.5)
        #expect(throws: (any Error).self) {
            _ = try ServerOptions.parse(["--storage", "nope"]).applicationConfiguration()
        }

        // Built directly, the same values are checked before anything opens.
        var direct = ApplicationConfiguration(storage: StorageSelection(defaultBackend: .memory))
        direct.serviceToken = "short"
        #expect(throws: ApplicationConfigurationError.self) { try direct.validate() }
        direct.serviceToken = nil
        direct.rateLimitScale = -1
        #expect(throws: ApplicationConfigurationError.self) { try direct.validate() }
        direct.rateLimitScale = 0
        #expect(throws: Never.self) { try direct.validate() }
    }

    @Test("the server serves health for every registered service, the test service only when enabled")
    func application() async throws {
        let plain = try await Application(
            options: try ServerOptions.parse(["--port", "0", "--storage", "memory"]),
            logger: quietLogger
        )
        #expect(plain.server.router.handler(forPath: "/skiff.testing.v1.TestService/EmptyCall") == nil)
        #expect(plain.server.router.handler(forPath: "/skiff.health.v1.Health/Check") != nil)
        let withTests = try await Application(
            options: try ServerOptions.parse(["--port", "0", "--storage", "memory", "--enable-test-service"]),
            logger: quietLogger
        )
        #expect(withTests.server.router.handler(forPath: "/skiff.testing.v1.TestService/EmptyCall") != nil)
    }
}

@Suite("Housekeeping")
struct HousekeepingTests {
    final class Runs: Sendable {
        let count = Mutex(0)
    }

    @Test("runs every job at start, keeps going after a failing job, and stops on graceful shutdown")
    func jobs() async throws {
        let runs = Runs()
        struct Boom: Error {}
        let housekeeping = Housekeeping(
            interval: .milliseconds(20),
            jobs: [
                .init(name: "failing") { throw Boom() },
                .init(name: "counting") {
                    runs.count.withLock { $0 += 1 }
                    return 1
                },
            ],
            logger: quietLogger
        )
        let group = ServiceGroup(services: [housekeeping], logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await waitUntil { runs.count.withLock { $0 } >= 3 }
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
    }
}
