import SkiffAPI
import SkiffAccounts
import SkiffDomain
import SwiftProtobuf
import Testing

/// ``AccountsRequestBounds``: pure checks of Accounts requests, without a server.
@Suite("Accounts request bounds")
struct AccountsRequestBoundsTests {
    @Test("Request bounds: UTF-8 bytes, checked in constant time, with the field and limit in the message")
    func bounds() throws {
        try AccountsRequestBounds.check(
            Skiff_Accounts_V1_SignUpRequest.with {
                $0.email = String(repeating: "a", count: 243) + "@campus.edu"  // 254 bytes
            }
        )
        let email = #expect(throws: DomainError.self) {
            try AccountsRequestBounds.check(
                Skiff_Accounts_V1_LogInRequest.with { $0.email = String(repeating: "a", count: 244) + "@campus.edu" }
            )
        }
        #expect(email?.code == .invalidArgument)
        #expect(email?.message == "email is too long: send at most 254 bytes (UTF-8).")
        // 1,024 bytes of password pass; one 2-byte character more does not.
        try AccountsRequestBounds.check(
            Skiff_Accounts_V1_LogInRequest.with { $0.password = String(repeating: "é", count: 512) }
        )
        #expect(throws: DomainError.self) {
            try AccountsRequestBounds.check(
                Skiff_Accounts_V1_LogInRequest.with { $0.password = String(repeating: "é", count: 513) }
            )
        }
        #expect(throws: DomainError.self) {
            try AccountsRequestBounds.check(Skiff_Accounts_V1_GetProfileRequest())
        }
        #expect(throws: DomainError.self) {
            try AccountsRequestBounds.check(
                Skiff_Accounts_V1_ListRatingsRequest.with {
                    $0.userID = "usr_1"
                    $0.pageSize = -1
                }
            )
        }
        #expect(throws: DomainError.self) {
            try AccountsRequestBounds.check(
                Skiff_Accounts_V1_FilterProfilePicturesRequest.with {
                    $0.imageIds = Array(repeating: "img", count: 1_001)
                }
            )
        }
        try AccountsRequestBounds.check(
            Skiff_Accounts_V1_FilterProfilePicturesRequest.with { $0.imageIds = Array(repeating: "img", count: 1_000) }
        )
    }
}
