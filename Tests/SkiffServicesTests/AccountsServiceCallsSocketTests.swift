import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// The service-only Accounts calls Bids makes (payment handles, completed sales), over a real socket
/// on both backends, with the test servers' service token.
@Suite("Accounts service calls over a socket")
struct AccountsServiceCallsSocketTests {
    @Test(
        "GetPaymentHandle, RecordCompletedSale, FilterProfilePictures: results, idempotency, exact codes",
        arguments: Backend.allCases
    )
    func serviceCalls(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@campus.edu", name: "Sel")
            let other = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "oth@campus.edu", name: "Oth")
            _ = try await accounts.updateProfile(
                .with {
                    $0.account.paymentHandle = "@sel-pays"
                    $0.updateMask.paths = ["payment_handle"]
                },
                metadata: seller.auth
            )

            // Payment handles: a service reads anyone's; empty when none.
            let handle = Skiff_Accounts_V1_GetPaymentHandleRequest.with { $0.userID = seller.id }
            #expect(try await accounts.getPaymentHandle(handle, metadata: serviceAuth).paymentHandle == "@sel-pays")
            #expect(
                try await accounts.getPaymentHandle(.with { $0.userID = other.id }, metadata: serviceAuth).paymentHandle
                    == ""
            )
            await expectStatus(.unauthenticated) { _ = try await accounts.getPaymentHandle(handle) }
            await expectStatus(.permissionDenied) {
                _ = try await accounts.getPaymentHandle(handle, metadata: other.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await accounts.getPaymentHandle(handle, metadata: seller.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.getPaymentHandle(.init(), metadata: serviceAuth)
            }
            await expectStatus(.notFound) {
                _ = try await accounts.getPaymentHandle(.with { $0.userID = "usr_missing" }, metadata: serviceAuth)
            }

            // Completed sales count once per sale id.
            let record = Skiff_Accounts_V1_RecordCompletedSaleRequest.with {
                $0.saleID = "sal_test_1"
                $0.sellerID = seller.id
            }
            let first = try await accounts.recordCompletedSale(record, metadata: serviceAuth)
            #expect(first.itemsSold == 1)
            #expect(first.newlyRecorded)
            let retry = try await accounts.recordCompletedSale(record, metadata: serviceAuth)
            #expect(retry.itemsSold == 1)
            #expect(!retry.newlyRecorded)
            #expect(try await accounts.getProfile(.with { $0.userID = seller.id }).profile.itemsSold == 1)

            await expectStatus(.unauthenticated) { _ = try await accounts.recordCompletedSale(record) }
            await expectStatus(.permissionDenied) {
                _ = try await accounts.recordCompletedSale(record, metadata: seller.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.recordCompletedSale(.with { $0.sellerID = seller.id }, metadata: serviceAuth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.recordCompletedSale(.with { $0.saleID = "sal_x" }, metadata: serviceAuth)
            }
            await expectStatus(.notFound) {
                _ = try await accounts.recordCompletedSale(
                    .with {
                        $0.saleID = "sal_x"
                        $0.sellerID = "usr_missing"
                    },
                    metadata: serviceAuth
                )
            }
            await expectStatus(.alreadyExists) {
                _ = try await accounts.recordCompletedSale(
                    .with {
                        $0.saleID = "sal_test_1"
                        $0.sellerID = other.id
                    },
                    metadata: serviceAuth
                )
            }
            #expect(try await accounts.getProfile(.with { $0.userID = other.id }).profile.itemsSold == 0)

            // Profile pictures among image ids.
            let avatar = try await ListingsServiceTests.upload(
                ListingsClient(transport: connection),
                seller.auth,
                ListingsServiceTests.png
            ).imageID
            _ = try await accounts.updateProfile(
                .with {
                    $0.account.avatarImageID = avatar
                    $0.updateMask.paths = ["avatar_image_id"]
                },
                metadata: seller.auth
            )
            let filter = Skiff_Accounts_V1_FilterProfilePicturesRequest.with {
                $0.imageIds = ["img_other", avatar]
            }
            #expect(
                try await accounts.filterProfilePictures(filter, metadata: serviceAuth).profilePictureIds
                    == [avatar]
            )
            #expect(try await accounts.filterProfilePictures(.init(), metadata: serviceAuth).profilePictureIds.isEmpty)
            await expectStatus(.unauthenticated) { _ = try await accounts.filterProfilePictures(filter) }
            await expectStatus(.permissionDenied) {
                _ = try await accounts.filterProfilePictures(filter, metadata: seller.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await accounts.filterProfilePictures(
                    .with { $0.imageIds = ["img_a", ""] },
                    metadata: serviceAuth
                )
            }
            let tooMany = await expectStatus(.invalidArgument) {
                _ = try await accounts.filterProfilePictures(
                    .with { $0.imageIds = (0...1_000).map { "img_\($0)" } },
                    metadata: serviceAuth
                )
            }
            #expect(tooMany?.message.contains("at most 1000") == true)
        }
    }
}
