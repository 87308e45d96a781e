public import SkiffDomain

/// Resolves bearer tokens to users through the accounts store: what the shared
/// ``SkiffDomain/AuthenticationInterceptor`` asks on every call that carries a token.
public struct AccountsAuthenticator: SessionAuthenticator {
    let store: any AccountsStore
    let time: any TimeSource

    public init(store: any AccountsStore, time: any TimeSource = SystemTimeSource()) {
        self.store = store
        self.time = time
    }

    public func authenticate(token: String) async throws -> AuthenticatedUser? {
        guard let session = try await store.session(tokenHash: TokenHash(of: token), now: time.now()) else {
            return nil
        }
        return AuthenticatedUser(id: session.accountID, sessionToken: token)
    }
}
