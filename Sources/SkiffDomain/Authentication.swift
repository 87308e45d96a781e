public import SkiffCore

/// The signed-in user of a call, attached by ``AuthenticationInterceptor``.
public struct AuthenticatedUser: Hashable, Sendable {
    /// The account id.
    public let id: String
    /// The bearer token the call carried (Accounts needs it to end that session).
    public let sessionToken: String

    public init(id: String, sessionToken: String) {
        self.id = id
        self.sessionToken = sessionToken
    }
}

extension AuthenticatedUser {
    /// The user on whose behalf the current task runs: set by ``AuthenticationInterceptor`` for
    /// the duration of a handler, so that calls it makes to other services through typed clients
    /// carry the same credentials (see ``ForwardCredentialsInterceptor``).
    @TaskLocal public static var current: AuthenticatedUser?
}

/// A client interceptor for service-to-service calls: a call made while handling a request
/// carries the caller's `authorization`, so the other service applies the same permissions.
public struct ForwardCredentialsInterceptor: ClientInterceptor {
    public init() {}

    public func intercept<Result: Sendable>(
        method: MethodDescriptor,
        options: CallOptions,
        next: (CallOptions) async throws -> Result
    ) async throws -> Result {
        guard let user = AuthenticatedUser.current, options.metadata.first("authorization") == nil else {
            return try await next(options)
        }
        var options = options
        options.metadata.add("authorization", "Bearer \(user.sessionToken)")
        return try await next(options)
    }
}

/// The ``Attributes`` key under which the signed-in user is found.
public enum AuthenticatedUserKey: AttributeKey {
    public typealias Value = AuthenticatedUser
}

/// Turns a bearer token into the user it belongs to. Accounts implements it.
public protocol SessionAuthenticator: Sendable {
    /// The user of a live session, or `nil` when the token is unknown or expired.
    func authenticate(token: String) async throws -> AuthenticatedUser?
}

/// The one server interceptor every service authenticates through.
///
/// A call without `authorization` metadata goes on as a guest (reads guests may do still
/// work; writes ask for a user through ``SkiffCore/ServerContext/requireUser()``). A call with a
/// malformed header, or a token that is unknown or expired, fails with UNAUTHENTICATED before
/// its handler runs — reads included, so a client learns at once that it must log in again.
public struct AuthenticationInterceptor: ServerInterceptor {
    public let authenticator: any SessionAuthenticator

    public init(authenticator: any SessionAuthenticator) {
        self.authenticator = authenticator
    }

    public func intercept(context: ServerContext, next: (ServerContext) async throws -> Void) async throws {
        guard let header = context.metadata.first("authorization") else {
            return try await next(context)
        }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix), header.count > prefix.count else {
            throw RPCError(
                code: .unauthenticated,
                message: "The authorization metadata must be \"Bearer <session token>\"."
            )
        }
        let token = String(header.dropFirst(prefix.count))
        guard let user = try await authenticator.authenticate(token: token) else {
            throw RPCError(
                code: .unauthenticated,
                message: "The session token is invalid or has expired; log in again."
            )
        }
        var context = context
        context.attributes[AuthenticatedUserKey.self] = user
        try await AuthenticatedUser.$current.withValue(user) { try await next(context) }
    }
}

extension ServerContext {
    /// The signed-in user, if the call carried a valid session token.
    public var user: AuthenticatedUser? { attributes[AuthenticatedUserKey.self] }

    /// The signed-in user, for calls that need one.
    ///
    /// - Throws: UNAUTHENTICATED, saying how to fix it, when the call carried no session token.
    public func requireUser() throws -> AuthenticatedUser {
        guard let user else {
            throw RPCError(
                code: .unauthenticated,
                message: "This call needs a signed-in user: send \"authorization: Bearer <session token>\" from LogIn."
            )
        }
        return user
    }
}
