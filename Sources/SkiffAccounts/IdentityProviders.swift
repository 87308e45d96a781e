import DequeModule
public import Foundation
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
        guard !location.hasPrefix("http://") else {
            throw InvalidProvider("the JWKS URL \(location) is not https: keys must not come over plain HTTP")
        }
        if location.hasPrefix("https://") || location.hasPrefix("file:") {
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

    /// Checks the configuration: a non-empty issuer and client id, and a JWKS with at least one signing key.
    public func validate() throws {
        guard !issuer.isEmpty, issuer.utf8.count <= 1_024 else {
            throw InvalidProvider("an issuer is empty or too long")
        }
        guard !clientID.isEmpty, clientID.utf8.count <= 1_024 else {
            throw InvalidProvider("the client id of \(issuer) is empty or too long")
        }
        _ = try signingKeys()
    }

    /// Why a provider's configuration was refused.
    public struct InvalidProvider: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// A signing key of the JWKS: its id and the one algorithm it verifies.
    struct SigningKey: Hashable, Sendable {
        var kid: String?
        var alg: String
    }

    /// The JWKS's signing keys, each pinned to one algorithm (its `alg`, else the one its type and curve
    /// imply: RS256 for RSA, ES256/ES384/ES512 for P-256/P-384/P-521, EdDSA for Ed25519), and the JWKS
    /// rewritten with those algorithms and without encryption keys (`"use": "enc"`). Pinning matters: a key
    /// without `alg` would otherwise take the algorithm of whatever token first names it.
    func signingKeys() throws -> (keys: [SigningKey], jwksJSON: String) {
        guard let document = try? JSONSerialization.jsonObject(with: Data(jwksJSON.utf8)) as? [String: Any],
            let entries = document["keys"] as? [[String: Any]]
        else { throw InvalidProvider("the JWKS of \(issuer) is not a JSON Web Key Set ({\"keys\": [...]})") }
        var keys: [SigningKey] = []
        var pinned: [[String: Any]] = []
        for var entry in entries where (entry["use"] as? String ?? "sig") == "sig" {
            let kty = entry["kty"] as? String ?? ""
            let implied: String?
            switch (kty, entry["crv"] as? String) {
            case ("RSA", _): implied = "RS256"
            case ("EC", "P-256"): implied = "ES256"
            case ("EC", "P-384"): implied = "ES384"
            case ("EC", "P-521"): implied = "ES512"
            case ("OKP", "Ed25519"): implied = "EdDSA"
            default: implied = nil
            }
            guard let alg = entry["alg"] as? String ?? implied, alg != "none", !alg.hasPrefix("HS") else {
                throw InvalidProvider("the JWKS of \(issuer) has a key of an unsupported type (\(kty))")
            }
            entry["alg"] = alg
            keys.append(SigningKey(kid: entry["kid"] as? String, alg: alg))
            pinned.append(entry)
        }
        guard !keys.isEmpty else { throw InvalidProvider("the JWKS of \(issuer) has no signing keys") }
        if keys.count > 1, keys.contains(where: { $0.kid == nil }) {
            throw InvalidProvider("the JWKS of \(issuer) has several keys, not all with a kid")
        }
        let rewritten = try JSONSerialization.data(withJSONObject: ["keys": pinned])
        do {
            _ = try JSONDecoder().decode(JWKS.self, from: rewritten)
        } catch {
            throw InvalidProvider("the JWKS of \(issuer) is not a JSON Web Key Set: \(error)")
        }
        return (keys, String(decoding: rewritten, as: UTF8.self))
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
        case notBefore = "nbf"
        case authorizedParty = "azp"
        case nonce, email, name
        case emailVerified = "email_verified"
    }

    var issuer: String
    var subject: String
    var audience: AudienceClaim
    var expires: ExpirationClaim
    var notBefore: NotBeforeClaim?
    var authorizedParty: String?
    var nonce: String?
    var email: String?
    var emailVerified: BoolClaim?
    var name: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The header fields of a JWT that choose its key.
private struct TokenHeader: Decodable {
    var alg: String?
    var kid: String?

    /// The header of a compact JWT, or `nil` if it is malformed.
    static func of(_ token: String) -> TokenHeader? {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Base64URL.decode(String(first))
        else { return nil }
        return try? JSONDecoder().decode(TokenHeader.self, from: data)
    }
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

/// Verifies ID tokens of the configured providers: the token must name one of the provider's keys and that
/// key's (pinned) algorithm; the signature is checked with vapor/jwt-kit; then issuer, audience (and
/// `azp` when there are several), expiry and not-before with the server's clock. The nonce is the
/// caller's to check.
public final class IdentityTokenVerifier: Sendable {
    /// The clock skew allowed on `exp` and `nbf`.
    public static let clockSkew: TimeInterval = 60

    private typealias PinnedKeys = (keys: [IdentityProviderConfiguration.SigningKey], jwksJSON: String)

    /// The providers, in the operator's order.
    public let providers: [IdentityProviderConfiguration]
    private let keys: [String: JWTKeyCollection]
    private let pinnedKeys: [String: PinnedKeys]
    private let loaded = Mutex<Set<String>>([])

    /// Creates a verifier; the configurations are checked with ``IdentityProviderConfiguration/validate()``.
    public init(providers: [IdentityProviderConfiguration]) throws {
        var keys: [String: JWTKeyCollection] = [:]
        var pinnedKeys: [String: PinnedKeys] = [:]
        for provider in providers {
            try provider.validate()
            keys[provider.issuer] = JWTKeyCollection()
            pinnedKeys[provider.issuer] = try provider.signingKeys()
        }
        self.providers = providers
        self.keys = keys
        self.pinnedKeys = pinnedKeys
    }

    /// Why a token was refused (never shown in detail to the caller: one message for all).
    public struct Refused: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The identity a token proves.
    ///
    /// - Throws: ``Refused`` for a token that is malformed, from an unknown issuer, names an unknown key or
    ///   another algorithm than its key's, is badly signed, for another audience or party, expired or not
    ///   yet valid.
    public func verify(_ token: String, now: Date) async throws -> VerifiedIdentity {
        let unverified: IDTokenClaims
        do {
            unverified = try await JWTKeyCollection().unverified(token, as: IDTokenClaims.self)
        } catch {
            throw Refused("malformed token")
        }
        guard let provider = providers.first(where: { $0.issuer == unverified.issuer }),
            let collection = keys[provider.issuer], let pinned = pinnedKeys[provider.issuer]
        else { throw Refused("unknown issuer") }
        // The token names one of the provider's keys (by kid; none needed when there is only one) and that
        // key's algorithm: never a key the library would pick by default, nor another algorithm.
        guard let header = TokenHeader.of(token),
            let key = header.kid.map({ kid in pinned.keys.first { $0.kid == kid } })
                ?? (pinned.keys.count == 1 ? pinned.keys.first : nil),
            header.alg == key.alg
        else { throw Refused("unknown key or algorithm") }
        try await load(provider, jwksJSON: pinned.jwksJSON, into: collection)
        let claims: IDTokenClaims
        do {
            claims = try await collection.verify(token, as: IDTokenClaims.self)
        } catch {
            throw Refused("bad signature")
        }
        guard claims.issuer == provider.issuer else { throw Refused("unknown issuer") }
        guard claims.audience.value.contains(provider.clientID) else { throw Refused("another audience") }
        // With several audiences the token must have been issued to this client (OpenID Connect Core 3.1.3.7).
        if claims.audience.value.count > 1 || claims.authorizedParty != nil {
            guard claims.authorizedParty == provider.clientID else { throw Refused("another authorized party") }
        }
        guard claims.expires.value.addingTimeInterval(Self.clockSkew) > now else { throw Refused("expired") }
        if let notBefore = claims.notBefore?.value {
            guard notBefore <= now.addingTimeInterval(Self.clockSkew) else { throw Refused("not yet valid") }
        }
        guard !claims.subject.isEmpty, claims.subject.utf8.count <= 255 else { throw Refused("bad subject") }
        return VerifiedIdentity(
            identity: ExternalIdentity(issuer: claims.issuer, subject: claims.subject),
            email: claims.email,
            emailVerified: claims.emailVerified?.value ?? false,
            name: claims.name,
            nonce: claims.nonce
        )
    }

    /// Adds a provider's (pinned) keys to its collection the first time they are needed.
    private func load(
        _ provider: IdentityProviderConfiguration,
        jwksJSON: String,
        into collection: JWTKeyCollection
    ) async throws {
        guard !loaded.withLock({ $0.contains(provider.issuer) }) else { return }
        _ = try await collection.add(jwksJSON: jwksJSON)
        loaded.withLock { _ = $0.insert(provider.issuer) }
    }
}

/// The nonces handed out by BeginExternalLogIn: each valid for ``lifetime`` and one log-in. At most
/// ``capacity`` unexpired ones are outstanding; past it, no new one is handed out. Expired nonces leave in
/// the order they were issued, in constant time each, so a flood costs no scans.
public final class NonceBook: Sendable {
    /// How long a nonce is accepted.
    public static let lifetime: TimeInterval = 600
    /// The most nonces outstanding.
    public let capacity: Int

    private struct State {
        var expiries: [String: Date] = [:]
        /// Nonces in the order they were issued, so by expiry.
        var order: Deque<(nonce: String, expiresAt: Date)> = []
    }

    private let state = Mutex(State())

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// A new nonce and when it expires, or `nil` when ``capacity`` unexpired nonces are outstanding.
    public func issue(now: Date) -> (nonce: String, expiresAt: Date)? {
        let nonce = SecretToken.generate().value
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        return state.withLock { state in
            while let first = state.order.first, first.expiresAt <= now || state.expiries[first.nonce] == nil {
                state.order.removeFirst()
                if first.expiresAt <= now { state.expiries[first.nonce] = nil }
            }
            // Used nonces stay in `order` until their turn: bound it too.
            guard state.expiries.count < capacity, state.order.count < 2 * capacity else { return nil }
            state.expiries[nonce] = expiresAt
            state.order.append((nonce, expiresAt))
            return (nonce, expiresAt)
        }
    }

    /// Uses a nonce up: whether it was outstanding and unexpired.
    public func consume(_ nonce: String, now: Date) -> Bool {
        state.withLock { state in
            guard let expiresAt = state.expiries.removeValue(forKey: nonce) else { return false }
            return expiresAt > now
        }
    }
}
