import SkiffAPI
import SkiffAccounts
import SkiffBids
import SkiffBucketList
import SkiffChat
import SkiffCore
import SkiffDomain
import SwiftProtobuf
import Synchronization

/// Bids' view of Listings, through the generated Listings client: in process here, over
/// Skiff/TCP when the services are deployed apart. Calls carry the service token, so Listings
/// shows Bids what the seller sees and lets it mark a listing sold exactly once.
struct ListingsClientDirectory: ListingDirectory {
    let client: Skiff_Listings_V1_Listings.Client

    func listing(id: String) async throws -> ListingSnapshot? {
        let listing: Skiff_Listings_V1_Listing
        do {
            listing = try await client.getListing(.with { $0.listingID = id }).listing
        } catch let error as RPCError where error.code == .notFound {
            return nil
        }
        return ListingSnapshot(
            id: listing.listingID,
            sellerID: listing.sellerID,
            title: listing.title,
            priceCents: listing.priceCents,
            category: ItemCategory(listing.category),
            biddingEnabled: listing.biddingEnabled,
            status: SkiffBids.ListingStatus(listing.status)
        )
    }

    func markSold(listingID: String, buyerID: String) async throws {
        _ = try await client.markSold(.with { $0.listingID = listingID })
    }
}

/// Accounts asks Listings who uploaded an image before taking it as someone's profile picture.
struct ListingsClientImages: ImageDirectory {
    let client: Skiff_Listings_V1_Listings.Client

    func ownerOfImage(id: String) async throws -> String? {
        do {
            return try await client.getImageOwner(.with { $0.imageID = id }).ownerID
        } catch let error as RPCError where error.code == .notFound {
            return nil
        }
    }
}

/// Bids opens the buyer–seller conversation through the Chat client (service token).
struct ChatClientConversations: ConversationOpener {
    let client: Skiff_Chat_V1_Chat.Client

    func openConversation(buyerID: String, sellerID: String, listingID: String) async throws -> String {
        try await client.openConversation(
            .with {
                $0.firstUserID = buyerID
                $0.secondUserID = sellerID
                $0.listingID = listingID
            }
        ).conversationID
    }
}

/// Whether users and listings exist, asked of Accounts and Listings through their typed clients
/// (service token, so withdrawn listings count as existing): Chat's recipients and listing
/// contexts, BucketList's users to follow.
///
/// Listings are never deleted, and accounts only by their owner (then forgotten here at once, by
/// ``ClientAccountCleanup``): an id once found stays found, so those are remembered (up to
/// ``KnownIDs/capacity`` each), and a chat between known users asks nobody. Unknown ids, and deleted
/// accounts (which count as not existing: nobody can message or follow them), are asked every time.
struct ClientDirectory: ChatDirectory, UserDirectory {
    let accounts: Skiff_Accounts_V1_Accounts.Client
    let listings: Skiff_Listings_V1_Listings.Client
    let knownUsers = KnownIDs()
    let knownListings = KnownIDs()

    func userExists(_ userID: String) async throws -> Bool {
        try await knownUsers.exists(userID) {
            let profile = try await accounts.getProfile(.with { $0.userID = userID }).profile
            if profile.deleted { throw RPCError(code: .notFound, message: "The user deleted their account.") }
        }
    }

    func userExists(id: String) async throws -> Bool { try await userExists(id) }

    func listingExists(_ listingID: String) async throws -> Bool {
        try await knownListings.exists(listingID) {
            _ = try await listings.getListing(.with { $0.listingID = listingID })
        }
    }
}

/// Accounts' account deletion, over the Listings and Bids clients (service token): the user's listings and
/// bids are closed, and the user is forgotten by the look-up cache.
struct ClientAccountCleanup: AccountCleanup {
    let listings: Skiff_Listings_V1_Listings.Client
    let bids: Skiff_Bids_V1_Bids.Client
    let directory: ClientDirectory

    func withdrawListings(sellerID: String) async throws -> Int {
        try await listings.withdrawSellerListings(.with { $0.sellerID = sellerID }).withdrawnListingIds.count
    }

    func withdrawBids(bidderID: String) async throws -> Int {
        try await bids.withdrawBidderBids(.with { $0.bidderID = bidderID }).withdrawnBids.count
    }

    func accountErased(userID: String) async {
        directory.knownUsers.forget(userID)
    }
}

/// Ids known to exist, remembered so that they are looked up once.
final class KnownIDs: Sendable {
    /// The most ids remembered (and the most forgotten ones kept); past it the set starts afresh.
    static let capacity = 100_000

    private struct State {
        var known: Set<String> = []
        /// Ids that stopped existing: never remembered again, so a look-up that started before ``forget(_:)``
        /// and ends after it cannot bring one back.
        var forgotten: Set<String> = []
    }

    private let state = Mutex(State())

    /// Whether `id` exists: remembered, or `lookUp` succeeds (NOT_FOUND and INVALID_ARGUMENT mean
    /// it does not; other errors are thrown).
    func exists(_ id: String, lookUp: () async throws -> Void) async throws -> Bool {
        if state.withLock({ $0.known.contains(id) }) { return true }
        do {
            try await lookUp()
        } catch let error as RPCError where error.code == .notFound || error.code == .invalidArgument {
            return false
        }
        state.withLock { state in
            guard !state.forgotten.contains(id) else { return }
            if state.known.count >= Self.capacity { state.known.removeAll(keepingCapacity: true) }
            state.known.insert(id)
        }
        return true
    }

    /// Forgets an id that no longer exists, for good.
    func forget(_ id: String) {
        state.withLock { state in
            state.known.remove(id)
            if state.forgotten.count >= Self.capacity { state.forgotten.removeAll(keepingCapacity: true) }
            state.forgotten.insert(id)
        }
    }
}

/// Accounts asks Chat whom the searching user blocked, with that user's own credentials (the
/// call is made while Accounts handles their request).
struct ChatClientBlockedUsers: BlockedUserDirectory {
    let client: Skiff_Chat_V1_Chat.Client

    func blockedUserIDs(of userID: String) async throws -> Set<String> {
        var blocked: Set<String> = []
        var token = ""
        repeat {
            let page = try await client.listBlockedUsers(
                .with {
                    $0.pageSize = 100
                    $0.pageToken = token
                }
            )
            blocked.formUnion(page.blockedUsers.map(\.userID))
            token = page.nextPageToken
        } while !token.isEmpty
        return blocked
    }
}
