public import ServiceLifecycle
import SkiffAPI
public import SkiffClient
import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// Sends each call by its service: to the services in this process, or over skiff/1 to the upstream
/// that runs it. The services' typed clients sit on it (through ``LateBoundTransport``), so a
/// service calls another the same way wherever that one runs.
struct ServiceRoutingTransport: ForwardingClientTransport {
    /// The services in this process.
    let local: any ClientTransport
    /// The transports to other processes, by the qualified service name.
    let remote: [String: any ClientTransport]

    func destination(for method: MethodDescriptor) -> any ClientTransport {
        remote[method.service] ?? local
    }
}

/// The connections to the services this process does not run (``ServiceDeployment/upstreams``), one
/// balanced set of connections per service; run as a service so that they close, gracefully, once the
/// server has drained (put it before the server in a `ServiceGroup`).
public final class UpstreamConnections: Service, Sendable {
    /// The transport to each remote service, by the qualified service name.
    let transports: [String: BalancedClientTransport]

    /// Connections to every upstream of `deployment`. Each address's health is asked about the
    /// service itself once a second, so a process that does not run it (NOT_FOUND) or is shutting down
    /// (NOT_SERVING, GOAWAY) is skipped.
    init(_ deployment: ServiceDeployment) {
        var transports: [String: BalancedClientTransport] = [:]
        for (service, targets) in deployment.upstreams where !targets.isEmpty {
            var balancing = BalancedClientTransport.Configuration()
            balancing.healthCheckService = service.qualifiedName
            // A restarted upstream is back in rotation within a couple of seconds.
            let connection = ClientConfiguration(backoff: .init(maximum: .seconds(2)))
            transports[service.qualifiedName] = BalancedClientTransport(
                targets: targets,
                configuration: balancing,
                connection: connection
            )
        }
        self.transports = transports
    }

    /// Waits for the application's graceful shutdown, then closes every connection (calls in flight
    /// finish first).
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Closes every connection gracefully.
    public func close() async {
        await withTaskGroup(of: Void.self) { group in
            for transport in transports.values { group.addTask { await transport.close() } }
        }
    }
}

/// Checks session tokens with Accounts in another process (`GetMyAccount` with the caller's token),
/// for a process that does not run Accounts: every authenticated call costs one more call to
/// Accounts, and a log-out takes effect everywhere at once. An unknown token is UNAUTHENTICATED as in
/// one process; Accounts unreachable makes the call UNAVAILABLE; other errors of Accounts (overloaded,
/// say) are the call's.
struct AccountsClientAuthenticator: SessionAuthenticator {
    /// The Accounts client, over a transport that adds no credentials of its own.
    let client: Skiff_Accounts_V1_Accounts.Client

    func authenticate(token: String) async throws -> AuthenticatedUser? {
        // Session tokens are short printable ASCII (43 characters): anything else is no session here
        // either, and is not worth a call (nor could every such value travel as metadata).
        guard token.utf8.count <= Self.longestToken, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        do {
            let account = try await client.getMyAccount(
                .init(),
                metadata: ["authorization": "Bearer \(token)"],
                timeout: .seconds(10)
            ).account
            return AuthenticatedUser(id: account.userID, sessionToken: token)
        } catch let error as RPCError where error.code == .unauthenticated {
            return nil
        } catch let error as RPCError where error.code == .unavailable || error.code == .deadlineExceeded {
            // Accounts unreachable: the call cannot be authenticated now; the client may retry.
            throw RPCError(
                code: .unavailable,
                message:
                    "The session could not be checked: skiff.accounts.v1 could not be reached (\(error.code)); retry."
            )
        }
    }

    /// The longest token worth asking Accounts about.
    static let longestToken = 512
}
