public import SkiffCore

/// The signed-in user of a call, attached by ``AuthenticationInterceptor``.
public struct AuthenticatedUser: Hashable, Sendable {
    /// The account id.
    public let id: String
    /// The bearer token the call carried (Accounts needs it to end that session).
    public let sessionToken: String
    /// Whether the caller is another Skiff service rather than a person (see
    /// ``AuthenticationInterceptor/serviceToken``). Services may read what a listing's seller
    /// reads and mark listings sold on the seller's behalf; they have no account id.
    public let isService: Bool

    public init(id: String, sessionToken: String, isService: Bool = false) {
        self.id = id
        self.sessionToken = sessionToken
        self.isService = isService
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
    /// The secret other Skiff services present (`authorization: Bearer <token>`) when they call
    /// on their own behalf; `nil` accepts no service callers. Generated at startup for services
    /// sharing the process.
    public let serviceToken: String?

    public init(authenticator: any SessionAuthenticator, serviceToken: String? = nil) {
        self.authenticator = authenticator
        self.serviceToken = serviceToken
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
        if let serviceToken, Self.constantTimeEquals(Array(token.utf8), Array(serviceToken.utf8)) {
            let service = AuthenticatedUser(id: "", sessionToken: token, isService: true)
            var context = context
            context.attributes[AuthenticatedUserKey.self] = service
            return try await AuthenticatedUser.$current.withValue(service) { try await next(context) }
        }
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

extension AuthenticationInterceptor {
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// A client interceptor for calls a service makes on its own behalf: they carry the service
/// token instead of a user's session.
public struct ServiceCredentialsInterceptor: ClientInterceptor {
    let token: String

    public init(token: String) { self.token = token }

    public func intercept<Result: Sendable>(
        method: MethodDescriptor,
        options: CallOptions,
        next: (CallOptions) async throws -> Result
    ) async throws -> Result {
        var options = options
        options.metadata.replace("authorization", "Bearer \(token)")
        return try await next(options)
    }
}

extension ServerContext {
    /// The signed-in user, if the call carried a valid session token.
    public var user: AuthenticatedUser? { attributes[AuthenticatedUserKey.self] }

    /// The signed-in user, for calls that need one.
    ///
    /// - Throws: UNAUTHENTICATED, saying how to fix it, when the call carried no session token.
    public func requireUser() throws -> AuthenticatedUser {
        guard let user, !user.isService else {
            throw RPCError(
                code: .unauthenticated,
                message: "This call needs a signed-in user: send \"authorization: Bearer <session token>\" from LogIn."
            )
        }
        return user
    }

    /// Checks that the caller is another Skiff service (it presented the service token), for
    /// service-only calls.
    ///
    /// - Throws: UNAUTHENTICATED when the call carried no credentials; PERMISSION_DENIED when it
    ///   carried a user's session.
    public func requireService() throws {
        guard let user else {
            throw RPCError(
                code: .unauthenticated,
                message: "This call is for Skiff services only: send \"authorization: Bearer <service token>\"."
            )
        }
        guard user.isService else {
            throw RPCError(code: .permissionDenied, message: "Only Skiff services may make this call, not users.")
        }
    }
}
