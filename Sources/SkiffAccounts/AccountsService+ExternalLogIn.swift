import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// Log-in through an external OpenID Connect identity provider (campus SSO, Google, …).
extension AccountsService {
    /// The largest ID token accepted, in bytes.
    public static let idTokenMaximumBytes = 16_384

    public func listIdentityProviders(
        request: Skiff_Accounts_V1_ListIdentityProvidersRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_ListIdentityProvidersResponse {
        .with {
            $0.providers = (identityProviders?.providers ?? []).map { provider in
                .with {
                    $0.issuer = provider.issuer
                    $0.clientID = provider.clientID
                }
            }
        }
    }

    public func beginExternalLogIn(
        request: Skiff_Accounts_V1_BeginExternalLogInRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_BeginExternalLogInResponse {
        guard identityProviders != nil else { throw Self.noProviders }
        let now = time.now()
        try externalLogInsBySource.acquire(userID: "begin " + Self.host(of: context.peer), now: now)
        guard let issued = nonces.issue(now: now) else {
            throw RPCError(
                code: .resourceExhausted,
                message: "Too many external log-ins are under way; try again in a minute.",
                metadata: ["retry-after": .string("60")]
            )
        }
        return .with {
            $0.nonce = issued.nonce
            $0.expiresAt = Google_Protobuf_Timestamp(date: issued.expiresAt)
        }
    }

    public func logInWithIdToken(
        request: Skiff_Accounts_V1_LogInWithIdTokenRequest,
        context: ServerContext
    ) async throws -> Skiff_Accounts_V1_LogInWithIdTokenResponse {
        try AccountsRequestBounds.check(request)
        guard !request.idToken.isEmpty else { throw DomainError(.invalidArgument, "id_token is empty.") }
        guard !request.nonce.isEmpty else {
            throw DomainError(.invalidArgument, "nonce is empty: use the one BeginExternalLogIn returned.")
        }
        guard let identityProviders else { throw Self.noProviders }
        let now = time.now()
        try externalLogInsBySource.acquire(userID: "token " + Self.host(of: context.peer), now: now)
        let refused = DomainError(
            .unauthenticated,
            "The ID token was not accepted (signature, issuer, audience, expiry or nonce); start again with "
                + "BeginExternalLogIn."
        )
        let verified: VerifiedIdentity
        do {
            verified = try await identityProviders.verify(request.idToken, now: now)
        } catch {
            throw refused
        }
        // The nonce is used up only by a token that carries it, so a wrong token cannot burn someone's nonce.
        guard verified.nonce == request.nonce, nonces.consume(request.nonce, now: now) else { throw refused }

        var email: String?
        var emailProblem = "The identity provider did not give a verified e-mail address."
        if let address = verified.email, verified.emailVerified {
            do {
                email = try rules.validateEmail(address)
            } catch {
                emailProblem = error.message
            }
        }
        let local = (email ?? "").split(separator: "@").first.map(String.init) ?? ""
        let name =
            (try? AccountRules.validateDisplayName(String((verified.name ?? "").prefix(50))))
            ?? (try? AccountRules.validateDisplayName(String(local.prefix(50)))) ?? "Skiff user"
        let outcome: AccountLifecycle.ExternalLogIn
        do {
            outcome = try await store.logInExternally(
                verified.identity,
                email: email,
                newAccount: Account(
                    id: EntityID.make(.account),
                    email: email ?? "",
                    displayName: name,
                    passwordHash: Account.noPasswordHash,
                    createdAt: now
                ),
                now: now
            )
        } catch let error as DomainError where error == AccountsStoreError.externalEmailUnusable {
            throw DomainError(
                .permissionDenied,
                emailProblem + " Link requires a verified address this server accepts."
            )
        }
        if case .linking(let account) = outcome {
            // A provider now opens this account: its owner hears of it, as of any new way in.
            let issuer = verified.identity.issuer
            afterAnswering("external identity link notice") { [self] in
                try await mailer.send(
                    MailMessage(
                        to: account.email,
                        subject: "A new way to log in to your Skiff account",
                        body: "Your Skiff account can now also be logged in to through \(issuer), which confirmed "
                            + "this address. If it was not you, change your password and contact support."
                    )
                )
            }
        }
        let (token, expiresAt) = try await startSession(
            accountID: outcome.account.id,
            rememberMe: request.rememberMe,
            now: now
        )
        return .with {
            $0.sessionToken = token.value
            $0.expiresAt = Google_Protobuf_Timestamp(date: expiresAt)
            $0.userID = outcome.account.id
            if case .creating = outcome { $0.created = true }
        }
    }

    static let noProviders = DomainError(
        .failedPrecondition,
        "This server accepts no external identity provider; log in with an e-mail address and password."
    )
}
