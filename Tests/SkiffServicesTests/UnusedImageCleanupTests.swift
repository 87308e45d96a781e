import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffCore
import SkiffDomain
import SkiffListings
import SkiffTesting
import Testing

@testable import SkiffServerApp

/// The housekeeping job that deletes uploaded images no listing uses, with explicit times: Listings'
/// store, and the real Accounts service asked through its typed client with the service token.
@Suite("Unused image clean-up")
struct UnusedImageCleanupTests {
    @Test("After 24 hours, images no listing uses are deleted, except profile pictures; paged through")
    func cleanup() async throws {
        let t0 = Date(millisecondsSince1970: 1_767_225_600_000)
        let listings = InMemoryListingsStore()
        let accountsStore = InMemoryAccountsStore()
        let accounts = AccountsService(store: accountsStore, mailer: OutboxMailer(logger: quietLogger))
        let token = "cleanup-test-service-token"
        let transport = InProcessTransport(
            services: [accounts],
            interceptors: [
                AuthenticationInterceptor(
                    authenticator: AccountsAuthenticator(store: accountsStore),
                    serviceToken: token
                )
            ]
        )
        let owner = try await accountsStore.createAccount(
            Account(id: "usr_owner", email: "own@campus.edu", displayName: "Own", passwordHash: "x", createdAt: t0)
        )
        _ = try await accountsStore.updateProfile(id: owner.id, changes: ProfileChanges(avatarImageID: "img_03"))
        func put(_ id: String, at seconds: Double) async throws {
            try await listings.putImage(
                StoredImage(
                    id: id,
                    ownerID: owner.id,
                    contentType: .png,
                    bytes: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
                    createdAt: t0.addingTimeInterval(seconds)
                )
            )
        }
        for index in 1...7 { try await put(String(format: "img_%02d", index), at: 0) }
        try await put("img_new", at: 20 * 3600)
        _ = try await listings.createListing(
            Listing(
                id: "lst_1",
                sellerID: owner.id,
                fields: ListingFields(
                    title: "Lamp",
                    priceCents: 100,
                    category: .other,
                    condition: .lightlyUsed,
                    location: ListingLocation(zipCode: "37235"),
                    imageIDs: ["img_05"]
                ),
                createdAt: t0
            ),
            requestID: nil
        )

        var cleanup = UnusedImageCleanup(
            store: listings,
            accounts: AccountsClientDirectory(
                client: Skiff_Accounts_V1_Accounts.Client(
                    transport: InterceptedTransport(
                        transport,
                        interceptors: [ServiceCredentialsInterceptor(token: token)]
                    )
                )
            ),
            lifetime: .seconds(24 * 3600)
        )
        cleanup.pageSize = 2
        // Not yet 24 hours old: nothing goes.
        #expect(try await cleanup.run(now: t0.addingTimeInterval(23 * 3600)) == 0)
        // img_01…07 minus the listing's img_05 and the profile picture img_03; img_new is too young.
        #expect(try await cleanup.run(now: t0.addingTimeInterval(25 * 3600)) == 5)
        for id in ["img_03", "img_05", "img_new"] { #expect(try await listings.image(id: id) != nil, "\(id)") }
        for id in ["img_01", "img_02", "img_04", "img_06", "img_07"] {
            #expect(try await listings.image(id: id) == nil, "\(id)")
        }
    }
}
