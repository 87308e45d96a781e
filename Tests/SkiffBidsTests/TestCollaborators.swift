import Foundation
import SkiffBids
import SkiffCore
import SkiffDomain
import Synchronization

/// A small, real ``ListingDirectory`` over a dictionary: `markSold` is atomic, so of concurrent calls on
/// one active listing exactly one succeeds.
final class DictionaryListingDirectory: ListingDirectory {
    private let listings = Mutex<[String: ListingSnapshot]>([:])
    private let sold = Mutex<[String: String]>([:])

    /// Adds (or replaces) a listing.
    func put(_ listing: ListingSnapshot) {
        listings.withLock { $0[listing.id] = listing }
    }

    /// Changes a listing's status (e.g. the seller withdraws it).
    func setStatus(_ id: String, _ status: ListingStatus) {
        listings.withLock { $0[id]?.status = status }
    }

    /// Who bought each listing marked sold.
    var buyers: [String: String] { sold.withLock { $0 } }

    func listing(id: String) async throws -> ListingSnapshot? {
        listings.withLock { $0[id] }
    }

    func markSold(listingID: String, buyerID: String) async throws {
        try listings.withLock { (listings) throws(DomainError) in
            guard listings[listingID]?.status == .active else { throw ListingDirectoryError.notActive }
            listings[listingID]!.status = .sold
            sold.withLock { $0[listingID] = buyerID }
        }
    }
}

/// A ``ConversationOpener`` that numbers conversations and can be made to fail.
final class CountingConversations: ConversationOpener {
    private let state = Mutex<(opened: [String], failing: Bool)>(([], false))

    var opened: [String] { state.withLock { $0.opened } }

    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func openConversation(buyerID: String, sellerID: String, listingID: String) async throws -> String {
        try state.withLock { (state) throws(RPCError) -> String in
            guard !state.failing else { throw RPCError(code: .unavailable, message: "Chat is down.") }
            let id = "cnv_\(state.opened.count + 1)"
            state.opened.append("\(buyerID)|\(sellerID)|\(listingID)")
            return id
        }
    }
}

/// Payment handles from a dictionary.
struct DictionaryPaymentHandles: PaymentHandleDirectory {
    let handles: [String: String]
    func paymentHandle(userID: String) async throws -> String? { handles[userID] }
}

/// Sessions from a dictionary: token → user id (what Accounts' authenticator does over its store).
struct DictionaryAuthenticator: SessionAuthenticator {
    let users: [String: String]

    func authenticate(token: String) async throws -> AuthenticatedUser? {
        users[token].map { AuthenticatedUser(id: $0, sessionToken: token) }
    }
}
