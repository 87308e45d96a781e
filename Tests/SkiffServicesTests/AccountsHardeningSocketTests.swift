import Foundation
import NIOCore
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffPostgres
import SkiffSQLite
import SkiffServer
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Issue 9 (hardening) for Accounts, over a real socket: log-in back-off under concurrency, no lockouts of
/// correct passwords, pre-registration takeover, per-address limits, the bounded hashing queue, reset-token
/// revocation, answers that do not wait for look-ups or e-mails, and request bounds.
@Suite("Accounts hardening over a socket")
struct AccountsHardeningSocketTests {
    static let password = "correct horse battery"

    // MARK: Item 5: attempts are counted before hashing

    @Test(
        "100 wrong passwords at once: 5 are checked, 95 refused unhashed; then the right one waits 1 s, not forever",
        arguments: Backend.allCases
    )
    func concurrentLogIns(_ backend: Backend) async throws {
        try await withAccountsServer(backend) { server, accounts in
            _ = try await server.signUpAndVerify(accounts, "victim@campus.edu")
            let codes = try await withThrowingTaskGroup(of: StatusCode.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        do {
                            _ = try await accounts.logIn(Self.logIn("victim@campus.edu", "wrong password \(index)"))
                            return .ok
                        } catch let error as RPCError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [StatusCode: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(codes == [.unauthenticated: 5, .resourceExhausted: 95])
            let throttled = await expectStatus(.resourceExhausted) {
                _ = try await accounts.logIn(Self.logIn("victim@campus.edu", Self.password))
            }
            #expect(throttled?.metadata.first("retry-after") == "1")
            #expect(throttled?.message == "Too many failed log-ins for this account; try again in 1 s.")
            server.clock.advance(by: .seconds(1))
            _ = try await accounts.logIn(Self.logIn("victim@campus.edu", Self.password))
        }
    }

    @Test(
        "50 wrong current passwords at once in ChangePassword: 5 are checked; the right one then waits its turn",
        arguments: Backend.allCases
    )
    func concurrentPasswordChanges(_ backend: Backend) async throws {
        try await withAccountsServer(backend) { server, accounts in
            let auth = try await server.signUpAndVerify(accounts, "cho@campus.edu", logIn: true)
            let codes = try await withThrowingTaskGroup(of: StatusCode.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        do {
                            _ = try await accounts.changePassword(
                                .with {
                                    $0.currentPassword = "wrong password \(index)"
                                    $0.newPassword = "a brand new password"
                                },
                                metadata: auth
                            )
                            return .ok
                        } catch let error as RPCError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [StatusCode: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(codes == [.permissionDenied: 5, .resourceExhausted: 45])
            let change = Skiff_Accounts_V1_ChangePasswordRequest.with {
                $0.currentPassword = Self.password
                $0.newPassword = "a brand new password"
            }
            await expectStatus(.resourceExhausted) { _ = try await accounts.changePassword(change, metadata: auth) }
            server.clock.advance(by: .seconds(1))
            _ = try await accounts.changePassword(change, metadata: auth)
        }
    }

    // MARK: Item 7: back-off, not lockouts

    @Test("Each failure doubles the wait (capped); attempts in the wait are refused; the owner gets in after it")
    func exponentialBackoff() async throws {
        var configuration = AccountsConfiguration()
        configuration.maximumLoginBackoff = .seconds(8)
        try await withAccountsServer(.memory, configuration: configuration) { server, accounts in
            _ = try await server.signUpAndVerify(accounts, "owner@campus.edu")
            for _ in 0..<5 {
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(Self.logIn("owner@campus.edu", "guess guess guess"))
                }
            }
            var waits: [String] = []
            for _ in 0..<6 {
                let refused = await expectStatus(.resourceExhausted) {
                    _ = try await accounts.logIn(Self.logIn("owner@campus.edu", Self.password))
                }
                let wait = try #require(refused?.metadata.first("retry-after"))
                waits.append(wait)
                server.clock.advance(by: .seconds(Int64(wait)!))
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(Self.logIn("owner@campus.edu", "guess guess guess"))
                }
            }
            #expect(waits == ["1", "2", "4", "8", "8", "8"])
            // The attacker's failures never lock the owner out for longer than the cap.
            server.clock.advance(by: .seconds(8))
            _ = try await accounts.logIn(Self.logIn("owner@campus.edu", Self.password))
        }
    }

    @Test("Failures from one address slow it down, but not accounts that logged in from it before")
    func sourceBackoffSparesKnownAccounts() async throws {
        try await withAccountsServer(.memory) { server, accounts in
            _ = try await server.signUpAndVerify(accounts, "ann@campus.edu", logIn: true)
            _ = try await server.signUpAndVerify(accounts, "new@campus.edu")
            // Someone on the same address sprays guesses over many (unknown) accounts; logging in to an
            // account of their own in the middle does not wipe the address's failures.
            for index in 0..<10 {
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(Self.logIn("user\(index)@campus.edu", "Password123!"))
                }
            }
            _ = try await server.signUpAndVerify(accounts, "sprayer@campus.edu", logIn: true)
            for index in 10..<20 {
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(Self.logIn("user\(index)@campus.edu", "Password123!"))
                }
            }
            let sprayed = await expectStatus(.resourceExhausted) {
                _ = try await accounts.logIn(Self.logIn("user20@campus.edu", "Password123!"))
            }
            #expect(sprayed?.message == "Too many failed log-ins from this network address; try again in 1 s.")
            // Ann logged in from here before: her correct password still works, and so does a typo's answer.
            _ = try await accounts.logIn(Self.logIn("ann@campus.edu", Self.password))
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(Self.logIn("ann@campus.edu", "typo in password"))
            }
            _ = try await accounts.logIn(Self.logIn("ann@campus.edu", Self.password))
            // An account never used from this address waits out the (short) back-off, then gets in.
            await expectStatus(.resourceExhausted) {
                _ = try await accounts.logIn(Self.logIn("new@campus.edu", Self.password))
            }
            server.clock.advance(by: .seconds(1))
            _ = try await accounts.logIn(Self.logIn("new@campus.edu", Self.password))
        }
    }

    // MARK: Item 6: pre-registration takeover

    @Test(
        "A second sign-up drops the first one's password; the owner's verification sets the owner's",
        arguments: Backend.allCases
    )
    func preRegistrationTakeover(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            func signUp(_ password: String, _ name: String) async throws {
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "victim@campus.edu"
                        $0.password = password
                        $0.displayName = name
                    }
                )
            }
            try await signUp("attacker's password", "Attacker")
            let attackersToken = try app.mailer.token(to: "victim@campus.edu", label: "Verification token")
            try await signUp("victim's own password", "Victim")
            let victimsToken = try app.mailer.token(to: "victim@campus.edu", label: "Verification token")
            #expect(attackersToken != victimsToken)
            // The attacker's password stopped working at once.
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(Self.logIn("victim@campus.edu", "attacker's password"))
            }

            _ = try await accounts.verifyEmail(.with { $0.token = victimsToken })
            let session = try await accounts.logIn(Self.logIn("victim@campus.edu", "victim's own password"))
            let profile = try await accounts.getProfile(.with { $0.userID = session.userID }).profile
            #expect(profile.displayName == "Victim")
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(Self.logIn("victim@campus.edu", "attacker's password"))
            }
            // The attacker's pending sign-up cannot be verified any more.
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.verifyEmail(.with { $0.token = attackersToken })
            }
        }
    }

    @Test("After competing sign-ups a resent verification sets no password: the owner chooses one by reset")
    func contestedResend() async throws {
        try await withAccountsServer(.sqlite) { server, accounts in
            for (password, name) in [("attacker's password", "Attacker"), ("victim's own password", "Victim")] {
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "victim@campus.edu"
                        $0.password = password
                        $0.displayName = name
                    }
                )
            }
            _ = try await accounts.resendVerification(.with { $0.email = "victim@campus.edu" })
            let resent = try await server.waitForToken(to: "victim@campus.edu", label: "Verification token", count: 3)
            _ = try await accounts.verifyEmail(.with { $0.token = resent })
            for password in ["attacker's password", "victim's own password"] {
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(Self.logIn("victim@campus.edu", password))
                }
            }
            _ = try await accounts.requestPasswordReset(.with { $0.email = "victim@campus.edu" })
            let reset = try await server.waitForToken(to: "victim@campus.edu", label: "Reset token")
            _ = try await accounts.resetPassword(
                .with {
                    $0.token = reset
                    $0.newPassword = "chosen by the owner"
                }
            )
            _ = try await accounts.logIn(Self.logIn("victim@campus.edu", "chosen by the owner"))
        }
    }

    // MARK: Item 8: per-address limits and the hashing queue

    @Test("SignUp, RequestPasswordReset and ResendVerification are limited per address, scaled by --rate-limit-scale")
    func perSourceLimits() async throws {
        // 0.02 leaves 3 sign-ups and 1 reset and 1 resend per hour.
        try await withApp(.memory, configure: { $0.rateLimitScale = 0.02 }) { app, connection in
            let accounts = AccountsClient(transport: connection)
            func signUp(_ index: Int) async throws {
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "flood\(index)@campus.edu"
                        $0.password = "flood password"
                        $0.displayName = "Flood"
                    }
                )
            }
            for index in 0..<3 { try await signUp(index) }
            let signUps = await expectStatus(.resourceExhausted) { try await signUp(3) }
            #expect((3_590...3_600).contains(signUps?.metadata.first("retry-after").flatMap(Int.init) ?? 0))
            #expect(
                signUps?.message.hasPrefix("Too many sign-ups from this network address (at most 3 per hour)") == true
            )
            #expect(app.mailer.messages(to: "flood3@campus.edu").isEmpty)

            _ = try await accounts.requestPasswordReset(.with { $0.email = "a@campus.edu" })
            let resets = await expectStatus(.resourceExhausted) {
                _ = try await accounts.requestPasswordReset(.with { $0.email = "b@campus.edu" })
            }
            #expect(resets?.metadata.first("retry-after").flatMap(Int.init) ?? 0 > 3_000)
            _ = try await accounts.resendVerification(.with { $0.email = "flood0@campus.edu" })
            await expectStatus(.resourceExhausted) {
                _ = try await accounts.resendVerification(.with { $0.email = "flood1@campus.edu" })
            }
        }
    }

    @Test("A flood of sign-ups past the hashing queue gets RESOURCE_EXHAUSTED with retry-after; the rest are served")
    func boundedHashingQueue() async throws {
        try await withApp(
            .memory,
            extraArguments: ["--password-hash-queue", "1", "--password-hash-rounds", "200000"]
        ) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let results = try await withThrowingTaskGroup(of: RPCError?.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        do {
                            _ = try await accounts.signUp(
                                .with {
                                    $0.email = "burst\(index)@campus.edu"
                                    $0.password = "burst password"
                                    $0.displayName = "Burst"
                                }
                            )
                            return nil
                        } catch let error as RPCError {
                            return error
                        }
                    }
                }
                return try await group.reduce(into: [RPCError?]()) { $0.append($1) }
            }
            let refused = results.compactMap { $0 }
            #expect(!refused.isEmpty)
            #expect(refused.allSatisfy { $0.code == .resourceExhausted && $0.metadata.first("retry-after") == "1" })
            #expect(refused.first?.message == "The server is busy checking passwords; try again in 1 s.")
            #expect(Set(app.mailer.messages.map(\.to)).count == 40 - refused.count)
        }
    }

    // MARK: Item 13: reset tokens and equal answers

    @Test("A reset token sent before ChangePassword no longer works after it", arguments: Backend.allCases)
    func changeRevokesResetTokens(_ backend: Backend) async throws {
        try await withAccountsServer(backend) { server, accounts in
            let auth = try await server.signUpAndVerify(accounts, "rev@campus.edu", logIn: true)
            _ = try await accounts.requestPasswordReset(.with { $0.email = "rev@campus.edu" })
            let reset = try await server.waitForToken(to: "rev@campus.edu", label: "Reset token")
            _ = try await accounts.changePassword(
                .with {
                    $0.currentPassword = Self.password
                    $0.newPassword = "changed on purpose"
                },
                metadata: auth
            )
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.resetPassword(
                    .with {
                        $0.token = reset
                        $0.newPassword = "an attacker's choice"
                    }
                )
            }
            _ = try await accounts.logIn(Self.logIn("rev@campus.edu", "changed on purpose"))
        }
    }

    @Test("RequestPasswordReset and ResendVerification answer before the look-up and the e-mail, known address or not")
    func answersDoNotWaitForMail() async throws {
        let mailer = GatedMailer()
        try await withAccountsServer(.sqlite, mailer: mailer) { server, accounts in
            mailer.open()
            _ = try await accounts.signUp(Self.signUp("known@campus.edu"))
            mailer.close()
            for email in ["known@campus.edu", "unknown@campus.edu"] {
                // With the e-mail held, a call that waited for it would hit its deadline.
                _ = try await accounts.requestPasswordReset(.with { $0.email = email }, timeout: .seconds(20))
                _ = try await accounts.resendVerification(.with { $0.email = email }, timeout: .seconds(20))
            }
            #expect(await mailer.waitUntil { $0.held == 2 })
            #expect(mailer.outbox.messages(to: "known@campus.edu").count == 1)
            mailer.open()
            #expect(await mailer.waitUntil { _ in mailer.outbox.messages(to: "known@campus.edu").count == 3 })
            #expect(
                mailer.outbox.messages(to: "known@campus.edu").map(\.subject).sorted() == [
                    "Reset your Skiff password", "Verify your Skiff account", "Verify your Skiff account",
                ]
            )
            #expect(mailer.outbox.messages(to: "unknown@campus.edu").isEmpty)
            _ = server
        }
    }

    // MARK: Item 4: request bounds

    @Test("Every Accounts RPC rejects oversized fields with INVALID_ARGUMENT naming the field, before any work")
    func requestBounds() async throws {
        try await withAccountsServer(.memory) { server, accounts in
            let auth = try await server.signUpAndVerify(accounts, "bounds@campus.edu", logIn: true)
            let huge = String(repeating: "x", count: 5_000)
            func expectBound(_ field: String, _ body: () async throws -> Void) async {
                let error = await expectStatus(.invalidArgument) { try await body() }
                #expect(error?.message.hasPrefix(field + " is too long: send at most") == true, "\(field)")
            }
            await expectBound("email") { _ = try await accounts.signUp(Self.signUp(huge + "@campus.edu")) }
            await expectBound("password") {
                _ = try await accounts.logIn(Self.logIn("bounds@campus.edu", String(repeating: "é", count: 600)))
            }
            await expectBound("display_name") {
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "n@campus.edu"
                        $0.password = Self.password
                        $0.displayName = huge
                    }
                )
            }
            await expectBound("token") { _ = try await accounts.verifyEmail(.with { $0.token = huge }) }
            await expectBound("email") { _ = try await accounts.resendVerification(.with { $0.email = huge }) }
            await expectBound("email") { _ = try await accounts.requestPasswordReset(.with { $0.email = huge }) }
            await expectBound("new_password") {
                _ = try await accounts.resetPassword(
                    .with {
                        $0.token = "t"
                        $0.newPassword = huge
                    }
                )
            }
            await expectBound("current_password") {
                _ = try await accounts.changePassword(
                    .with {
                        $0.currentPassword = huge
                        $0.newPassword = "a brand new password"
                    },
                    metadata: auth
                )
            }
            await expectBound("account.bio") {
                _ = try await accounts.updateProfile(
                    .with {
                        $0.account.bio = huge
                        $0.updateMask.paths = ["bio"]
                    },
                    metadata: auth
                )
            }
            let paths = await expectStatus(.invalidArgument) {
                _ = try await accounts.updateProfile(
                    .with { $0.updateMask.paths = Array(repeating: "bio", count: 6) },
                    metadata: auth
                )
            }
            #expect(paths?.message.contains("at most 5") == true)
            await expectBound("user_id") { _ = try await accounts.getProfile(.with { $0.userID = huge }) }
            await expectBound("query") {
                _ = try await accounts.searchUsers(.with { $0.query = huge }, metadata: auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.searchUsers(
                    .with {
                        $0.query = "a"
                        $0.pageSize = -1
                    },
                    metadata: auth
                )
            }
            await expectBound("comment") {
                _ = try await accounts.rateSeller(
                    .with {
                        $0.saleID = "sal_1"
                        $0.stars = 5
                        $0.comment = String(repeating: "ü", count: 2_001)
                    },
                    metadata: auth
                )
            }
            await expectBound("page_token") {
                _ = try await accounts.listRatings(
                    .with {
                        $0.userID = "usr_1"
                        $0.pageToken = huge
                    }
                )
            }
            await expectBound("details") {
                _ = try await accounts.reportUser(
                    .with {
                        $0.userID = "usr_1"
                        $0.reason = .other
                        $0.details = String(repeating: "d", count: 8_001)
                    },
                    metadata: auth
                )
            }
            await expectBound("listing_id") {
                _ = try await accounts.reportUser(
                    .with {
                        $0.userID = "usr_1"
                        $0.reason = .spam
                        $0.listingID = huge
                    },
                    metadata: auth
                )
            }
            await expectBound("user_id") {
                _ = try await accounts.getPaymentHandle(.with { $0.userID = huge }, metadata: serviceAuth)
            }
            await expectBound("seller_id") {
                _ = try await accounts.recordCompletedSale(
                    .with {
                        $0.saleID = "sal_1"
                        $0.sellerID = huge
                    },
                    metadata: serviceAuth
                )
            }
            await expectBound("each of image_ids") {
                _ = try await accounts.filterProfilePictures(
                    .with { $0.imageIds = ["img_1", huge] },
                    metadata: serviceAuth
                )
            }
            // Nothing was hashed or stored for the rejected sign-ups.
            #expect(server.mailer.messages(to: "n@campus.edu").isEmpty)
        }
    }

    // MARK: Helpers

    static func logIn(_ email: String, _ password: String) -> Skiff_Accounts_V1_LogInRequest {
        .with {
            $0.email = email
            $0.password = password
        }
    }

    static func signUp(_ email: String) -> Skiff_Accounts_V1_SignUpRequest {
        .with {
            $0.email = email
            $0.password = password
            $0.displayName = "Someone"
        }
    }
}

/// An Accounts-only server on 127.0.0.1, port 0, with a manual clock, for tests that move time.
struct AccountsTestServer: Sendable {
    let clock: ManualTimeSource
    let mailer: OutboxMailer

    /// Signs up and verifies an account with ``AccountsHardeningSocketTests/password``; with `logIn`, logs in
    /// and returns the bearer metadata.
    @discardableResult
    func signUpAndVerify(_ accounts: AccountsClient, _ email: String, logIn: Bool = false) async throws -> Metadata {
        _ = try await accounts.signUp(AccountsHardeningSocketTests.signUp(email))
        let verification = try await waitForToken(to: email, label: "Verification token")
        _ = try await accounts.verifyEmail(.with { $0.token = verification })
        guard logIn else { return [:] }
        let session = try await accounts.logIn(
            AccountsHardeningSocketTests.logIn(email, AccountsHardeningSocketTests.password)
        )
        return ["authorization": .string("Bearer \(session.sessionToken)")]
    }

    /// The newest token with `label` in the mail to `address`, once at least `count` such e-mails arrived
    /// (e-mails sent after answering arrive a moment later).
    func waitForToken(to address: String, label: String, count: Int = 1) async throws -> String {
        try await SkiffServicesTests.waitForToken(in: mailer, to: address, label: label, count: count)
    }
}

/// The newest token with `label` in the mail to `address`, once at least `count` such e-mails arrived: reset
/// and resent verification e-mails are sent after the call answers, so they arrive a moment later.
func waitForToken(in mailer: OutboxMailer, to address: String, label: String, count: Int = 1) async throws -> String {
    for _ in 0..<500 {
        let matching = mailer.messages(to: address).filter { $0.body.contains(label + ": ") }
        if matching.count >= count { return try mailer.token(to: address, label: label) }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw MissingMail(address: address, label: label)
}

/// Runs an Accounts-only server (memory or SQLite in a temporary directory, removed afterwards) and hands
/// `body` a client over a real socket. Services authenticate with ``testServiceToken``.
func withAccountsServer(
    _ backend: Backend,
    configuration: AccountsConfiguration = AccountsConfiguration(),
    mailer: (any Mailer)? = nil,
    images: any ImageDirectory = NoImages(),
    _ body: @Sendable (AccountsTestServer, AccountsClient) async throws -> Void
) async throws {
    let clock = ManualTimeSource()
    let outbox = (mailer as? GatedMailer)?.outbox ?? OutboxMailer()
    try await withAccountsStore(backend) { store in
        let service = AccountsService(
            store: store,
            hasher: PasswordHasher(rounds: 1_000),
            mailer: mailer ?? outbox,
            images: images,
            time: clock,
            configuration: configuration,
            logger: quietLogger
        )
        let interceptor = AuthenticationInterceptor(
            authenticator: AccountsAuthenticator(store: store, time: clock),
            serviceToken: testServiceToken
        )
        try await withTestServer(services: [service], interceptors: [interceptor]) { _, port in
            try await withClientConnection(target: .host("127.0.0.1", port: port)) { connection in
                try await body(AccountsTestServer(clock: clock, mailer: outbox), AccountsClient(transport: connection))
            }
        }
    }
}

/// Runs `body` with a new, empty Accounts store on `backend`, removed afterwards.
func withAccountsStore(_ backend: Backend, _ body: (any AccountsStore) async throws -> Void) async throws {
    switch backend {
    case .memory:
        try await body(InMemoryAccountsStore())
    case .sqlite:
        try await withTemporaryDatabasePath { path in
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try await body(try SQLiteDatabase(path: path).accountsStore())
        }
    case .postgres:
        try await TestPostgres.withDatabase { storage in try await body(storage.accountsStore()) }
    }
}

/// A mailer that holds messages while closed and delivers them to ``outbox`` once opened.
final class GatedMailer: Mailer {
    struct State {
        var open = false
        var held = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let outbox = OutboxMailer()
    private let state = Mutex(State())

    func send(_ message: MailMessage) async throws {
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state in
                if state.open { return true }
                state.held += 1
                state.waiters.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
        try await outbox.send(message)
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            state.held = 0
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func close() { state.withLock { $0.open = false } }

    /// Polls until `condition` holds (at most 5 s); returns whether it held.
    func waitUntil(_ condition: (State) -> Bool) async -> Bool {
        for _ in 0..<500 {
            if state.withLock({ condition($0) }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { condition($0) }
    }
}

/// Listings, as Accounts sees it, unreachable.
struct UnreachableImages: ImageDirectory {
    func ownerOfImage(id: String) async throws -> String? {
        throw RPCError(code: .unavailable, message: "Listings is down.")
    }
}

@Suite("UpdateProfile while Listings is unreachable")
struct UpdateProfileUnavailableTests {
    @Test("A picture that cannot be checked is UNAVAILABLE and nothing is saved", arguments: Backend.allCases)
    func unavailable(_ backend: Backend) async throws {
        try await withAccountsServer(backend, images: UnreachableImages()) { server, accounts in
            let me = try await signUpAndLogIn(accounts, mailer: server.mailer, email: "pic@campus.edu", name: "Pic")
            let error = await expectStatus(.unavailable) {
                _ = try await accounts.updateProfile(
                    .with {
                        $0.account.avatarImageID = "img_1"
                        $0.account.bio = "Hello"
                        $0.updateMask.paths = ["avatar_image_id", "bio"]
                    },
                    metadata: me.auth
                )
            }
            #expect(error?.message.contains("nothing was changed") == true)
            let account = try await accounts.getMyAccount(.init(), metadata: me.auth).account
            #expect(account.avatarImageID.isEmpty && account.bio.isEmpty)
        }
    }
}
