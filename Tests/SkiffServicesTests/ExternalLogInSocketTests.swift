import ArgumentParser
import Crypto
import CryptoExtras
import Foundation
import JWTKit
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// An OpenID Connect provider made up for a test: an ES256 key pair, its JWKS in a temporary file, and
/// ID tokens signed with it.
struct TestIdentityProvider {
    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: [String]
        var exp: Int
        var nonce: String?
        var email: String?
        var email_verified: Bool?
        var name: String?
        var nbf: Int?
        var azp: String?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    let issuer: String
    let clientID: String
    let kid = "key-1"
    let key = ES256PrivateKey()
    let directory: URL

    init(issuer: String = "https://sso.campus.edu", clientID: String = "skiff-app") throws {
        self.issuer = issuer
        self.clientID = clientID
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("skiff-oidc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(jwksJSON.utf8).write(to: jwksURL)
    }

    var jwksURL: URL { directory.appendingPathComponent("jwks.json") }

    var jwksJSON: String {
        let parameters = key.publicKey.parameters!
        return """
            {"keys": [{"kty": "EC", "crv": "P-256", "x": "\(parameters.x)", "y": "\(parameters.y)", \
            "kid": "\(kid)", "alg": "ES256", "use": "sig"}]}
            """
    }

    /// The server options that configure this provider.
    var arguments: [String] {
        ["--oidc-issuer", issuer, "--oidc-client-id", clientID, "--oidc-jwks", jwksURL.path]
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    func claims(
        sub: String = "user-1",
        nonce: String?,
        email: String? = "pat@campus.edu",
        verified: Bool? = true,
        name: String? = "Pat Doe",
        expiresIn: TimeInterval = 300
    ) -> Claims {
        Claims(
            iss: issuer,
            sub: sub,
            aud: [clientID],
            exp: Int(Date().addingTimeInterval(expiresIn).timeIntervalSince1970),
            nonce: nonce,
            email: email,
            email_verified: verified,
            name: name,
            nbf: nil,
            azp: nil
        )
    }

    func sign(_ claims: Claims, with signingKey: ES256PrivateKey? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: signingKey ?? key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }
}

/// Issue 11 (BuckIt, campus SSO): log-in with an OpenID Connect ID token, over a real socket on both
/// backends, with keys made in the test and a JWKS file (no network).
@Suite("External log-in (OpenID Connect) over a socket")
struct ExternalLogInSocketTests {
    @Test(
        "A verified address creates an account, or links the one with the address; later log-ins find the link",
        arguments: Backend.allCases
    )
    func logIn(_ backend: Backend) async throws {
        let provider = try TestIdentityProvider()
        defer { provider.remove() }
        try await withApp(backend, extraArguments: provider.arguments) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let providers = try await accounts.listIdentityProviders(.init()).providers
            #expect(providers.map(\.issuer) == [provider.issuer] && providers.map(\.clientID) == [provider.clientID])

            func logIn(
                _ claims: (String) -> TestIdentityProvider.Claims
            ) async throws
                -> Skiff_Accounts_V1_LogInWithIdTokenResponse
            {
                let begun = try await accounts.beginExternalLogIn(.init())
                #expect(begun.nonce.count == 43)
                let token = try await provider.sign(claims(begun.nonce))
                return try await accounts.logInWithIdToken(
                    .with {
                        $0.idToken = token
                        $0.nonce = begun.nonce
                    }
                )
            }
            // A new user: created, verified, named from the token; a normal session.
            let first = try await logIn { provider.claims(nonce: $0) }
            #expect(first.created)
            let auth: Metadata = ["authorization": .string("Bearer \(first.sessionToken)")]
            let mine = try await accounts.getMyAccount(.init(), metadata: auth).account
            #expect(mine.email == "pat@campus.edu" && mine.displayName == "Pat Doe" && mine.userID == first.userID)
            let again = try await logIn { provider.claims(nonce: $0) }
            #expect(!again.created && again.userID == first.userID)

            // An existing, verified password account with the address is linked (its password keeps working).
            let sam = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sam@campus.edu", name: "Sam")
            let linked = try await logIn { provider.claims(sub: "user-2", nonce: $0, email: "Sam@Campus.edu") }
            #expect(!linked.created && linked.userID == sam.id)
            #expect(await mailArrives(in: app.mailer, to: "sam@campus.edu", containing: provider.issuer))
            _ = try await accounts.logIn(DocumentedContractSocketTests.logIn("sam@campus.edu"))

            // A pending sign-up (someone else's password, unverified) is taken over by the provider's proof:
            // its password is dropped and its verification link no longer works.
            _ = try await accounts.signUp(
                .with {
                    $0.email = "kim@campus.edu"
                    $0.password = "squatter password"
                    $0.displayName = "Squatter"
                }
            )
            let squatLink = try app.mailer.token(to: "kim@campus.edu", label: "Verification token")
            let kim = try await logIn { provider.claims(sub: "user-3", nonce: $0, email: "kim@campus.edu") }
            #expect(!kim.created)
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(DocumentedContractSocketTests.logIn("kim@campus.edu", "squatter password"))
            }
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.verifyEmail(.with { $0.token = squatLink })
            }

            // The link follows the user, not the address: after an e-mail change the provider still finds them.
            _ = try await accounts.requestEmailChange(
                .with {
                    $0.newEmail = "samuel@campus.edu"
                    $0.currentPassword = DocumentedContractSocketTests.password
                },
                metadata: sam.auth
            )
            let changeLink = try await waitForToken(
                in: app.mailer,
                to: "samuel@campus.edu",
                label: "E-mail change token"
            )
            _ = try await accounts.confirmEmailChange(.with { $0.token = changeLink })
            let moved = try await logIn { provider.claims(sub: "user-2", nonce: $0, email: "sam@campus.edu") }
            #expect(!moved.created && moved.userID == sam.id)
            // A deleted account's links go with it: the same provider user then gets a new account.
            _ = try await accounts.deleteAccount(
                .with { $0.currentPassword = DocumentedContractSocketTests.password },
                metadata: sam.auth
            )
            let afterDeletion = try await logIn { provider.claims(sub: "user-2", nonce: $0, email: "sam@campus.edu") }
            #expect(afterDeletion.created && afterDeletion.userID != sam.id)
        }
    }

    @Test("Forged, foreign, expired, replayed and unverified tokens are refused", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        let provider = try TestIdentityProvider()
        defer { provider.remove() }
        let other = try TestIdentityProvider(issuer: "https://evil.example", clientID: "skiff-app")
        defer { other.remove() }
        try await withApp(backend, extraArguments: provider.arguments + ["--email-domain", "campus.edu"]) {
            _,
            connection in
            let accounts = AccountsClient(transport: connection)
            func attempt(
                _ claims: (String) -> TestIdentityProvider.Claims,
                key: ES256PrivateKey? = nil,
                nonce: ((String) -> String)? = nil,
                token: ((String) -> String)? = nil
            ) async throws {
                let begun = try await accounts.beginExternalLogIn(.init())
                let signed = try await provider.sign(claims(begun.nonce), with: key)
                _ = try await accounts.logInWithIdToken(
                    .with {
                        $0.idToken = token?(signed) ?? signed
                        $0.nonce = nonce?(begun.nonce) ?? begun.nonce
                    }
                )
            }
            let cases: [(String, (String) -> TestIdentityProvider.Claims)] = [
                ("expired", { provider.claims(nonce: $0, expiresIn: -120) }),
                ("no nonce", { _ in provider.claims(nonce: nil) }),
                ("another nonce", { _ in provider.claims(nonce: "not-the-one") }),
                (
                    "another audience",
                    {
                        var claims = provider.claims(nonce: $0)
                        claims.aud = ["someone-else"]
                        return claims
                    }
                ),
                (
                    "another issuer",
                    {
                        var claims = provider.claims(nonce: $0)
                        claims.iss = "https://evil.example"
                        return claims
                    }
                ),
            ]
            for (name, claims) in cases {
                let error = await expectStatus(.unauthenticated) { try await attempt(claims) }
                #expect(error?.message.contains("BeginExternalLogIn") == true, "\(name)")
            }
            // Signed by another key; unsigned ("alg": "none"); tampered payload; garbage.
            await expectStatus(.unauthenticated) { try await attempt({ provider.claims(nonce: $0) }, key: other.key) }
            await expectStatus(.unauthenticated) {
                try await attempt(
                    { provider.claims(nonce: $0) },
                    token: { signed in
                        let parts = signed.split(separator: ".")
                        let header = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
                        return "\(header).\(parts[1])."
                    }
                )
            }
            await expectStatus(.unauthenticated) {
                try await attempt(
                    { provider.claims(nonce: $0) },
                    token: { signed in
                        let parts = signed.split(separator: ".")
                        return "\(parts[0]).\(parts[1])x.\(parts[2])"
                    }
                )
            }
            await expectStatus(.unauthenticated) {
                try await attempt({ provider.claims(nonce: $0) }, token: { _ in "a.b.c" })
            }
            // A nonce is used once: replaying a good token fails.
            let begun = try await accounts.beginExternalLogIn(.init())
            let good = try await provider.sign(provider.claims(nonce: begun.nonce))
            let request = Skiff_Accounts_V1_LogInWithIdTokenRequest.with {
                $0.idToken = good
                $0.nonce = begun.nonce
            }
            _ = try await accounts.logInWithIdToken(request)
            await expectStatus(.unauthenticated) { _ = try await accounts.logInWithIdToken(request) }
            // Not linked, and no usable address: unverified, missing, or outside the allowed domains.
            for claims in [
                { (nonce: String) in provider.claims(sub: "u-9", nonce: nonce, verified: false) },
                { (nonce: String) in provider.claims(sub: "u-9", nonce: nonce, email: nil) },
                { (nonce: String) in provider.claims(sub: "u-9", nonce: nonce, email: "pat@gmail.com") },
            ] {
                await expectStatus(.permissionDenied) { try await attempt(claims) }
            }
            // Bounds first.
            await expectStatus(.invalidArgument) {
                _ = try await accounts.logInWithIdToken(
                    .with {
                        $0.idToken = String(repeating: "x", count: 16_385)
                        $0.nonce = "n"
                    }
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.logInWithIdToken(.with { $0.idToken = good })
            }
        }
    }

    @Test(
        "A JWKS key without alg is pinned to its type's algorithm: a token naming another cannot poison it",
        arguments: Backend.allCases
    )
    func pinnedAlgorithms(_ backend: Backend) async throws {
        // An RSA key published without "alg" (as some providers do), beside an encryption key that must be ignored.
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let jwks = """
            {"keys": [{"kty": "RSA", "kid": "rsa-1", "n": "\(Base64URL.encode(primitives.modulus))", \
            "e": "\(Base64URL.encode(primitives.publicExponent))"}, \
            {"kty": "RSA", "kid": "enc-1", "use": "enc", "n": "\(Base64URL.encode(primitives.modulus))", \
            "e": "\(Base64URL.encode(primitives.publicExponent))"}]}
            """
        let provider = try TestIdentityProvider()
        defer { provider.remove() }
        try Data(jwks.utf8).write(to: provider.jwksURL)
        let signingKey = try Insecure.RSA.PrivateKey(pem: rsa.pemRepresentation)
        @Sendable func sign(
            _ claims: TestIdentityProvider.Claims,
            kid: String,
            algorithm: DigestAlgorithm = .sha256,
            pss: Bool = false
        ) async throws -> String {
            let keys = JWTKeyCollection()
            if pss {
                await keys.add(pss: signingKey, digestAlgorithm: algorithm, kid: JWKIdentifier(string: kid))
            } else {
                await keys.add(rsa: signingKey, digestAlgorithm: algorithm, kid: JWKIdentifier(string: kid))
            }
            return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
        }
        try await withApp(backend, extraArguments: provider.arguments) { _, connection in
            let accounts = AccountsClient(transport: connection)
            func logIn(_ make: (String) async throws -> String) async throws {
                let begun = try await accounts.beginExternalLogIn(.init())
                let token = try await make(begun.nonce)
                _ = try await accounts.logInWithIdToken(
                    .with {
                        $0.idToken = token
                        $0.nonce = begun.nonce
                    }
                )
            }
            // Poisoning attempts first: PS512 and RS512 under the key's kid, then no kid, an unknown kid, the
            // encryption key's kid.
            for (kid, algorithm, pss) in [
                ("rsa-1", DigestAlgorithm.sha512, true), ("rsa-1", .sha512, false), ("nope", .sha256, false),
                ("enc-1", .sha256, false),
            ] {
                await expectStatus(.unauthenticated) {
                    try await logIn {
                        try await sign(provider.claims(nonce: $0), kid: kid, algorithm: algorithm, pss: pss)
                    }
                }
            }
            // A genuine RS256 token still works.
            try await logIn { try await sign(provider.claims(nonce: $0), kid: "rsa-1") }
            // Not yet valid; several audiences without azp (or with another); then with azp it works.
            var later = provider.claims(nonce: nil)
            later.nbf = Int(Date().addingTimeInterval(600).timeIntervalSince1970)
            await expectStatus(.unauthenticated) {
                try await logIn { nonce in
                    var claims = later
                    claims.nonce = nonce
                    return try await sign(claims, kid: "rsa-1")
                }
            }
            for azp in [nil, "other-app"] {
                await expectStatus(.unauthenticated) {
                    try await logIn { nonce in
                        var claims = provider.claims(nonce: nonce)
                        claims.aud = [provider.clientID, "other-app"]
                        claims.azp = azp
                        return try await sign(claims, kid: "rsa-1")
                    }
                }
            }
            try await logIn { nonce in
                var claims = provider.claims(nonce: nonce)
                claims.aud = [provider.clientID, "other-app"]
                claims.azp = provider.clientID
                return try await sign(claims, kid: "rsa-1")
            }
        }
    }

    @Test("Without providers the calls say so; bad provider options stop the server from starting")
    func configuration() async throws {
        try await withApp(.memory) { (_: Application, connection: ClientConnection) async throws -> Void in
            let accounts = AccountsClient(transport: connection)
            let providers = try await accounts.listIdentityProviders(.init()).providers
            #expect(providers.isEmpty)
            await expectStatus(.failedPrecondition) { _ = try await accounts.beginExternalLogIn(.init()) }
        }
        let provider = try TestIdentityProvider()
        defer { provider.remove() }
        let bad = provider.directory.appendingPathComponent("bad.json")
        try Data(#"{"keys": []}"#.utf8).write(to: bad)
        for arguments in [
            ["--oidc-issuer", provider.issuer],
            ["--oidc-issuer", provider.issuer, "--oidc-client-id", "a", "--oidc-jwks", bad.path],
            ["--oidc-issuer", provider.issuer, "--oidc-client-id", "a", "--oidc-jwks", "/no/such/file.json"],
            provider.arguments + provider.arguments,
            ["--oidc-issuer", provider.issuer, "--oidc-client-id", "a", "--oidc-jwks", "http://keys.example/jwks"],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try ServerOptions.parse(arguments) }
        }
        #expect(throws: Never.self) { _ = try ServerOptions.parse(provider.arguments) }
    }
}
