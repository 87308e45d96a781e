import SkiffAPI
import SkiffAccounts
import SkiffBids
import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// Bids' view of Listings, through the generated Listings client: in process here, over
/// Skiff/TCP when the services are deployed apart. Calls carry the service token, so Listings
/// shows Bids what the seller sees and lets it mark a listing sold exactly once.
struct ListingsClientDirectory: ListingDirectory {
    let client: Skiff_Listings_V1_Listings.Client

    init(transport: any ClientTransport, serviceToken: String) {
        self.client = Skiff_Listings_V1_Listings.Client(
            transport: InterceptedTransport(
                transport,
                interceptors: [ServiceCredentialsInterceptor(token: serviceToken)]
            )
        )
    }

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

/// Until the Chat service exists, an accepted bid opens no conversation: the sale records an
/// empty conversation id (and Bids tries again on later reads).
struct NoChatYet: ConversationOpener {
    func openConversation(buyerID: String, sellerID: String, listingID: String) async throws -> String { "" }
}
