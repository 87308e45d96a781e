import Foundation
import GRDB
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffSQLite
import SwiftProtobuf
import Synchronization
import Testing

/// A `skiff-server` child process on a SQLite file, killed with SIGKILL at will.
final class ServerProcess: Sendable {
    let process: Process
    let port: Int

    /// Starts the `skiff-server` built next to the test bundle and waits for its bound port.
    init(databasePath: String) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0])
            .deletingLastPathComponent()
            .appendingPathComponent("skiff-server")
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "--port", "0", "--storage", "sqlite:\(databasePath)", "--password-hash-rounds", "1000",
            "--log-level", "info",
        ]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The bound port is logged: `address=[IPv4]127.0.0.1/127.0.0.1:PORT`.
        var seen = ""
        let deadline = Date().addingTimeInterval(10)
        var port: Int?
        while port == nil, Date() < deadline {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
            if let range = seen.range(of: #"127\.0\.0\.1:(\d+) tls"#, options: .regularExpression) {
                let match = seen[range].dropFirst("127.0.0.1:".count).prefix { $0.isNumber }
                port = Int(match)
            }
        }
        guard let port else {
            process.terminate()
            throw ServerDidNotStart(output: seen)
        }
        self.port = port
        // Keep draining the log so the child never blocks on a full pipe.
        pipe.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        var output: String
        var description: String { "skiff-server did not report its port: \(output)" }
    }
}

final class Acknowledged: Sendable {
    let emails = Mutex<[String]>([])
}

@Suite("Durability")
struct DurabilityTests {
    @Test("every acknowledged sign-up survives SIGKILL mid-load, and the database stays intact")
    func killMidLoad() async throws {
        let path = temporaryDatabasePath()
        let acknowledged = Acknowledged()
        for round in 0..<3 {
            let server = try ServerProcess(databasePath: path)
            let pool = ClientConnectionPool(
                target: .host("127.0.0.1", port: server.port),
                size: 2,
                configuration: ClientConfiguration(maxTransparentRetries: 0)
            )
            let accounts = AccountsClient(transport: pool)
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for i in 0..<10_000 {
                            let email = "r\(round)w\(worker)n\(i)@campus.edu"
                            do {
                                _ = try await accounts.signUp(
                                    .with {
                                        $0.email = email
                                        $0.password = "durable password"
                                        $0.displayName = "User \(i)"
                                    }
                                )
                                acknowledged.emails.withLock { $0.append(email) }
                            } catch {
                                return  // the server died: stop this worker
                            }
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(400 + 150 * round))
                server.kill()
            }
            await pool.close()
        }
        let emails = acknowledged.emails.withLock { $0 }
        #expect(emails.count > 20, "the load produced too few writes to prove anything")

        // Restarted on the same file: every acknowledged account exists (right password, not yet
        // verified → FAILED_PRECONDITION; a missing account would be UNAUTHENTICATED).
        let server = try ServerProcess(databasePath: path)
        defer { server.kill() }
        try await withClientConnection(target: .host("127.0.0.1", port: server.port)) { connection in
            let accounts = AccountsClient(transport: connection)
            var missing: [String] = []
            for email in emails {
                do {
                    _ = try await accounts.logIn(
                        .with {
                            $0.email = email
                            $0.password = "durable password"
                        }
                    )
                } catch let error as RPCError where error.code == .failedPrecondition {
                    continue
                } catch {
                    missing.append(email)
                    if missing.count > 5 { break }
                }
            }
            #expect(missing.isEmpty, "acknowledged but lost: \(missing)")
        }
        server.kill()
        let database = try SQLiteDatabase(path: path)
        let check = try await database.pool.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
        #expect(check == "ok")
    }
}
