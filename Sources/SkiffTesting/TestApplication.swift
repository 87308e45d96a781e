import Foundation
import NIOCore
public import SkiffAPI
public import SkiffAccounts
public import SkiffClient
public import SkiffCore
import SkiffServer
public import SkiffServerApp
import SwiftProtobuf

/// How a test reaches the application it started.
public enum TestTransport: String, Sendable, CaseIterable {
    /// skiff/1 over a real socket on 127.0.0.1 (every byte through the server's connection code).
    case socket
    /// In process, through the server's router and interceptors (no socket).
    case inProcess
}

/// The production object graph (``SkiffServerApp/Application``) started for one test, with a typed
/// client for every service. Get one from ``withTestApplication(_:transport:_:)``.
public struct TestApplication: Sendable {
    /// The application: its server, mailer, storage and housekeeping.
    public let app: Application
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// `127.0.0.1:PORT`, where the server listens.
    public var address: String { "127.0.0.1:\(port)" }
    /// How the clients below reach the application.
    public let transport: any ClientTransport
    /// The client connection, when ``transport`` is a socket.
    public var connection: ClientConnection? { transport as? ClientConnection }

    public var accounts: Skiff_Accounts_V1_Accounts.Client { .init(transport: transport) }
    public var listings: Skiff_Listings_V1_Listings.Client { .init(transport: transport) }
    public var bids: Skiff_Bids_V1_Bids.Client { .init(transport: transport) }
    public var chat: Skiff_Chat_V1_Chat.Client { .init(transport: transport) }
    public var lostFound: Skiff_Lostfound_V1_LostFound.Client { .init(transport: transport) }
    public var bucketList: Skiff_Bucketlist_V1_BucketList.Client { .init(transport: transport) }

    /// A user who signed up, verified their address from the e-mail the application sent, and
    /// logged in: what the app teams' flow does.
    public func signedInUser(
        email: String,
        name: String,
        password: String = "correct horse battery"
    ) async throws -> TestUser {
        try await SkiffTesting.signedInUser(accounts, mailer: app.mailer, email: email, name: name, password: password)
    }

    /// The token in the newest e-mail to `address` with a line `<label>: <token>`.
    public func mailedToken(to address: String, label: String) throws -> String {
        try app.mailer.token(to: address, label: label)
    }
}

/// Signs a user up through `accounts`, verifies their address with the token `mailer` received, and
/// logs them in.
public func signedInUser(
    _ accounts: Skiff_Accounts_V1_Accounts.Client,
    mailer: OutboxMailer,
    email: String,
    name: String,
    password: String = "correct horse battery"
) async throws -> TestUser {
    _ = try await accounts.signUp(
        .with {
            $0.email = email
            $0.password = password
            $0.displayName = name
        }
    )
    let verification = try mailer.token(to: email, label: "Verification token")
    _ = try await accounts.verifyEmail(.with { $0.token = verification })
    let session = try await accounts.logIn(
        .with {
            $0.email = email
            $0.password = password
        }
    )
    return TestUser(id: session.userID, sessionToken: session.sessionToken)
}

extension OutboxMailer {
    /// The token in the newest e-mail to `address` with a line `<label>: <token>`.
    public func token(to address: String, label: String) throws -> String {
        for message in messages(to: address).reversed() {
            for line in message.body.split(separator: "\n") where line.hasPrefix(label + ": ") {
                return String(line.dropFirst(label.count + 2))
            }
        }
        throw MissingMail(address: address, label: label)
    }
}

/// No e-mail to `address` has a line `<label>: …`.
public struct MissingMail: Error, CustomStringConvertible {
    public var address: String
    public var label: String
    public var description: String { "no e-mail to \(address) with a \(label)" }

    public init(address: String, label: String) {
        self.address = address
        self.label = label
    }
}

/// A signed-in user of a ``TestApplication``.
public struct TestUser: Sendable, Hashable {
    public var id: String
    public var sessionToken: String
    /// The metadata that authenticates a call as this user.
    public var auth: Metadata { ["authorization": .string("Bearer \(sessionToken)")] }
}

extension ApplicationConfiguration {
    /// What tests start from: port 0 on 127.0.0.1, in-memory storage (or `storage`), cheap
    /// password hashing and ``testServiceToken`` for service calls.
    public static func forTests(storage: StorageSelection = StorageSelection(defaultBackend: .memory)) -> Self {
        var configuration = ApplicationConfiguration(storage: storage)
        configuration.server.host = "127.0.0.1"
        configuration.server.port = 0
        configuration.passwordHashRounds = 1_000
        configuration.serviceToken = testServiceToken
        return configuration
    }
}

/// The service token of ``ApplicationConfiguration/forTests(storage:)``.
public let testServiceToken = "test-service-token-0123456789"

/// Starts the application `configuration` describes (validated first, as `skiff-server` does), runs
/// `body` with it and stops it, whatever `body` does.
@discardableResult
public func withTestApplication<R: Sendable>(
    _ configuration: ApplicationConfiguration = .forTests(),
    transport: TestTransport = .socket,
    _ body: @Sendable (TestApplication) async throws -> R
) async throws -> R {
    let app = try await Application(configuration: configuration, logger: quietLogger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.server.run() }
        defer { group.cancelAll() }
        let port = try await app.server.listeningAddress.port!
        switch transport {
        case .socket:
            return try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await body(TestApplication(app: app, port: port, transport: connection))
            }
        case .inProcess:
            let inProcess = InProcessTransport(router: app.server.router, interceptors: app.server.interceptors)
            return try await body(TestApplication(app: app, port: port, transport: inProcess))
        }
    }
}
