import Foundation
import JWTKit
import SkiffDomain
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An OpenID Connect provider the operator configured (`--oidc-issuer`, `--oidc-client-id`,
/// `--oidc-jwks`): whose ID tokens Accounts accepts, for which client, verified with which keys.
public struct IdentityProviderConfiguration: Sendable, Hashable {
    /// The issuer, exactly as the tokens' `iss`.
    public var issuer: String
    /// This server's client id at the provider: the tokens' `aud` must include it.
    public var clientID: String
    /// The provider's signing keys, a JSON Web Key Set document.
    public var jwksJSON: String

    public init(issuer: String, clientID: String, jwksJSON: String) {
        self.issuer = issuer
        self.clientID = clientID
        self.jwksJSON = jwksJSON
    }

    /// The largest JWKS document read, in bytes.
    public static let jwksMaximumBytes = 1_024 * 1_024

    /// Reads a JWKS document from a file path, a `file:` URL or an `https:` URL (fetched once, now).
    public static func loadJWKS(from location: String) throws -> String {
        let url: URL
        if location.hasPrefix("https://") || location.hasPrefix("http://") || location.hasPrefix("file:") {
            guard let parsed = URL(string: location) else {
                throw InvalidProvider("the JWKS URL \(location) is malformed")
            }
            url = parsed
        } else {
            url = URL(fileURLWithPath: location)
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw InvalidProvider("cannot read the JWKS at \(location): \(error.localizedDescription)")
        }
        guard data.count <= jwksMaximumBytes, let text = String(data: data, encoding: .utf8) else {
            throw InvalidProvider("the JWKS at \(location) is over \(jwksMaximumBytes) bytes or not UTF-8")
        }
        return text
    }

    /// Checks the configuration: a non-empty issuer and client id, and a JWKS with at least one key.
    public func validate() throws {
        guard !issuer.isEmpty, issuer.utf8.count <= 1_024 else {
            throw InvalidProvider("an issuer is empty or too long")
        }
        guard !clientID.isEmpty, clientID.utf8.count <= 1_024 else {
            throw InvalidProvider("the client id of \(issuer) is empty or too long")
        }
        let jwks: JWKS
        do {
            jwks = try JSONDecoder().decode(JWKS.self, from: Data(jwksJSON.utf8))
        } catch {
            throw InvalidProvider("the JWKS of \(issuer) is not a JSON Web Key Set: \(error)")
        }
        guard !jwks.keys.isEmpty else { throw InvalidProvider("the JWKS of \(issuer) has no keys") }
    }

    /// Why a provider's configuration was refused.
    public struct InvalidProvider: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}

/// The claims of an OpenID Connect ID token that Skiff reads. Their rules are checked by
/// ``IdentityTokenVerifier`` with the server's clock, after the signature.
struct IDTokenClaims: JWTPayload {
    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case subject = "sub"
        case audience = "aud"
        case expires = "exp"
        case nonce, email, name
        case emailVerified = "email_verified"
    }

    var issuer: String
    var subject: String
    var audience: AudienceClaim
    var expires: ExpirationClaim
    var nonce: String?
    var email: String?
    var emailVerified: BoolClaim?
    var name: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// What a verified ID token says about its user.
public struct VerifiedIdentity: Hashable, Sendable {
    public var identity: ExternalIdentity
    /// The address, when the token has one.
    public var email: String?
    /// Whether the provider verified the address.
    public var emailVerified: Bool
    /// The user's name at the provider, if given.
    public var name: String?
    /// The token's nonce.
    public var nonce: String?
}

/// Verifies ID tokens of the configured providers: the signature with the provider's keys (vapor/jwt-kit),
/// then issuer, audience and expiry with the server's clock. The nonce is the caller's to check.
public final class IdentityTokenVerifier: Sendable {
    /// The clock skew allowed on `exp`.
    public static let clockSkew: TimeInterval = 60

    /// The providers, in the operator's order.
    public let providers: [IdentityProviderConfiguration]
    private let keys: [String: JWTKeyCollection]
    private let loaded = Mutex<Set<String>>([])

    /// Creates a verifier; the configurations are checked with ``IdentityProviderConfiguration/validate()``.
    public init(providers: [IdentityProviderConfiguration]) throws {
        for provider in providers { try provider.validate() }
        self.providers = providers
        var keys: [String: JWTKeyCollection] = [:]
        for provider in providers { keys[provider.issuer] = JWTKeyCollection() }
        self.keys = keys
    }

    /// Why a token was refused (never shown in detail to the caller: one message for all).
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The identity a token proves.
    ///
    /// - Throws: ``Refused`` for a token that is malformed, from an unknown issuer, badly signed, for
    ///   another audience or expired.
    public func verify(_ token: String, now: Date) async throws -> VerifiedIdentity {
        let unverified: IDTokenClaims
        do {
            unverified = try await JWTKeyCollection().unverified(token, as: IDTokenClaims.self)
        } catch {
            throw Refused("malformed token")
        }
        guard let provider = providers.first(where: { $0.issuer == unverified.issuer }),
            let collection = keys[provider.issuer]
        else { throw Refused("unknown issuer") }
        try await load(provider, into: collection)
        let claims: IDTokenClaims
        do {
            claims = try await collection.verify(token, as: IDTokenClaims.self)
        } catch {
            throw Refused("bad signature")
        }
        guard claims.issuer == provider.issuer else { throw Refused("unknown issuer") }
        guard claims.audience.value.contains(provider.clientID) else { throw Refused("another audience") }
        guard claims.expires.value.addingTimeInterval(Self.clockSkew) > now else { throw Refused("expired") }
        guard !claims.subject.isEmpty, claims.subject.utf8.count <= 255 else { throw Refused("bad subject") }
        return VerifiedIdentity(
            identity: ExternalIdentity(issuer: claims.issuer, subject: claims.subject),
            email: claims.email,
            emailVerified: claims.emailVerified?.value ?? false,
            name: claims.name,
            nonce: claims.nonce
        )
    }

    /// Adds a provider's keys to its collection the first time they are needed.
    private func load(_ provider: IdentityProviderConfiguration, into collection: JWTKeyCollection) async throws {
        guard !loaded.withLock({ $0.contains(provider.issuer) }) else { return }
        _ = try await collection.add(jwksJSON: provider.jwksJSON)
        loaded.withLock { _ = $0.insert(provider.issuer) }
    }
}

/// The nonces handed out by BeginExternalLogIn: each valid for ``lifetime`` and one log-in. At most
/// ``capacity`` are outstanding (expired ones are dropped first); past it, no new one is handed out.
public final class NonceBook: Sendable {
    /// How long a nonce is accepted.
    public static let lifetime: TimeInterval = 600
    /// The most nonces outstanding.
    public let capacity: Int
    private let nonces = Mutex<[String: Date]>([:])

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// A new nonce and when it expires, or `nil` when ``capacity`` nonces are outstanding.
    public func issue(now: Date) -> (nonce: String, expiresAt: Date)? {
        let nonce = SecretToken.generate().value
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        return nonces.withLock { nonces in
            if nonces.count >= capacity { nonces = nonces.filter { $0.value > now } }
            guard nonces.count < capacity else { return nil }
            nonces[nonce] = expiresAt
            return (nonce, expiresAt)
        }
    }

    /// Uses a nonce up: whether it was outstanding and unexpired.
    public func consume(_ nonce: String, now: Date) -> Bool {
        nonces.withLock { nonces in
            guard let expiresAt = nonces.removeValue(forKey: nonce) else { return false }
            return expiresAt > now
        }
    }
}
