import ArgumentParser
import Foundation
import SkiffCore
import SkiffReflection
import SwiftProtobuf

/// `skiff login HOST:PORT --email E`: logs in and stores the session token for later calls.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in (skiff.accounts.v1.Accounts/LogIn) and store the session token for this server.",
        discussion: """
            The password is read from standard input (prompted for, without echo, on a terminal). \
            The token is stored in $XDG_CONFIG_HOME/skiff/sessions.json (or ~/.config/skiff/), mode \
            0600; later calls to the same HOST:PORT send `authorization: Bearer <token>`.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "The account's e-mail address.")
    var email: String

    @Flag(help: "Ask for a long-lived session.")
    var rememberMe = false

    static let service = "skiff.accounts.v1.Accounts"

    func run() async throws {
        let io = CommandIO.current
        guard let password = io.readPassword("Password: "), !password.isEmpty else {
            throw CLIError(.invalidArgument, "No password given on standard input.")
        }
        let request = JSONValue.object([
            .init("email", .string(email)), .init("password", .string(password)),
            .init("rememberMe", .bool(rememberMe)),
        ])
        let metadata = try connection.metadata(io: io, includeStoredToken: false)
        let timeout = try connection.parsedTimeout()
        let store = SessionStore(environment: io.environment)
        try await connection.withConnection { transport in
            let (_, registry) = try await SchemaSource.load(
                options: connection,
                transport: transport,
                onlyService: Self.service
            )
            guard let method = registry.services[Self.service]?.method.first(where: { $0.name == "LogIn" }) else {
                throw CLIError(.unimplemented, "The server has no \(Self.service)/LogIn.")
            }
            let box = TokenBox()
            try await Invoker(transcoder: ProtoJSONTranscoder(registry: registry)).call(
                service: Self.service,
                method: method,
                requests: .single(request.serialized()),
                options: CallOptions(metadata: metadata, timeout: timeout),
                transport: transport
            ) { response in
                if case .object(let members) = response,
                    case .string(let token)? = members.first(where: { $0.key == "sessionToken" })?.value
                {
                    box.set(token)
                }
            }
            guard let token = box.get() else { throw CLIError(.internal, "The LogIn response had no session token.") }
            try store.setToken(token, for: connection.target)
        }
        io.printError("Logged in to \(connection.target) as \(email); token stored in \(store.fileURL.path).")
    }
}

/// A lock-protected slot for the token the response handler finds.
final class TokenBox: @unchecked Sendable {
    private var token: String?
    private let lock = NSLock()
    func set(_ token: String) { lock.withLock { self.token = token } }
    func get() -> String? { lock.withLock { token } }
}
