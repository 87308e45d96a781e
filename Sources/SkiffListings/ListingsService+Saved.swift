import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension ListingsService {
    public func saveListing(
        request: Skiff_Listings_V1_SaveListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_SaveListingResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        try limits.saveListing.acquire(userID: user.id, now: time.now())
        let saved = try await store.saveListing(
            userID: user.id,
            listingID: request.listingID,
            now: time.now(),
            limit: configuration.maximumSavedListings
        )
        return .with { $0.savedListing = saved.proto(viewerID: user.id) }
    }

    public func unsaveListing(
        request: Skiff_Listings_V1_UnsaveListingRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_UnsaveListingResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.listingID.isEmpty else { throw DomainError(.invalidArgument, "listing_id is empty.") }
        try await store.unsaveListing(userID: user.id, listingID: request.listingID)
        return Skiff_Listings_V1_UnsaveListingResponse()
    }

    public func listSavedListings(
        request: Skiff_Listings_V1_ListSavedListingsRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_ListSavedListingsResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.savedListings(userID: user.id, page: page)
        return .with {
            $0.savedListings = result.items.map { $0.proto(viewerID: user.id) }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    /// Replays the changes after the resume token from the store, then streams live ones.
    ///
    /// The watcher subscribes before the replay, so nothing committed meanwhile is lost; live changes the
    /// replay already sent are skipped by sequence number.
    public func watchSavedListings(
        request: Skiff_Listings_V1_WatchSavedListingsRequest,
        response: RPCWriter<Skiff_Listings_V1_WatchSavedListingsResponse>,
        context: ServerContext
    ) async throws {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        let after = try resumePoint(request.resumeToken)
        let watcher = broadcaster.subscribe(userID: user.id)
        defer { broadcaster.unsubscribe(watcher) }
        // When the connection drains (the server restarts) the watch ends after what is buffered.
        let draining = context.drain.onDrain { watcher.finish(throwing: ChangeWatcher.drained) }
        defer { context.drain.cancel(draining) }
        var replayedUpTo: Int64 = 0
        if let after {
            replayedUpTo = after
            let batchSize = 100
            while true {
                // A long replay does not hold up a drain: it stops between batches.
                if context.drain.isDraining { throw ChangeWatcher.drained }
                let batch = try await store.changes(forUser: user.id, after: replayedUpTo, limit: batchSize)
                for event in batch {
                    try await response.write(.with { $0.change = Self.change(event) })
                    replayedUpTo = event.sequence
                }
                if batch.count < batchSize { break }
            }
        }
        while true {
            let event = try await watcher.next()
            guard event.sequence > replayedUpTo else { continue }
            try await response.write(.with { $0.change = Self.change(event) })
        }
    }

    /// Where a resume token points: the sequence of the last change the client received.
    private func resumePoint(_ token: String) throws(DomainError) -> Int64? {
        guard !token.isEmpty else { return nil }
        let cursor: WatchCursor
        do {
            cursor = try PageToken.decode(token, as: WatchCursor.self, kind: WatchCursor.kind)
        } catch {
            throw DomainError(.invalidArgument, "resume_token is not valid: pass a ListingChange.resume_token as is.")
        }
        let age = time.now().millisecondsSince1970 - cursor.t
        let retention = configuration.changeRetention.components.seconds * 1000
        guard age <= retention else {
            throw DomainError(
                .failedPrecondition,
                "resume_token is too old (changes are kept 7 days): re-read ListSavedListings, then watch without one."
            )
        }
        return cursor.s
    }

    static func change(_ event: ListingChangeEvent) -> Skiff_Listings_V1_ListingChange {
        .with {
            $0.listingID = event.listingID
            $0.listingTitle = event.title
            $0.kind = event.kind.proto
            $0.newPriceCents = event.newPriceCents
            $0.oldPriceCents = event.oldPriceCents
            $0.changedAt = Google_Protobuf_Timestamp(date: event.changedAt)
            $0.resumeToken = PageToken.encode(
                WatchCursor(s: event.sequence, t: event.changedAt.millisecondsSince1970),
                kind: WatchCursor.kind
            )
        }
    }
}

/// What a resume token carries: a change's sequence number and time.
struct WatchCursor: Codable, Hashable, Sendable {
    static let kind = "listings.watch"
    var s: Int64
    var t: Int64
}
