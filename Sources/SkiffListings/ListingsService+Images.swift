import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension ListingsService {
    public func uploadImage(
        requests: RPCAsyncSequence<Skiff_Listings_V1_UploadImageRequest>,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_UploadImageResponse {
        let user = try context.requireUser()
        // Counted before the bytes are read, so a throttled client uploads nothing.
        try limits.uploadImage.acquire(userID: user.id, now: time.now())
        var upload = ImageUpload()
        var isFirst = true
        var messages = 0
        for try await message in requests {
            messages += 1
            guard messages <= ListingsRequestBounds.uploadMessages else {
                throw DomainError(
                    .invalidArgument,
                    "The upload has more than \(ListingsRequestBounds.uploadMessages) messages: send bigger chunks "
                        + "(64 KiB recommended)."
                )
            }
            try ListingsRequestBounds.check(message)
            switch message.data {
            case .metadata(let metadata):
                guard isFirst else {
                    throw DomainError(.invalidArgument, "metadata may only be sent in the first message.")
                }
                guard metadata.filename.count <= 255 else {
                    throw DomainError(.invalidArgument, "metadata.filename is too long: use at most 255 characters.")
                }
            case .chunk(let chunk):
                // Checked per chunk, before it is kept: a client cannot make the server buffer over 5 MiB.
                try upload.append(chunk)
            case nil:
                break
            }
            isFirst = false
        }
        let (contentType, bytes) = try upload.finish()
        let image = StoredImage(
            id: EntityID.make(.image),
            ownerID: user.id,
            contentType: contentType,
            bytes: bytes,
            createdAt: time.now()
        )
        try await store.putImage(image)
        return .with { $0.image = image.header.info }
    }

    public func downloadImage(
        request: Skiff_Listings_V1_DownloadImageRequest,
        response: RPCWriter<Skiff_Listings_V1_DownloadImageResponse>,
        context: ServerContext
    ) async throws {
        try ListingsRequestBounds.check(request)
        guard !request.imageID.isEmpty else { throw DomainError(.invalidArgument, "image_id is empty.") }
        guard let image = try await store.imageHeader(id: request.imageID) else {
            throw DomainError(.notFound, "No image has the id \"\(request.imageID)\".")
        }
        try await response.write(.with { $0.info = image.info })
        // Piece by piece from the store: a download that waits for a slow client holds one chunk.
        let chunkSize = configuration.downloadChunkSize
        var offset = 0
        while offset < image.sizeBytes {
            guard let chunk = try await store.imageBytes(id: image.id, offset: offset, length: chunkSize),
                !chunk.isEmpty
            else {
                throw DomainError(.aborted, "The image was deleted during the download.")
            }
            try await response.write(.with { $0.chunk = chunk })
            offset += chunk.count
        }
    }

    public func getImageOwner(
        request: Skiff_Listings_V1_GetImageOwnerRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_GetImageOwnerResponse {
        try context.requireService()
        try ListingsRequestBounds.check(request)
        guard !request.imageID.isEmpty else { throw DomainError(.invalidArgument, "image_id is empty.") }
        guard let image = try await store.imageHeader(id: request.imageID) else {
            throw DomainError(.notFound, "No image has the id \"\(request.imageID)\".")
        }
        return .with { $0.ownerID = image.ownerID }
    }

    public func withdrawSellerListings(
        request: Skiff_Listings_V1_WithdrawSellerListingsRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_WithdrawSellerListingsResponse {
        try context.requireService()
        try ListingsRequestBounds.check(request)
        guard !request.sellerID.isEmpty else { throw DomainError(.invalidArgument, "seller_id is empty.") }
        var withdrawn: [String] = []
        var page = try PageRequest(size: PageRequest.maximumSize)
        while true {
            // Withdrawn listings too: Bids closing them again rejects nothing twice, and finishes what a
            // failed earlier call left (a listing withdrawn whose bids Bids could not reject).
            let listings = try await store.sellerListings(
                sellerID: request.sellerID,
                statuses: [.active, .withdrawn],
                page: page
            )
            for listing in listings.items {
                if listing.status == .active {
                    let transition = try await store.setStatus(
                        id: listing.id,
                        to: .withdrawn,
                        by: .seller(request.sellerID),
                        now: time.now()
                    )
                    if let event = transition.event {
                        withdrawn.append(listing.id)
                        await publish(event)
                    }
                }
                // As WithdrawListing, the live bids are rejected and their bidders told; here a failure fails
                // the call, so that the caller retries before going on.
                try await bids.listingClosed(listingID: listing.id, status: .withdrawn)
            }
            guard let token = listings.nextPageToken else { break }
            page = try PageRequest(size: PageRequest.maximumSize, token: token)
        }
        return .with { $0.withdrawnListingIds = withdrawn }
    }
}
