import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

/// Sign-ups competing for one unverified address, and the revocation of reset tokens (issue 9).
extension AccountsStoreConformanceTests {
    @Test(
        "A verification token carrying a sign-up's password and name sets them; the other tokens retire",
        arguments: StoreKind.allCases
    )
    func pendingSignUpTokens(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("First Try"))
            let first = SecretToken.generate()
            let second = SecretToken.generate()
            let plain = SecretToken.generate()
            for (token, hash, name) in [
                (first, "hash-of-first", "First Try"), (second, "hash-of-second", "Zed Owner"),
            ] {
                var record = Fixture.oneTimeToken(.emailVerification, for: account.id, token: token)
                record.passwordHash = hash
                record.displayName = name
                try await store.insertOneTimeToken(record)
            }
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.emailVerification, for: account.id, token: plain))

            let verified = try await store.verifyEmail(tokenHash: second.hash, now: Fixture.t0)
            #expect(verified.verified)
            #expect(verified.passwordHash == "hash-of-second")
            #expect(verified.displayName == "Zed Owner")
            #expect(try await store.account(id: account.id) == verified)
            // Search follows the new name.
            #expect(try await store.searchAll("zed", pageSize: 10).map(\.id) == [account.id])
            #expect(try await store.searchAll("first", pageSize: 10).isEmpty)
            // The competing sign-up's token no longer works: retired tokens are deleted.
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: first.hash, now: Fixture.t0)
            }
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: plain.hash, now: Fixture.t0)
            }
            #expect(try await store.account(id: account.id) == verified)
        }
    }

    @Test("A token without a sign-up's data keeps the account's password and name", arguments: StoreKind.allCases)
    func plainVerificationToken(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var account = try await store.createAccount(Fixture.account("Plain"))
            _ = try await store.changePassword(
                accountID: account.id,
                newPasswordHash: Account.noPasswordHash,
                keepingSession: nil
            )
            let token = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.emailVerification, for: account.id, token: token))
            let verified = try await store.verifyEmail(tokenHash: token.hash, now: Fixture.t0)
            account.verified = true
            account.passwordHash = Account.noPasswordHash
            #expect(verified == account)
            #expect(!verified.hasPassword)
        }
    }

    @Test(
        "A password reset marks the account verified and retires its pending sign-ups' verification tokens",
        arguments: StoreKind.allCases
    )
    func resetVerifies(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Unverified"))
            #expect(!account.verified)
            // A sign-up's token (perhaps someone else's, carrying their password) waits in the inbox.
            let pending = SecretToken.generate()
            try await store.insertOneTimeToken(
                Self.signUpToken(pending, hash: "someone-else's", name: "Impostor", account: account.id)
            )
            let reset = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: reset))
            let after = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "chosen", now: Fixture.t0)
            #expect(after.verified)
            #expect(after.passwordHash == "chosen")
            #expect(try await store.account(id: account.id)?.verified == true)
            // Clicking the old link afterwards cannot set the sign-up's password.
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: pending.hash, now: Fixture.t0)
            }
            #expect(try await store.account(id: account.id)?.passwordHash == "chosen")
        }
    }

    @Test(
        "Changing the password revokes unused reset tokens, not verification tokens or other accounts'",
        arguments: StoreKind.allCases
    )
    func changeRevokesResets(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let accounts = try await store.createAccounts(["Cho", "Other"])
            let reset = SecretToken.generate()
            let verify = SecretToken.generate()
            let othersReset = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: accounts[0].id, token: reset))
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.emailVerification, for: accounts[0].id, token: verify)
            )
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.passwordReset, for: accounts[1].id, token: othersReset)
            )

            _ = try await store.changePassword(
                accountID: accounts[0].id,
                newPasswordHash: "changed",
                keepingSession: nil
            )
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "stale", now: Fixture.t0)
            }
            #expect(try await store.account(id: accounts[0].id)?.passwordHash == "changed")
            #expect(try await store.verifyEmail(tokenHash: verify.hash, now: Fixture.t0).verified)
            #expect(
                try await store.resetPassword(tokenHash: othersReset.hash, newPasswordHash: "fine", now: Fixture.t0)
                    .passwordHash == "fine"
            )
        }
    }
}

extension AccountsStoreConformanceTests {
    static func signUpToken(
        _ token: SecretToken,
        hash: String,
        name: String,
        account: String = "ignored"
    )
        -> OneTimeToken
    {
        OneTimeToken(
            tokenHash: token.hash,
            kind: .emailVerification,
            accountID: account,
            expiresAt: Fixture.date(plusSeconds: 3600),
            createdAt: Fixture.t0,
            passwordHash: hash,
            displayName: name
        )
    }

    @Test(
        "registerSignUp: creates a new address's account, drops an unverified one's password, records a used token",
        arguments: StoreKind.allCases
    )
    func registerSignUp(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var first = Fixture.account("First", email: "Shared@School.edu")
            first.passwordHash = "hash-1"
            let firstToken = SecretToken.generate()
            let created = try await store.registerSignUp(
                first,
                token: Self.signUpToken(firstToken, hash: "hash-1", name: "First")
            )
            first.email = "shared@school.edu"
            #expect(created == .created(first))

            // A second sign-up for the unverified address: same account, no password any more, its own token.
            let secondToken = SecretToken.generate()
            let pending = try await store.registerSignUp(
                Fixture.account("Second", email: "shared@school.edu"),
                token: Self.signUpToken(secondToken, hash: "hash-2", name: "Second")
            )
            var dropped = first
            dropped.passwordHash = Account.noPasswordHash
            #expect(pending == .pending(dropped))
            #expect(try await store.account(id: first.id) == dropped)

            // Verifying the second sign-up's token sets its password and name.
            let verified = try await store.verifyEmail(tokenHash: secondToken.hash, now: Fixture.t0)
            #expect(verified.passwordHash == "hash-2")
            #expect(verified.displayName == "Second")

            // Once verified, a sign-up changes nothing and its token is born used.
            let thirdToken = SecretToken.generate()
            let attempt = try await store.registerSignUp(
                Fixture.account("Third", email: "shared@school.edu"),
                token: Self.signUpToken(thirdToken, hash: "hash-3", name: "Third")
            )
            #expect(attempt == .alreadyVerified(verified))
            #expect(try await store.account(id: first.id) == verified)
            await #expect(throws: AccountsStoreError.linkUsed) {
                _ = try await store.verifyEmail(tokenHash: thirdToken.hash, now: Fixture.t0)
            }
            // A token hash cannot be reused.
            await #expect(throws: AccountsStoreError.tokenTaken) {
                _ = try await store.registerSignUp(
                    Fixture.account("Fourth"),
                    token: Self.signUpToken(thirdToken, hash: "hash-4", name: "Fourth")
                )
            }
        }
    }

    @Test(
        "Concurrent sign-ups for one new address create one account; each gets its own token",
        arguments: StoreKind.allCases
    )
    func concurrentRegisterSignUp(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let tokens = (0..<20).map { _ in SecretToken.generate() }
            let results = try await withThrowingTaskGroup(of: SignUpRegistration.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        try await store.registerSignUp(
                            Fixture.account("Racer \(index)", email: "race@school.edu"),
                            token: Self.signUpToken(token, hash: "hash-\(index)", name: "Racer \(index)")
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = results.compactMap { if case .created(let account) = $0 { account } else { nil } }
            #expect(created.count == 1)
            #expect(results.filter { if case .pending = $0 { true } else { false } }.count == 19)
            // Every token works for the one account (the last verification wins; the others retire).
            let account = try await store.verifyEmail(tokenHash: tokens[7].hash, now: Fixture.t0)
            #expect(account.id == created.first?.id)
            #expect(account.passwordHash == "hash-7")
        }
    }
}
