public import Foundation
public import SkiffDomain

/// A ``ListingsStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one reader–writer lock (reads, searches included, run side by side; a write runs
/// alone), and every method runs in one critical section without suspending,
/// so each use case is atomic as a database transaction would be. Writes load what ``ListingLifecycle``
/// needs, let it decide and save what it returns. Search runs on real indexes kept in the same critical
/// section as the listings (`ListingIndex`: inverted, tag, seller, grid-cell and one sorted index per
/// order), so its cost follows the page and the candidates rather than the table; each result is still
/// decided by `ListingSearchEngine`, the same code that checks SQLite's.
public final class InMemoryListingsStore: ListingsStore {
    private struct RequestKey: Hashable {
        var sellerID: String
        var requestID: String
    }

    private struct State {
        var listings: [String: Listing] = [:]
        var index: ListingIndex
        var requests: [RequestKey: (listingID: String, fingerprint: String)] = [:]
        var images: [String: StoredImage] = [:]
        /// Saved-at per user and listing.
        var saved: [String: [String: Date]] = [:]
        var changes: [ListingChangeEvent] = []
        var lastSequence: Int64 = 0
        var comments: [String: ListingComment] = [:]
        /// Each listing's comment ids, oldest first (a listing's comments have increasing dates, so new
        /// ones are appended).
        var listingComments: [String: [String]] = [:]
        /// Every comment by (date, id), for the feed relay.
        var commentsByTime = SortedKeys<CommentKey>(by: CommentKey.precedes)

        /// Stores a listing and indexes it.
        mutating func put(_ listing: Listing) {
            listings[listing.id] = listing
            index.put(listing)
        }

        /// Saves a decided change: stores the listing and numbers and records its event (nothing without one).
        mutating func save(_ change: ListingLifecycle.Change) -> ListingChangeEvent? {
            guard let draft = change.event else { return nil }
            put(change.listing)
            lastSequence += 1
            let event = draft.numbered(lastSequence)
            changes.append(event)
            return event
        }

        /// The uploader of each image in `ids` that exists, by image id.
        func imageOwners(_ ids: [String]) -> [String: String] {
            var owners: [String: String] = [:]
            for id in ids { owners[id] = images[id]?.ownerID }
            return owners
        }
    }

    private let state: ReadWriteLock<State>

    /// Creates an empty store.
    public init() {
        state = ReadWriteLock(State(index: ListingIndex()))
    }

    /// Creates an empty store whose searches weigh `costs` when they choose how to answer (tests force
    /// each path with ``ListingSearchCosts/alwaysCollect`` and ``ListingSearchCosts/alwaysWalk``).
    package init(searchCosts costs: ListingSearchCosts) {
        state = ReadWriteLock(State(index: ListingIndex(costs: costs)))
    }

    // MARK: Listings

    public func createListing(_ listing: Listing, requestID: String?) async throws -> Listing {
        try state.withWriteLock { (state) throws(DomainError) -> Listing in
            let earlier = requestID.flatMap { state.requests[RequestKey(sellerID: listing.sellerID, requestID: $0)] }
            let decision = try ListingLifecycle.create(
                listing,
                requestID: requestID,
                earlierRequest: earlier.map {
                    ListingLifecycle.EarlierRequest(fingerprint: $0.fingerprint, listing: state.listings[$0.listingID])
                },
                imageOwners: state.imageOwners(listing.imageIDs),
                listingIDTaken: state.listings[listing.id] != nil
            )
            switch decision {
            case .retry(let existing):
                return existing
            case .create(let stored, let request):
                state.put(stored)
                if let request {
                    state.requests[RequestKey(sellerID: request.sellerID, requestID: request.requestID)] = (
                        request.listingID, request.fingerprint
                    )
                }
                return stored
            }
        }
    }

    public func listing(id: String) async throws -> Listing? {
        state.withReadLock { $0.listings[id] }
    }

    public func updateListing(
        id: String,
        sellerID: String,
        changes: ListingChanges,
        now: Date
    ) async throws -> ListingUpdate {
        try state.withWriteLock { (state) throws(DomainError) -> ListingUpdate in
            let change = try ListingLifecycle.update(
                state.listings[id],
                sellerID: sellerID,
                changes: changes,
                imageOwners: state.imageOwners(changes.imageIDs ?? []),
                now: now
            )
            return ListingUpdate(listing: change.listing, event: state.save(change))
        }
    }

    public func setStatus(
        id: String,
        to status: ListingStatus,
        by actor: StatusActor,
        now: Date
    ) async throws -> StatusTransition {
        try state.withWriteLock { (state) throws(DomainError) -> StatusTransition in
            let change = try ListingLifecycle.setStatus(state.listings[id], to: status, by: actor, now: now)
            return StatusTransition(listing: change.listing, event: state.save(change))
        }
    }

    public func search(_ query: ListingQuery, page: PageRequest) async throws -> Page<ListingSearchHit> {
        let compiled = try CompiledListingQuery(query, page: page)
        return state.withReadLock { $0.index.search(compiled, size: page.size) }
    }

    public func sellerListings(
        sellerID: String,
        statuses: Set<ListingStatus>,
        page: PageRequest
    ) async throws -> Page<Listing> {
        let cursor = try ListingsPaging.sellerCursor(page, sellerID: sellerID, statuses: statuses)
        let fetched: [Listing] = state.withReadLock { state in
            var matches = state.index.listings(sellerID: sellerID).filter { listing in
                (statuses.isEmpty || statuses.contains(listing.status))
                    && (cursor.map { ListingsPaging.isAfter(listing, $0) } ?? true)
            }
            matches.sort(by: ListingsPaging.newestFirst)
            return Array(matches.prefix(page.size + 1))
        }
        return ListingsPaging.sellerPage(fetched, size: page.size, sellerID: sellerID, statuses: statuses)
    }

    // MARK: Images

    public func putImage(_ image: StoredImage) async throws {
        try state.withWriteLock { (state) throws(DomainError) in
            let stored = try ListingLifecycle.putImage(image, imageIDTaken: state.images[image.id] != nil)
            state.images[stored.id] = stored
        }
    }

    public func image(id: String) async throws -> StoredImage? {
        state.withReadLock { $0.images[id] }
    }

    public func imageHeader(id: String) async throws -> ImageHeader? {
        state.withReadLock { $0.images[id]?.header }
    }

    public func imageBytes(id: String, offset: Int, length: Int) async throws -> Data? {
        state.withReadLock { $0.images[id] }?.bytes(offset: offset, length: length)
    }

    public func unattachedImageIDs(uploadedBefore date: Date, after id: String?, limit: Int) async throws -> [String] {
        let cutoff = date.roundedToMilliseconds
        return state.withReadLock { state in
            let attached = Set(state.listings.values.flatMap(\.imageIDs))
            let ids = state.images.values
                .filter { $0.createdAt < cutoff && !attached.contains($0.id) }
                .map(\.id)
                .filter { candidate in id.map { $0.utf8.lexicographicallyPrecedes(candidate.utf8) } ?? true }
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return Array(ids.prefix(max(limit, 0)))
        }
    }

    public func deleteUnattachedImages(uploadedBefore date: Date, keeping: Set<String>) async throws -> Int {
        let cutoff = date.roundedToMilliseconds
        return state.withWriteLock { state in
            let attached = Set(state.listings.values.flatMap(\.imageIDs))
            let doomed = state.images.values.filter { image in
                image.createdAt < cutoff && !attached.contains(image.id) && !keeping.contains(image.id)
            }
            for image in doomed { state.images[image.id] = nil }
            return doomed.count
        }
    }

    // MARK: Saved listings

    public func saveListing(userID: String, listingID: String, now: Date, limit: Int) async throws -> SavedListing {
        try state.withWriteLock { (state) throws(DomainError) -> SavedListing in
            let decision = try ListingLifecycle.save(
                state.listings[listingID],
                savedAt: state.saved[userID]?[listingID],
                savedCount: state.saved[userID]?.count ?? 0,
                limit: limit,
                now: now
            )
            switch decision {
            case .kept(let saved):
                return saved
            case .save(let saved):
                state.saved[userID, default: [:]][listingID] = saved.savedAt
                return saved
            }
        }
    }

    public func unsaveListing(userID: String, listingID: String) async throws {
        state.withWriteLock { _ = $0.saved[userID]?.removeValue(forKey: listingID) }
    }

    public func savedListings(userID: String, page: PageRequest) async throws -> Page<SavedListing> {
        let cursor = try ListingsPaging.savedCursor(page, userID: userID)
        let fetched: [SavedListing] = state.withReadLock { state in
            var matches: [SavedListing] = []
            for (listingID, savedAt) in state.saved[userID] ?? [:] {
                guard let listing = state.listings[listingID] else { continue }
                if let cursor {
                    let time = savedAt.millisecondsSince1970
                    let after =
                        time < cursor.t || (time == cursor.t && listingID.utf8.lexicographicallyPrecedes(cursor.i.utf8))
                    guard after else { continue }
                }
                matches.append(SavedListing(listing: listing, savedAt: savedAt))
            }
            matches.sort { lhs, rhs in
                let (left, right) = (lhs.savedAt.millisecondsSince1970, rhs.savedAt.millisecondsSince1970)
                return left == right ? rhs.listing.id.utf8.lexicographicallyPrecedes(lhs.listing.id.utf8) : left > right
            }
            return Array(matches.prefix(page.size + 1))
        }
        return ListingsPaging.savedPage(fetched, size: page.size, userID: userID)
    }

    public func savers(listingID: String) async throws -> [String] {
        state.withReadLock { state in
            state.saved.compactMap { $0.value[listingID] == nil ? nil : $0.key }.sorted()
        }
    }

    // MARK: Change events

    public func changes(forUser userID: String, after sequence: Int64, limit: Int) async throws -> [ListingChangeEvent]
    {
        state.withReadLock { state in
            let saved = state.saved[userID] ?? [:]
            return Array(
                state.changes.lazy.filter { $0.sequence > sequence && saved[$0.listingID] != nil }.prefix(limit)
            )
        }
    }

    public func change(sequence: Int64) async throws -> ListingChangeEvent? {
        state.withReadLock { state in state.changes.first { $0.sequence == sequence } }
    }

    public func changes(since date: Date, limit: Int) async throws -> [ListingChangeEvent] {
        state.withReadLock { state in Array(state.changes.lazy.filter { $0.changedAt >= date }.prefix(max(limit, 0))) }
    }

    public func pruneChanges(before date: Date) async throws -> Int {
        let cutoff = date.millisecondsSince1970
        return state.withWriteLock { state in
            let before = state.changes.count
            state.changes.removeAll { $0.changedAt.millisecondsSince1970 < cutoff }
            return before - state.changes.count
        }
    }

    // MARK: Comments

    /// A comment's place in ``State/commentsByTime``.
    struct CommentKey: Sendable {
        var time: Int64
        var id: String

        static func precedes(_ a: CommentKey, _ b: CommentKey) -> Bool {
            a.time == b.time ? a.id.utf8.lexicographicallyPrecedes(b.id.utf8) : a.time < b.time
        }

        init(_ comment: ListingComment) {
            self.init(time: comment.createdAt.millisecondsSince1970, id: comment.id)
        }

        init(time: Int64, id: String) {
            self.time = time
            self.id = id
        }
    }

    public func addComment(_ comment: ListingComment) async throws -> AddedComment {
        try state.withWriteLock { (state) throws(DomainError) -> AddedComment in
            let ids = state.listingComments[comment.listingID] ?? []
            let listing = state.listings[comment.listingID]
            let (stored, notices) = try ListingLifecycle.addComment(
                comment,
                listing: listing,
                parent: comment.replyToID.flatMap { state.comments[$0] },
                commentCount: ids.count,
                latestCommentAt: ids.last.flatMap { state.comments[$0]?.createdAt },
                commentIDTaken: state.comments[comment.id] != nil
            )
            state.comments[stored.id] = stored
            state.listingComments[stored.listingID, default: []].append(stored.id)
            state.commentsByTime.insert(CommentKey(stored))
            guard let listing else { throw ListingsStoreError.listingNotFound }  // the lifecycle checked it
            return AddedComment(comment: stored, listing: listing, notices: notices)
        }
    }

    public func comment(id: String) async throws -> ListingComment? {
        state.withReadLock { $0.comments[id] }
    }

    public func comments(listingID: String, page: PageRequest) async throws -> Page<ListingComment> {
        let cursor = try ListingsPaging.commentCursor(page, listingID: listingID)
        return state.withReadLock { state in
            let ids = state.listingComments[listingID] ?? []
            // Oldest first by (date, id): find the first comment after the cursor by bisection.
            var low = 0
            var high = ids.count
            if let cursor {
                while low < high {
                    let middle = (low + high) / 2
                    if let comment = state.comments[ids[middle]], ListingsPaging.isAfter(comment, cursor) {
                        high = middle
                    } else {
                        low = middle + 1
                    }
                }
            }
            let fetched = ids[low..<min(low + page.size + 1, ids.count)].compactMap { state.comments[$0] }
            return ListingsPaging.commentPage(fetched, size: page.size, listingID: listingID)
        }
    }

    public func deleteComment(id: String, by userID: String) async throws -> [String] {
        try state.withWriteLock { (state) throws(DomainError) -> [String] in
            let found = state.comments[id]
            let comment = try ListingLifecycle.deleteComment(
                found,
                listing: found.flatMap { state.listings[$0.listingID] },
                by: userID
            )
            let ids = state.listingComments[comment.listingID] ?? []
            let deleted = [comment.id] + ids.filter { state.comments[$0]?.replyToID == comment.id }
            let gone = Set(deleted)
            state.listingComments[comment.listingID] = ids.filter { !gone.contains($0) }
            for deletedID in deleted {
                guard let removed = state.comments.removeValue(forKey: deletedID) else { continue }
                let key = CommentKey(removed)
                state.commentsByTime.remove(key) { $0.id == key.id }
            }
            return deleted
        }
    }

    public func comments(since date: Date, limit: Int) async throws -> [ListingComment] {
        guard limit > 0 else { return [] }
        return state.withReadLock { state in
            var found: [ListingComment] = []
            let start = state.commentsByTime.position(of: CommentKey(time: date.millisecondsSince1970, id: ""))
            state.commentsByTime.walk(from: start) { key in
                if let comment = state.comments[key.id] { found.append(comment) }
                return found.count < limit
            }
            return found
        }
    }
}
