import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    /// Runs `count` copies of `operation` concurrently and returns how many succeeded and the errors thrown.
    private func race(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async -> (successes: Int, errors: [DomainError]) {
        await withTaskGroup(of: Result<Void, any Error>.self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        try await operation(index)
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var successes = 0
            var errors: [DomainError] = []
            for await result in group {
                switch result {
                case .success: successes += 1
                case .failure(let error as DomainError): errors.append(error)
                case .failure(let error): Issue.record("Unexpected error: \(error)")
                }
            }
            return (successes, errors)
        }
    }

    @Test("50 concurrent sign-ups with one e-mail address: exactly one succeeds", arguments: StoreKind.allCases)
    func concurrentSignUps(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let outcome = await race(50) { index in
                let email = index.isMultiple(of: 2) ? "rush@school.edu" : "RUSH@School.edu"
                _ = try await store.createAccount(Fixture.account("Rusher \(index)", email: email))
            }
            #expect(outcome.successes == 1)
            #expect(outcome.errors == Array(repeating: AccountsStoreError.emailTaken, count: 49))
            let rushers = try await store.searchAll("rusher", pageSize: 100)
            #expect(rushers.count == 1)
        }
    }

    @Test("50 concurrent ratings of one sale: exactly one is kept", arguments: StoreKind.allCases)
    func concurrentRatings(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Seller", "Buyer"])
            let (seller, buyer) = (people[0].id, people[1].id)
            let outcome = await race(50) { index in
                try await store.addRating(
                    Fixture.rating(sale: "sale_hot", seller: seller, buyer: buyer, stars: index % 5 + 1)
                )
            }
            #expect(outcome.successes == 1)
            #expect(outcome.errors == Array(repeating: AccountsStoreError.saleAlreadyRated, count: 49))
            #expect(try await store.ratingSummary(sellerID: seller).count == 1)
        }
    }

    @Test("Concurrent uses of one link: exactly one succeeds", arguments: StoreKind.allCases)
    func concurrentLinkUse(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let account = try await store.createAccount(Fixture.account("Racer"))
            let link = SecretToken.generate()
            try await store.insertOneTimeToken(Fixture.oneTimeToken(.passwordReset, for: account.id, token: link))
            let outcome = await race(20) { index in
                _ = try await store.resetPassword(tokenHash: link.hash, newPasswordHash: "h\(index)", now: Fixture.t0)
            }
            #expect(outcome.successes == 1)
            #expect(outcome.errors == Array(repeating: AccountsStoreError.linkUsed, count: 19))
        }
    }

    @Test("Concurrent increments are all counted", arguments: StoreKind.allCases)
    func concurrentIncrements(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let seller = try await store.createAccount(Fixture.account("Busy"))
            let outcome = await race(30) { _ in try await store.incrementItemsSold(accountID: seller.id) }
            #expect(outcome.successes == 30)
            #expect(try await store.account(id: seller.id)?.itemsSold == 30)
        }
    }

    @Test("Concurrent recordings of one completed sale count it once", arguments: StoreKind.allCases)
    func concurrentSaleRecordings(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let seller = try await store.createAccount(Fixture.account("Seller"))
            let outcome = await race(20) { _ in
                _ = try await store.recordCompletedSale(saleID: "sal_race", sellerID: seller.id, at: Fixture.t0)
            }
            #expect(outcome.successes == 20)
            #expect(try await store.account(id: seller.id)?.itemsSold == 1)
        }
    }
}
