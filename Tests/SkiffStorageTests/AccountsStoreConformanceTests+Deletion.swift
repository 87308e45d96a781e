import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    static func emailChangeToken(
        for accountID: String,
        to newEmail: String,
        token: SecretToken = .generate(),
        expiresAt: Date = Fixture.date(plusSeconds: 3600)
    ) -> OneTimeToken {
        var record = Fixture.oneTimeToken(.emailChange, for: accountID, token: token, expiresAt: expiresAt)
        record.newEmail = newEmail
        return record
    }

    @Test(
        "E-mail change: the token moves the address (verified), once; a newer request replaces it; reset links retired",
        arguments: StoreKind.allCases
    )
    func emailChange(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var account = Fixture.account("Mover")
            account.verified = true
            account = try await store.createAccount(account)
            var other = Fixture.account("Other")
            other.verified = true
            other = try await store.createAccount(other)
            let session = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 9000))
            try await store.createSession(session)
            let reset = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: reset))

            let first = SecretToken.generate()
            try await store.insertOneTimeToken(
                Self.emailChangeToken(for: account.id, to: "first@school.edu", token: first)
            )
            let second = SecretToken.generate()
            try await store.insertOneTimeToken(
                Self.emailChangeToken(for: account.id, to: "New@School.edu", token: second)
            )
            // The newer request replaced the first.
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.changeEmail(tokenHash: first.hash, now: Fixture.t0)
            }
            let change = try await store.changeEmail(tokenHash: second.hash, now: Fixture.t0)
            #expect(change.previousEmail == account.email)
            #expect(change.account.email == "new@school.edu" && change.account.verified)
            #expect(try await store.account(email: "new@school.edu")?.id == account.id)
            #expect(try await store.account(email: account.email) == nil)
            #expect(try await store.account(id: account.id) == change.account)
            // Sessions stay; the token works once; reset links mailed to the old address are retired.
            #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == session)
            await #expect(throws: AccountsStoreError.linkUsed) {
                _ = try await store.changeEmail(tokenHash: second.hash, now: Fixture.t0)
            }
            await #expect(throws: AccountsStoreError.linkUsed) {
                _ = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "x", now: Fixture.t0)
            }
            // Another account's address cannot be taken; a verification or reset token is not a change token.
            let taken = SecretToken.generate()
            try await store.insertOneTimeToken(Self.emailChangeToken(for: account.id, to: other.email, token: taken))
            await #expect(throws: AccountsStoreError.emailTaken) {
                _ = try await store.changeEmail(tokenHash: taken.hash, now: Fixture.t0)
            }
            #expect(try await store.account(id: account.id)?.email == "new@school.edu")
            let wrongKind = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: wrongKind))
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.changeEmail(tokenHash: wrongKind.hash, now: Fixture.t0)
            }
            let late = SecretToken.generate()
            try await store.insertOneTimeToken(
                Self.emailChangeToken(for: account.id, to: "late@school.edu", token: late, expiresAt: Fixture.t0)
            )
            await #expect(throws: AccountsStoreError.linkExpired) {
                _ = try await store.changeEmail(tokenHash: late.hash, now: Fixture.t0)
            }
        }
    }

    @Test(
        "Deleting an account erases it (address freed, hidden from search), ends its sessions and links; once",
        arguments: StoreKind.allCases
    )
    func deleteAccount(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var account = Fixture.account("Gone Girl")
            account.verified = true
            account.bio = "Hi"
            account.paymentHandle = "@gone"
            account.zipCode = "37235"
            account.itemsSold = 2
            account = try await store.createAccount(account)
            let keeper = try await store.createAccount(Fixture.account("Gone Too"))
            let session = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 9000))
            try await store.createSession(session)
            let reset = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: reset))

            let when = Fixture.date(plusSeconds: 60)
            let erased = try await store.deleteAccount(id: account.id, now: when)
            #expect(erased.isDeleted && erased.deletedAt == when)
            #expect(erased.displayName == Account.deletedDisplayName)
            #expect(erased.bio.isEmpty && erased.paymentHandle == nil && erased.zipCode == nil && !erased.hasPassword)
            #expect(erased.itemsSold == 2 && erased.createdAt == account.createdAt && !erased.verified)
            #expect(erased.email == Account.erasedEmail(id: account.id) && !erased.email.contains("@"))
            #expect(try await store.account(id: account.id) == erased)
            #expect(try await store.account(email: account.email) == nil)
            #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == nil)
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "x", now: Fixture.t0)
            }
            // Only the other account is found by name; the address is free for a new account.
            let found = try await store.searchUsers(nameQuery: "gone", page: .first).items.map(\.id)
            #expect(found == [keeper.id])
            #expect(try await store.searchUsers(nameQuery: "deleted", page: .first).items.isEmpty)
            let again = try await store.createAccount(Fixture.account("Gone Girl", email: account.email))
            #expect(again.id != account.id)
            await #expect(throws: AccountsStoreError.accountNotFound) {
                _ = try await store.deleteAccount(id: account.id, now: when)
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                _ = try await store.deleteAccount(id: "usr_missing", now: when)
            }
        }
    }

    @Test(
        "A password change or reset, and ending every session, cancel a pending e-mail change",
        arguments: StoreKind.allCases
    )
    func emailChangeCancelled(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var account = Fixture.account("Careful")
            account.verified = true
            account = try await store.createAccount(account)
            for cancel in 0..<3 {
                let link = SecretToken.generate()
                try await store.insertOneTimeToken(
                    Self.emailChangeToken(for: account.id, to: "thief\(cancel)@school.edu", token: link)
                )
                switch cancel {
                case 0:
                    _ = try await store.changePassword(
                        accountID: account.id,
                        newPasswordHash: "new",
                        keepingSession: nil
                    )
                case 1:
                    let reset = SecretToken.generate()
                    try await store.insertOneTimeToken(
                        Fixture.oneTimeToken(.passwordReset, for: account.id, token: reset)
                    )
                    _ = try await store.resetPassword(tokenHash: reset.hash, newPasswordHash: "newer", now: Fixture.t0)
                default:
                    _ = try await store.deleteAllSessions(accountID: account.id)
                }
                await #expect(throws: AccountsStoreError.linkNotValid) {
                    _ = try await store.changeEmail(tokenHash: link.hash, now: Fixture.t0)
                }
            }
            #expect(try await store.account(id: account.id)?.email == account.email)
        }
    }

    @Test(
        "An address held by a never-verified sign-up is released by an e-mail change; a verified holder keeps it",
        arguments: StoreKind.allCases
    )
    func emailChangeReleasesPendingSignUp(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var account = Fixture.account("Mover")
            account.verified = true
            account = try await store.createAccount(account)
            let pending = try await store.createAccount(Fixture.account("Squatter", email: "wanted@school.edu"))
            let squatLink = SecretToken.generate()
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.emailVerification, for: pending.id, token: squatLink)
            )
            let link = SecretToken.generate()
            try await store.insertOneTimeToken(
                Self.emailChangeToken(for: account.id, to: "wanted@school.edu", token: link)
            )
            let change = try await store.changeEmail(tokenHash: link.hash, now: Fixture.t0)
            #expect(change.releasedAccountID == pending.id)
            #expect(try await store.account(id: pending.id) == nil)
            #expect(try await store.account(email: "wanted@school.edu")?.id == account.id)
            await #expect(throws: AccountsStoreError.linkNotValid) {
                _ = try await store.verifyEmail(tokenHash: squatLink.hash, now: Fixture.t0)
            }
        }
    }

    @Test("A deleted account gets no session, link or profile change", arguments: StoreKind.allCases)
    func deletedAccountStaysDeleted(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Gone"))
            _ = try await store.deleteAccount(id: account.id, now: Fixture.t0)
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.createSession(
                    Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 60))
                )
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id))
            }
            var changes = ProfileChanges()
            changes.bio = "I am back"
            await #expect(throws: AccountsStoreError.accountNotFound) {
                _ = try await store.updateProfile(id: account.id, changes: changes)
            }
            #expect(try await store.account(id: account.id)?.bio == "")
        }
    }
}

extension AccountsStoreConformanceTests {
    @Test("accounts(ids:) reads the existing accounts of a set of ids at once", arguments: StoreKind.allCases)
    func accountsByIDs(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let created = try await store.createAccounts(["Ann", "Bob", "Cat"])
            let found = try await store.accounts(ids: [created[0].id, created[2].id, "usr_missing"])
            #expect(found == [created[0].id: created[0], created[2].id: created[2]])
            #expect(try await store.accounts(ids: []).isEmpty)
        }
    }
}
