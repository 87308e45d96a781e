import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

/// The one conformance suite for ``AccountsStore``: every test runs against every backend
/// (``StoreKind``), with exact expected values, so a behaviour difference between backends fails here.
///
/// The suite is split over several files by topic (`+Tokens`, `+Search`, `+Ratings`, `+Concurrency`).
@Suite("AccountsStore conformance")
struct AccountsStoreConformanceTests {
    // MARK: Accounts

    @Test("Create an account and read it back by id and by e-mail", arguments: StoreKind.allCases)
    func createAndRead(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            var input = Fixture.account("Ada Lovelace", email: "  Ada@School.EDU ")
            input.createdAt = Fixture.t0.addingTimeInterval(0.000_4)  // rounds to t0
            input.bio = "Hi"
            input.paymentHandle = "@ada"
            let created = try await store.createAccount(input)

            var expected = input
            expected.email = "ada@school.edu"
            expected.createdAt = Fixture.t0
            #expect(created == expected)
            #expect(try await store.account(id: input.id) == expected)
            #expect(try await store.account(email: "ADA@school.edu") == expected)
            #expect(try await store.account(email: " ada@school.edu") == expected)
        }
    }

    @Test("A duplicate e-mail address (any case) or id is rejected", arguments: StoreKind.allCases)
    func duplicates(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let first = try await store.createAccount(Fixture.account("Bob", email: "bob@school.edu"))
            await #expect(throws: AccountsStoreError.emailTaken) {
                _ = try await store.createAccount(Fixture.account("Bobby", email: "BOB@School.edu"))
            }
            await #expect(throws: AccountsStoreError.accountIDTaken) {
                _ = try await store.createAccount(Fixture.account("Bob 2", email: "bob2@school.edu", id: first.id))
            }
            #expect(try await store.account(id: first.id) == first)
            #expect(try await store.account(email: "bob2@school.edu") == nil)
            #expect(try await store.searchAll("", pageSize: 10) == [first])
        }
    }

    @Test("Missing rows: lookups return nil, changes throw notFound", arguments: StoreKind.allCases)
    func missingRows(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let missing = EntityID.make(.account)
            let alice = try await store.createAccount(Fixture.account("Alice"))
            #expect(try await store.account(id: missing) == nil)
            #expect(try await store.account(email: "nobody@school.edu") == nil)
            await #expect(throws: AccountsStoreError.accountNotFound) {
                _ = try await store.updateProfile(id: missing, changes: ProfileChanges(bio: "x"))
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.incrementItemsSold(accountID: missing)
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.changePassword(accountID: missing, newPasswordHash: "h", keepingSession: nil)
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.createSession(Fixture.session(for: missing, expiresAt: Fixture.date(plusSeconds: 60)))
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                try await store.insertOneTimeToken(Fixture.oneTimeToken(.emailVerification, for: missing))
            }
            await #expect(throws: AccountsStoreError.sellerNotFound) {
                try await store.addRating(Fixture.rating(sale: "sale_1", seller: missing, buyer: alice.id, stars: 5))
            }
            await #expect(throws: AccountsStoreError.buyerNotFound) {
                try await store.addRating(Fixture.rating(sale: "sale_1", seller: alice.id, buyer: missing, stars: 5))
            }
            let report = { (reporter: String, reported: String) in
                Report(
                    id: "rep_1",
                    reporterID: reporter,
                    reportedID: reported,
                    reason: "spam",
                    details: "",
                    createdAt: Fixture.t0
                )
            }
            await #expect(throws: AccountsStoreError.reporterNotFound) {
                try await store.addReport(report(missing, alice.id))
            }
            await #expect(throws: AccountsStoreError.reportedNotFound) {
                try await store.addReport(report(alice.id, missing))
            }
            #expect(try await store.ratings(sellerID: missing, page: .first) == Page(items: [], nextPageToken: nil))
            #expect(try await store.ratingSummary(sellerID: missing) == RatingSummary(count: 0, totalStars: 0))
            #expect(try await store.reports(reportedID: alice.id) == [])
            #expect(try await store.deleteSession(tokenHash: SecretToken.generate().hash) == false)
            #expect(try await store.deleteAllSessions(accountID: missing) == 0)
        }
    }

    @Test("Profile changes: set, keep (nil) and clear (empty)", arguments: StoreKind.allCases)
    func updateProfile(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let original = try await store.createAccount(Fixture.account("Grace Hopper"))
            let changed = try await store.updateProfile(
                id: original.id,
                changes: ProfileChanges(
                    displayName: "Admiral Grace",
                    bio: "COBOL",
                    avatarImageID: "img_abc",
                    paymentHandle: "@grace",
                    zipCode: "12345"
                )
            )
            var expected = original
            expected.displayName = "Admiral Grace"
            expected.bio = "COBOL"
            expected.avatarImageID = "img_abc"
            expected.paymentHandle = "@grace"
            expected.zipCode = "12345"
            #expect(changed == expected)
            #expect(try await store.account(id: original.id) == expected)

            let cleared = try await store.updateProfile(
                id: original.id,
                changes: ProfileChanges(avatarImageID: "", paymentHandle: "", zipCode: "")
            )
            expected.avatarImageID = nil
            expected.paymentHandle = nil
            expected.zipCode = nil
            #expect(cleared == expected)
            #expect(try await store.account(id: original.id) == expected)

            // Search follows the new name.
            #expect(try await store.searchAll("admiral", pageSize: 5).map(\.id) == [original.id])
            #expect(try await store.searchAll("hopper", pageSize: 5) == [])
        }
    }

    @Test("Items sold count up", arguments: StoreKind.allCases)
    func itemsSold(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let seller = try await store.createAccount(Fixture.account("Seller"))
            #expect(try await store.incrementItemsSold(accountID: seller.id) == 1)
            #expect(try await store.incrementItemsSold(accountID: seller.id) == 2)
            #expect(try await store.account(id: seller.id)?.itemsSold == 2)
        }
    }

    // MARK: Sessions

    @Test("Sessions: valid until expiresAt exactly, then invisible", arguments: StoreKind.allCases)
    func sessionExpiry(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Sam"))
            let expiresAt = Fixture.date(plusSeconds: 3600)
            let session = Fixture.session(for: account.id, expiresAt: expiresAt)
            try await store.createSession(session)
            await #expect(throws: AccountsStoreError.sessionTaken) { try await store.createSession(session) }

            #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.t0) == session)
            let justBefore = expiresAt.addingTimeInterval(-0.001)
            #expect(try await store.session(tokenHash: session.tokenHash, now: justBefore) == session)
            #expect(try await store.session(tokenHash: session.tokenHash, now: expiresAt) == nil)
            #expect(try await store.session(tokenHash: session.tokenHash, now: Fixture.date(plusSeconds: 7200)) == nil)
            #expect(try await store.session(tokenHash: SecretToken.generate().hash, now: Fixture.t0) == nil)
        }
    }

    @Test("Sign out one session, or all of an account's", arguments: StoreKind.allCases)
    func deleteSessions(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let (a, b) = try await (
                store.createAccount(Fixture.account("A")), store.createAccount(Fixture.account("B"))
            )
            let later = Fixture.date(plusSeconds: 600)
            let sessionsA = (0..<3).map { _ in Fixture.session(for: a.id, expiresAt: later) }
            let sessionB = Fixture.session(for: b.id, expiresAt: later)
            for session in sessionsA + [sessionB] { try await store.createSession(session) }

            #expect(try await store.deleteSession(tokenHash: sessionsA[0].tokenHash) == true)
            #expect(try await store.deleteSession(tokenHash: sessionsA[0].tokenHash) == false)
            #expect(try await store.session(tokenHash: sessionsA[0].tokenHash, now: Fixture.t0) == nil)
            #expect(try await store.deleteAllSessions(accountID: a.id) == 2)
            #expect(try await store.session(tokenHash: sessionsA[1].tokenHash, now: Fixture.t0) == nil)
            #expect(try await store.session(tokenHash: sessionB.tokenHash, now: Fixture.t0) == sessionB)
        }
    }

    @Test("Housekeeping removes expired sessions and links only", arguments: StoreKind.allCases)
    func deleteExpired(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Kim"))
            let expired = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 10))
            let live = Fixture.session(for: account.id, expiresAt: Fixture.date(plusSeconds: 100))
            try await store.createSession(expired)
            try await store.createSession(live)
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(.passwordReset, for: account.id, expiresAt: Fixture.date(plusSeconds: 10))
            )
            let liveLink = SecretToken.generate()
            try await store.insertOneTimeToken(
                Fixture.oneTimeToken(
                    .passwordReset,
                    for: account.id,
                    token: liveLink,
                    expiresAt: Fixture.date(plusSeconds: 100)
                )
            )
            #expect(try await store.deleteExpired(now: Fixture.date(plusSeconds: 10)) == 2)
            #expect(try await store.deleteExpired(now: Fixture.date(plusSeconds: 10)) == 0)
            #expect(try await store.session(tokenHash: live.tokenHash, now: Fixture.t0) == live)
            _ = try await store.resetPassword(tokenHash: liveLink.hash, newPasswordHash: "new", now: Fixture.t0)
        }
    }
}
