import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The Accounts service through its generated typed client, over a real socket, on both
/// storage backends.
@Suite("Accounts end to end")
struct AccountsServiceTests {
    @Test("sign up → verify → log in → profile → search → log out", arguments: Backend.allCases)
    func story(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let email = "Jane.Doe@Vanderbilt.edu"
            _ = try await accounts.signUp(
                .with {
                    $0.email = email
                    $0.password = "correct horse battery"
                    $0.displayName = "Jane Doe"
                }
            )
            // Unverified accounts cannot log in, and are told why.
            let unverified = await expectStatus(.failedPrecondition) {
                _ = try await accounts.logIn(
                    .with {
                        $0.email = email
                        $0.password = "correct horse battery"
                    }
                )
            }
            #expect(unverified?.message.contains("Verify") == true)
            let verification = try app.mailer.token(to: "jane.doe@vanderbilt.edu", label: "Verification token")
            _ = try await accounts.verifyEmail(.with { $0.token = verification })
            let session = try await accounts.logIn(
                .with {
                    $0.email = "jane.doe@vanderbilt.edu"
                    $0.password = "correct horse battery"
                    $0.rememberMe = true
                }
            )
            #expect(session.sessionToken.count >= 43)
            let auth: Metadata = ["authorization": "Bearer \(session.sessionToken)"]

            let mine = try await accounts.getMyAccount(.init(), metadata: auth).account
            #expect(mine.email == "jane.doe@vanderbilt.edu")
            #expect(mine.userID == session.userID)

            let updated = try await accounts.updateProfile(
                .with {
                    $0.account.bio = "Selling my dorm fridge"
                    $0.account.paymentHandle = "@jane-doe"
                    $0.account.displayName = "Should not change"
                    $0.updateMask.paths = ["bio", "payment_handle"]
                },
                metadata: auth
            ).account
            #expect(updated.bio == "Selling my dorm fridge")
            #expect(updated.displayName == "Jane Doe")

            // A guest sees the public profile: never the e-mail or payment handle.
            let profile = try await accounts.getProfile(.with { $0.userID = session.userID }).profile
            #expect(profile.displayName == "Jane Doe")
            #expect(profile.bio == "Selling my dorm fridge")
            let text = try profile.jsonString()
            #expect(!text.contains("vanderbilt"))
            #expect(!text.contains("@jane-doe"))

            await expectStatus(.unauthenticated) { _ = try await accounts.searchUsers(.with { $0.query = "jane" }) }
            let found = try await accounts.searchUsers(.with { $0.query = "JANE" }, metadata: auth)
            #expect(found.profiles.map(\.userID) == [session.userID])

            _ = try await accounts.logOut(.init(), metadata: auth)
            await expectStatus(.unauthenticated) { _ = try await accounts.getMyAccount(.init(), metadata: auth) }
        }
    }

    @Test("signing up with a registered address answers the same and mails the owner", arguments: Backend.allCases)
    func noEnumeration(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            _ = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "a@campus.edu", name: "A")
            let before = app.mailer.messages(to: "a@campus.edu").count
            let again = try await accounts.signUp(
                .with {
                    $0.email = "a@campus.edu"
                    $0.password = "another password"
                    $0.displayName = "Impostor"
                }
            )
            #expect(again == Skiff_Accounts_V1_SignUpResponse())
            let mails = app.mailer.messages(to: "a@campus.edu")
            #expect(mails.count == before + 1)
            #expect(mails.last?.subject.contains("tried to sign up") == true)
            // The password did not change.
            await expectStatus(.unauthenticated) {
                _ = try await accounts.logIn(
                    .with {
                        $0.email = "a@campus.edu"
                        $0.password = "another password"
                    }
                )
            }
        }
    }

    @Test("invalid input gets INVALID_ARGUMENT with a message that says what to fix", arguments: Backend.allCases)
    func invalidInput(_ backend: Backend) async throws {
        try await withApp(backend, extraArguments: ["--email-domain", "vanderbilt.edu"]) { app, connection in
            let accounts = AccountsClient(transport: connection)
            func signUp(_ email: String, _ password: String, _ name: String) async throws {
                _ = try await accounts.signUp(
                    .with {
                        $0.email = email
                        $0.password = password
                        $0.displayName = name
                    }
                )
            }
            await expectStatus(.invalidArgument) { try await signUp("not-an-email", "long enough pw", "X") }
            let domain = await expectStatus(.invalidArgument) { try await signUp("x@gmail.com", "long enough pw", "X") }
            #expect(domain?.message.contains("vanderbilt.edu") == true)
            await expectStatus(.invalidArgument) { try await signUp("x@vanderbilt.edu", "123456789", "X") }
            await expectStatus(.invalidArgument) {
                try await signUp("x@vanderbilt.edu", String(repeating: "p", count: 129), "X")
            }
            await expectStatus(.invalidArgument) { try await signUp("x@vanderbilt.edu", "long enough pw", "") }
            try await signUp("x@vanderbilt.edu", "1234567890", "Ten")  // exactly 10 is fine

            await expectStatus(.invalidArgument) { _ = try await accounts.verifyEmail(.init()) }
            await expectStatus(.failedPrecondition) { _ = try await accounts.verifyEmail(.with { $0.token = "nope" }) }
            await expectStatus(.invalidArgument) { _ = try await accounts.logIn(.init()) }
            await expectStatus(.invalidArgument) { _ = try await accounts.getProfile(.init()) }
            await expectStatus(.notFound) { _ = try await accounts.getProfile(.with { $0.userID = "usr_nobody" }) }
            await expectStatus(.invalidArgument) { _ = try await accounts.resetPassword(.init()) }
            await expectStatus(.invalidArgument) { _ = try await accounts.listRatings(.init()) }

            let me = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "me@vanderbilt.edu", name: "Me")
            await expectStatus(.invalidArgument) { _ = try await accounts.updateProfile(.init(), metadata: me.auth) }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.updateProfile(.with { $0.updateMask.paths = ["email"] }, metadata: me.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.updateProfile(
                    .with {
                        $0.account.displayName = ""
                        $0.updateMask.paths = ["display_name"]
                    },
                    metadata: me.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.searchUsers(.with { $0.query = "" }, metadata: me.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.searchUsers(
                    .with {
                        $0.query = "me"
                        $0.pageToken = "garbage"
                    },
                    metadata: me.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.reportUser(
                    .with {
                        $0.userID = me.id
                        $0.reason = .spam
                    },
                    metadata: me.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.reportUser(.with { $0.userID = me.id }, metadata: me.auth)
            }
            await expectStatus(.notFound) {
                _ = try await accounts.rateSeller(
                    .with {
                        $0.saleID = "sal_unknown"
                        $0.stars = 5
                    },
                    metadata: me.auth
                )
            }
        }
    }

    @Test("writes need a valid session: missing, malformed and unknown tokens are UNAUTHENTICATED")
    func authentication() async throws {
        try await withApp(.memory) { _, connection in
            let accounts = AccountsClient(transport: connection)
            await expectStatus(.unauthenticated) { _ = try await accounts.getMyAccount(.init()) }
            await expectStatus(.unauthenticated) { _ = try await accounts.logOut(.init()) }
            await expectStatus(.unauthenticated) {
                _ = try await accounts.getMyAccount(.init(), metadata: ["authorization": "Basic abc"])
            }
            await expectStatus(.unauthenticated) {
                _ = try await accounts.getMyAccount(.init(), metadata: ["authorization": "Bearer not-a-session"])
            }
            // A bad token fails reads that guests may do, too, so the client learns to log in again.
            await expectStatus(.unauthenticated) {
                _ = try await accounts.getProfile(
                    .with { $0.userID = "usr_x" },
                    metadata: ["authorization": "Bearer not-a-session"]
                )
            }
        }
    }

    @Test("failed log-ins are rate limited with a retry-after", arguments: Backend.allCases)
    func loginRateLimit(_ backend: Backend) async throws {
        // A back-off longer than any pause of a loaded machine between the attempts below.
        try await withApp(backend, extraArguments: ["--login-backoff", "600"]) { app, connection in
            let accounts = AccountsClient(transport: connection)
            _ = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "r@campus.edu", name: "R")
            for _ in 0..<5 {
                await expectStatus(.unauthenticated) {
                    _ = try await accounts.logIn(
                        .with {
                            $0.email = "r@campus.edu"
                            $0.password = "wrong password!"
                        }
                    )
                }
            }
            let limited = await expectStatus(.resourceExhausted) {
                _ = try await accounts.logIn(
                    .with {
                        $0.email = "r@campus.edu"
                        $0.password = "correct horse battery"
                    }
                )
            }
            #expect(limited?.metadata.first("retry-after").flatMap(Int.init) ?? 0 > 0)
        }
    }

    @Test(
        "password reset revokes every session; change password keeps only the current one",
        arguments: Backend.allCases
    )
    func passwords(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let first = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "p@campus.edu", name: "P")
            let second = try await accounts.logIn(
                .with {
                    $0.email = "p@campus.edu"
                    $0.password = "correct horse battery"
                }
            )
            let secondAuth: Metadata = ["authorization": .string("Bearer \(second.sessionToken)")]

            await expectStatus(.permissionDenied) {
                _ = try await accounts.changePassword(
                    .with {
                        $0.currentPassword = "wrong password!"
                        $0.newPassword = "brand new password"
                    },
                    metadata: first.auth
                )
            }
            _ = try await accounts.changePassword(
                .with {
                    $0.currentPassword = "correct horse battery"
                    $0.newPassword = "brand new password"
                },
                metadata: first.auth
            )
            _ = try await accounts.getMyAccount(.init(), metadata: first.auth)
            await expectStatus(.unauthenticated) { _ = try await accounts.getMyAccount(.init(), metadata: secondAuth) }

            // Same answer for unknown addresses; a reset token for known ones.
            _ = try await accounts.requestPasswordReset(.with { $0.email = "nobody@campus.edu" })
            _ = try await accounts.requestPasswordReset(.with { $0.email = "p@campus.edu" })
            let reset = try await waitForToken(in: app.mailer, to: "p@campus.edu", label: "Reset token")
            #expect(app.mailer.messages(to: "nobody@campus.edu").isEmpty)
            _ = try await accounts.resetPassword(
                .with {
                    $0.token = reset
                    $0.newPassword = "after the reset"
                }
            )
            await expectStatus(.unauthenticated) { _ = try await accounts.getMyAccount(.init(), metadata: first.auth) }
            await expectStatus(.failedPrecondition) {
                _ = try await accounts.resetPassword(
                    .with {
                        $0.token = reset
                        $0.newPassword = "reuse the token"
                    }
                )
            }
            _ = try await accounts.logIn(
                .with {
                    $0.email = "p@campus.edu"
                    $0.password = "after the reset"
                }
            )
        }
    }

    @Test("an account survives a restart on the same SQLite file")
    func restart() async throws {
        try await withTemporaryDatabasePath { path in
            let userID = try await withApp(.sqlite, path: path) { app, connection in
                try await signUpAndLogIn(
                    AccountsClient(transport: connection),
                    mailer: app.mailer,
                    email: "s@campus.edu",
                    name: "S"
                ).id
            }
            try await withApp(.sqlite, path: path) { _, connection in
                let accounts = AccountsClient(transport: connection)
                let session = try await accounts.logIn(
                    .with {
                        $0.email = "s@campus.edu"
                        $0.password = "correct horse battery"
                    }
                )
                #expect(session.userID == userID)
            }
        }
    }

    @Test("a burst of sign-ups queues for the password hasher: none fails", arguments: Backend.allCases)
    func signUpBurst(_ backend: Backend) async throws {
        try await withApp(backend, extraArguments: ["--password-hash-rounds", "20000"]) { app, connection in
            let accounts = AccountsClient(transport: connection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<60 {
                    group.addTask {
                        _ = try await accounts.signUp(
                            .with {
                                $0.email = "burst\(i)@campus.edu"
                                $0.password = "burst password"
                                $0.displayName = "Burst \(i)"
                            }
                        )
                    }
                }
                try await group.waitForAll()
            }
            #expect(Set(app.mailer.messages.map(\.to)).count == 60)
        }
    }

    @Test("reports are stored for moderators")
    func report() async throws {
        try await withApp(.memory) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let a = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "a@campus.edu", name: "A")
            let b = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "b@campus.edu", name: "B")
            let report = try await accounts.reportUser(
                .with {
                    $0.userID = b.id
                    $0.reason = .other
                    $0.details = "Sold me a broken lamp and blocked me."
                },
                metadata: a.auth
            )
            #expect(!report.reportID.isEmpty)
        }
    }
}
