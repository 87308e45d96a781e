import ArgumentParser
import Foundation
import Logging
import NIOCore
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffPostgres
import SkiffServer
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Storage backends every service test runs against (PostgreSQL on the cluster dev/test.sh starts).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite
    case postgres
    var testDescription: String { rawValue }
}

/// Runs the production object graph (``Application``) on 127.0.0.1, port 0, with the given
/// storage and the service token ``testServiceToken``, and hands `body` a connection to it.
///
/// The application is built from an ``ApplicationConfiguration`` value that `configure` may change.
/// `extraArguments` are for tests of the command line itself: when given, the configuration comes
/// from `skiff-server`'s options instead (the same base, plus those arguments).
func withApp<R: Sendable>(
    _ backend: Backend,
    path: String? = nil,
    extraArguments: [String] = [],
    configure: (inout ApplicationConfiguration) -> Void = { _ in },
    _ body: @Sendable (Application, ClientConnection) async throws -> R
) async throws -> R {
    // On PostgreSQL a path that is not a `postgres://` location (a test's scratch SQLite path) stands
    // for a new database.
    if backend == .postgres, !(path?.hasPrefix("postgres") ?? false) {
        return try await TestPostgres.withDatabaseLocation { location in
            try await withApp(backend, path: "\(location)", extraArguments: extraArguments, configure: configure, body)
        }
    }
    guard backend == .memory || path != nil else {
        return try await withTemporaryDatabasePath { path in
            try await withApp(backend, path: path, extraArguments: extraArguments, configure: configure, body)
        }
    }
    var configuration: ApplicationConfiguration
    let storage = StorageSelection(
        defaultBackend: try StorageSelection.parse([backend == .memory ? "memory" : backend.storageOption(path!)])
            .defaultBackend
    )
    if extraArguments.isEmpty {
        configuration = .forTests(storage: storage)
    } else {
        let storage = backend == .memory ? "memory" : backend.storageOption(path!)
        configuration = try ServerOptions.parse(
            [
                "--port", "0", "--storage", storage, "--password-hash-rounds", "1000", "--service-token",
                testServiceToken,
            ]
                + extraArguments
        ).applicationConfiguration()
    }
    configure(&configuration)
    return try await withTestApplication(configuration) { test in try await body(test.app, test.connection!) }
}

extension Backend {
    /// The `--storage` value of this backend at `path` (a SQLite file, or a `postgres://` location).
    func storageOption(_ path: String) -> String {
        switch self {
        case .memory: "memory"
        case .sqlite: "sqlite:\(path)"
        case .postgres: path
        }
    }
}

/// Whether an e-mail to `address` whose body contains `text` arrives within 2 s (some are sent after answering).
func mailArrives(in mailer: OutboxMailer, to address: String, containing text: String) async -> Bool {
    for _ in 0..<200 {
        if mailer.messages(to: address).contains(where: { $0.body.contains(text) }) { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

typealias AccountsClient = Skiff_Accounts_V1_Accounts.Client

/// Signs up, verifies and logs in a user; returns (user id, bearer metadata).
func signUpAndLogIn(
    _ accounts: AccountsClient,
    mailer: OutboxMailer,
    email: String,
    name: String,
    password: String = "correct horse battery"
) async throws -> (id: String, auth: Metadata) {
    let user = try await signedInUser(accounts, mailer: mailer, email: email, name: name, password: password)
    return (user.id, user.auth)
}

/// What a streaming call received, shared between the reading task and the test.
final class StreamLog<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }

    var all: [Element] { items.withLock { $0 } }

    /// Polls until `condition` holds or the time is up; returns whether it held.
    func wait(milliseconds: Int, until condition: ([Element]) -> Bool) async -> Bool {
        for _ in 0..<(milliseconds / 10) {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(all)
    }
}

/// The signed-up (not yet verified) accounts of `emails` that `accounts` does not know, at most 6:
/// the right password on an unverified account is FAILED_PRECONDITION, on a missing one UNAUTHENTICATED.
func missingSignUps(_ emails: [String], password: String, on accounts: AccountsClient) async -> [String] {
    var missing: [String] = []
    for email in emails where missing.count <= 5 {
        do {
            _ = try await accounts.logIn(
                .with {
                    $0.email = email
                    $0.password = password
                }
            )
        } catch let error as RPCError where error.code == .failedPrecondition {
            continue
        } catch {
            missing.append(email)
        }
    }
    return missing
}

/// A verified account with the password "shared password", straight in a PostgreSQL database (for
/// servers in other processes, whose mail outboxes tests cannot read); its id.
@discardableResult
func seedVerifiedAccount(_ storage: PostgresStorage, email: String, name: String) async throws -> String {
    try await storage.accountsStore().createAccount(
        Account(
            id: EntityID.make(.account),
            email: email,
            displayName: name,
            passwordHash: try await PasswordHasher(rounds: 1_000).hash("shared password"),
            verified: true,
            createdAt: Date()
        )
    ).id
}
