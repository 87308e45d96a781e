import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    @Test("Verifying e-mail consumes the link once and marks the account verified", arguments: StoreKind.allCases)
    func verifyEmail(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Vera"))
            let link = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.emailVerification, for: account.id, token: link))
            await #expect(throws: AccountsStoreError.tokenTaken) {
                try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: link))
            }

            let verified = try await store.verifyEmail(tokenHash: link.hash, now: Fixture.t0)
            var expected = account
            expected.verified = true
            #expect(verified == expected)
            #expect(try await store.account(id: account.id) == expected)
            // The link that verified works again until it expires, and changes nothing.
            _ = try await store.changePassword(accountID: account.id, newPasswordHash: "changed", keepingSession: nil)
            expected.passwordHash = "changed"
            #expect(try await store.verifyEmail(tokenHash: link.hash, now: Fixture.t0) == expected)
            #expect(try await store.account(id: account.id) == expected)
        }
    }

    @Test("An expired link is rejected at expiresAt exactly and changes nothing", arguments: StoreKind.allCases)
    func expiredLinks(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Exp"))
            let expiresAt = Fixture.date(plusSeconds: 900)
            let verifyLink = SecretToken.generate()
            let resetLink = SecretToken.generate()
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.emailVerification, for: account.id, token: verifyLink, expiresAt: expiresAt)
            )
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.passwordReset, for: account.id, token: resetLink, expiresAt: expiresAt)
            )
            let session = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 9000))
            try await store.createSession(session)

            await #expect(throws: AccountsStoreError.linkExpired) {
                _ = try await store.verifyEmail(tokenHash: verifyLink.hash, now: expiresAt)
            }
            await #expect(throws: AccountsStoreError.linkExpired) {
                _ = try await store.resetPassword(tokenHash: resetLink.hash, newPasswordHash: "new", now: expiresAt)
            }
            #expect(try await store.account(id: account.id) == account)
            #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == session)

            // One millisecond earlier both still work.
            let justBefore = expiresAt.addingTimeInterval(-0.001)
            #expect(try await store.verifyEmail(tokenHash: verifyLink.hash, now: justBefore).verified)
            #expect(
                try await store.resetPassword(tokenHash: resetLink.hash, newPasswordHash: "new", now: justBefore)
                    .passwordHash == "new"
            )
        }
    }

    @Test("Unknown links, and links of the other kind, are not valid", arguments: StoreKind.allCases)
    func wrongLinks(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Wren"))
            let verifyLink = SecretToken.generate()
            let resetLink = SecretToken.generate()
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.emailVerification, for: account.id, token: verifyLink)
            )
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: resetLink))

            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: SecretToken.generate().hash, now: Fixture.t0)
            }
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: resetLink.hash, now: Fixture.t0)
            }
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.resetPassword(tokenHash: verifyLink.hash, newPasswordHash: "x", now: Fixture.t0)
            }
            // Neither was consumed by the failed attempts.
            #expect(try await store.verifyEmail(tokenHash: verifyLink.hash, now: Fixture.t0).verified)
            #expect(
                try await store.resetPassword(tokenHash: resetLink.hash, newPasswordHash: "x", now: Fixture.t0)
                    .passwordHash == "x"
            )
        }
    }

    @Test(
        "A reset retires the account's other reset links and its verification links; verifying leaves reset links",
        arguments: StoreKind.allCases
    )
    func consumingRetiresSiblings(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Sib"))
            let other = try await store.createAccount(Fixture.account("Other"))
            let (first, second, verify, othersReset) = (
                SecretToken.generate(), SecretToken.generate(), SecretToken.generate(), SecretToken.generate()
            )
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: first))
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: second))
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.emailVerification, for: account.id, token: verify))
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: other.id, token: othersReset))

            _ = try await store.resetPassword(tokenHash: second.hash, newPasswordHash: "h2", now: Fixture.t0)
            await #expect(throws: AccountsStoreError.linkUsed) {
                _ = try await store.resetPassword(tokenHash: first.hash, newPasswordHash: "h1", now: Fixture.t0)
            }
            #expect(try await store.account(id: account.id)?.passwordHash == "h2")
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: verify.hash, now: Fixture.t0)
            }
            // Verifying another account leaves that account's reset links alone.
            let otherVerify = SecretToken.generate()
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.emailVerification, for: other.id, token: otherVerify)
            )
            #expect(try await store.verifyEmail(tokenHash: otherVerify.hash, now: Fixture.t0).verified)
            #expect(
                try await store.resetPassword(tokenHash: othersReset.hash, newPasswordHash: "o", now: Fixture.t0)
                    .passwordHash == "o"
            )
        }
    }

    @Test("Resetting the password ends every session of the account, and only those", arguments: StoreKind.allCases)
    func resetRevokesSessions(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Rita"))
            let bystander = try await store.createAccount(Fixture.account("Bystander"))
            let later = Fixture.date(plusSeconds: 3600)
            let sessions = (0..<3).map { _ in Fixture.session(for: account.id, expiresAt: later) }
            let otherSession = Fixture.session(for: bystander.id, expiresAt: later)
            for session in sessions + [otherSession] { try await store.createSession(session) }
            let link = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: link))

            let updated = try await store.resetPassword(
                tokenHash: link.hash,
                newPasswordHash: "new-hash",
                now: Fixture.t0
            )
            var expected = account
            expected.passwordHash = "new-hash"
            expected.verified = true  // the reset proved the address
            #expect(updated == expected)
            #expect(try await store.account(id: account.id) == expected)
            for session in sessions {
                #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == nil)
            }
            #expect(try await store.session(tokenHash: otherSession.tokenHash, now: Fixture.t0) == otherSession)
            #expect(try await store.deleteAllSessions(accountID: account.id) == 0)
            await #expect(throws: AccountsStoreError.linkUsed) {
                _ = try await store.resetPassword(tokenHash: link.hash, newPasswordHash: "again", now: Fixture.t0)
            }
        }
    }

    @Test("Changing the password keeps the current session and ends the others", arguments: StoreKind.allCases)
    func changePassword(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Chan"))
            let later = Fixture.date(plusSeconds: 3600)
            let sessions = (0..<4).map { _ in Fixture.session(for: account.id, expiresAt: later) }
            for session in sessions { try await store.createSession(session) }

            let ended = try await store.changePassword(
                accountID: account.id,
                newPasswordHash: "h2",
                keepingSession: sessions[1].tokenHash
            )
            #expect(ended == 3)
            #expect(try await store.account(id: account.id)?.passwordHash == "h2")
            #expect(try await store.session(tokenHash: sessions[1].tokenHash, now: Fixture.t0) == sessions[1])
            for index in [0, 2, 3] {
                #expect(try await store.session(tokenHash: sessions[index].tokenHash, now: Fixture.t0) == nil)
            }
            #expect(
                try await store.changePassword(accountID: account.id, newPasswordHash: "h3", keepingSession: nil) == 1
            )
            #expect(try await store.session(tokenHash: sessions[1].tokenHash, now: Fixture.t0) == nil)
        }
    }
}
