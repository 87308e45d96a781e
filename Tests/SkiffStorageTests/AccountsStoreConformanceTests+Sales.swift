import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    @Test(
        "A completed sale counts once per sale id; another seller's sale id is refused",
        arguments: StoreKind.allCases
    )
    func recordCompletedSale(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let seller = try await store.createAccount(Fixture.account("Seller"))
            let other = try await store.createAccount(Fixture.account("Other"))
            #expect(
                try await store.recordCompletedSale(saleID: "sal_1", sellerID: seller.id, at: Fixture.t0)
                    == CompletedSaleRecord(itemsSold: 1, newlyRecorded: true)
            )
            // A retry changes nothing and answers the same count.
            #expect(
                try await store.recordCompletedSale(
                    saleID: "sal_1",
                    sellerID: seller.id,
                    at: Fixture.date(plusSeconds: 5)
                )
                    == CompletedSaleRecord(itemsSold: 1, newlyRecorded: false)
            )
            #expect(
                try await store.recordCompletedSale(saleID: "sal_2", sellerID: seller.id, at: Fixture.t0)
                    == CompletedSaleRecord(itemsSold: 2, newlyRecorded: true)
            )
            #expect(try await store.account(id: seller.id)?.itemsSold == 2)
            await #expect(throws: AccountsStoreError.saleRecordedForAnotherSeller) {
                _ = try await store.recordCompletedSale(saleID: "sal_1", sellerID: other.id, at: Fixture.t0)
            }
            await #expect(throws: AccountsStoreError.accountNotFound) {
                _ = try await store.recordCompletedSale(saleID: "sal_3", sellerID: "usr_missing", at: Fixture.t0)
            }
            #expect(try await store.account(id: other.id)?.itemsSold == 0)
            // The older increment still adds on top.
            #expect(try await store.incrementItemsSold(accountID: seller.id) == 3)
        }
    }
}
