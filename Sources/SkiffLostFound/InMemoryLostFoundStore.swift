public import Foundation
public import SkiffDomain

/// A ``LostFoundStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one reader–writer lock (reads and searches run side by side; a write runs alone),
/// and every method runs in one critical section without suspending,
/// so each use case is atomic as a database transaction would be. Writes load what ``LostFoundLifecycle``
/// needs, let it decide and save what it returns. Search and matching use real indexes
/// kept in the same critical section (`LostFoundIndex`: keywords, grid cells, newest first; matches by
/// item), and `LostFoundSearchEngine` and ``LostFoundMatcher`` decide every result, as for SQLite.
public final class InMemoryLostFoundStore: LostFoundStore {
    private struct State {
        var index = LostFoundIndex()
        func item(_ id: String) -> LostFoundItem? { index[item: id] }
        /// Matches by (found item id, lost item id).
        var matches: [String: LostFoundMatch] = [:]
        /// The keys of `matches` by item id (found or lost).
        var matchKeys: [String: Set<String>] = [:]

        mutating func record(_ match: LostFoundMatch) {
            let key = match.foundItemID + "|" + match.lostItemID
            matches[key] = match
            matchKeys[match.foundItemID, default: []].insert(key)
            matchKeys[match.lostItemID, default: []].insert(key)
        }

        /// Counts every change to an item, so a report scored outside the lock knows whether its candidates
        /// are still current.
        private(set) var generation = 0
        /// The latest changes (at most ``changeLogLimit``), oldest first: each item before and after.
        private var recentChanges: [(old: LostFoundItem?, new: LostFoundItem)] = []
        static let changeLogLimit = 256

        /// Stores an item (new or changed).
        mutating func put(_ item: LostFoundItem) {
            recentChanges.append((index[item: item.id], item))
            if recentChanges.count > Self.changeLogLimit { recentChanges.removeFirst() }
            index.put(item)
            generation += 1
        }

        /// Whether the candidates `item` had at `since` (a ``generation``) are still its candidates: no
        /// change since then touched an item that could be one, before or after it (the latest changes are
        /// kept; after more of them, `false`).
        func candidatesUnchanged(since: Int, for item: LostFoundItem, matcher: LostFoundMatcher) -> Bool {
            let count = generation - since
            guard count <= recentChanges.count else { return false }
            guard count > 0 else { return true }
            let keywords = LostFoundMatcher.keywords(item.fields)
            let window = matcher.candidateWindowMilliseconds
            func mayBeCandidate(_ other: LostFoundItem?) -> Bool {
                guard let other, LostFoundLifecycle.isCandidate(other, for: item),
                    abs(other.occurredAt.millisecondsSince1970 - item.occurredAt.millisecondsSince1970) <= window
                else { return false }
                return !keywords.isDisjoint(with: LostFoundMatcher.keywords(other.fields))
            }
            return !recentChanges.suffix(count).contains { mayBeCandidate($0.old) || mayBeCandidate($0.new) }
        }

        /// The number of matches recorded for an item.
        func matchCount(of item: LostFoundItem) -> Int { matchKeys[item.id]?.count ?? 0 }
    }

    private let state = ReadWriteLock(State())

    /// Creates an empty store.
    public init() {}

    /// Reads the candidates under the shared lock and scores them outside it; the exclusive lock then only
    /// records the report, with those matches unless an item that could be one of its candidates changed
    /// meanwhile (then it scores again), as the SQLite store does. So searches and other reads do not wait
    /// behind a report's scoring.
    public func reportItem(_ item: LostFoundItem, matcher: LostFoundMatcher) async throws -> LostFoundReport {
        try await reportItem(item, matcher: matcher, betweenReadAndWrite: {})
    }

    /// ``reportItem(_:matcher:)`` with `betweenReadAndWrite` run after the scoring under the shared lock (tests
    /// change items there).
    package func reportItem(
        _ item: LostFoundItem,
        matcher: LostFoundMatcher,
        betweenReadAndWrite: () async throws -> Void
    ) async throws -> LostFoundReport {
        let (generation, candidates) = state.withReadLock { state in
            (state.generation, state.index.matchCandidates(for: item.rounded, matcher: matcher))
        }
        let scored = LostFoundLifecycle.matches(for: item, candidates: candidates, matcher: matcher)
        try await betweenReadAndWrite()
        return try state.withWriteLock { (state) throws(DomainError) -> LostFoundReport in
            let matches =
                state.candidatesUnchanged(since: generation, for: item.rounded, matcher: matcher)
                ? scored
                : LostFoundLifecycle.matches(
                    for: item,
                    candidates: state.index.matchCandidates(for: item.rounded, matcher: matcher),
                    matcher: matcher
                )
            let report = try LostFoundLifecycle.report(item, itemIDTaken: state.item(item.id) != nil, matches: matches)
            state.put(report.item)
            for match in report.matches { state.record(match) }
            return report
        }
    }

    public func matches(recordedSince date: Date, limit: Int) async throws -> [LostFoundMatch] {
        state.withReadLock { state in
            let recent = state.matches.values.filter { $0.matchedAt >= date }
            let sorted = recent.sorted {
                ($0.matchedAt, $0.foundItemID, $0.lostItemID) < ($1.matchedAt, $1.foundItemID, $1.lostItemID)
            }
            return Array(sorted.prefix(max(limit, 0)))
        }
    }

    public func item(id: String) async throws -> LostFoundItem? {
        state.withReadLock { $0.item(id) }
    }

    public func updateItem(
        id: String,
        reporterID: String,
        changes: LostFoundItemChanges,
        now: Date
    ) async throws -> LostFoundItem {
        try state.withWriteLock { (state) throws(DomainError) -> LostFoundItem in
            let change = try LostFoundLifecycle.update(
                state.item(id),
                reporterID: reporterID,
                changes: changes,
                now: now
            )
            if change.changed { state.put(change.item) }
            return change.item
        }
    }

    public func markReturned(id: String, reporterID: String, now: Date) async throws -> LostFoundItem {
        try state.withWriteLock { (state) throws(DomainError) -> LostFoundItem in
            let change = try LostFoundLifecycle.markReturned(state.item(id), reporterID: reporterID, now: now)
            if change.changed { state.put(change.item) }
            return change.item
        }
    }

    public func search(_ query: LostFoundQuery, page: PageRequest) async throws -> Page<LostFoundSearchHit> {
        let compiled = try CompiledLostFoundQuery(query, page: page)
        return state.withReadLock { $0.index.search(compiled, size: page.size) }
    }

    public func items(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        page: PageRequest
    ) async throws -> Page<LostFoundOwnItem> {
        let cursor = try LostFoundSearchEngine.ownItemsCursor(page, reporterID: reporterID, statuses: statuses)
        let fetched = state.withReadLock { state in
            state.index.items(
                reporterID: reporterID,
                statuses: statuses,
                after: cursor.map { ($0.t, $0.i) },
                limit: page.size + 1
            ).map { LostFoundOwnItem(item: $0, matchCount: state.matchCount(of: $0)) }
        }
        return LostFoundSearchEngine.ownItemsPage(fetched, size: page.size, reporterID: reporterID, statuses: statuses)
    }

    public func matches(itemID: String, page: PageRequest) async throws -> Page<LostFoundMatchHit> {
        let cursor = try LostFoundSearchEngine.matchCursor(page, itemID: itemID)
        let hits = try state.withReadLock { (state) throws(DomainError) -> [LostFoundMatchHit] in
            guard let item = state.item(itemID) else { throw LostFoundStoreError.itemNotFound }
            return (state.matchKeys[itemID] ?? []).compactMap { key -> LostFoundMatchHit? in
                guard let match = state.matches[key] else { return nil }
                let candidateID: String
                switch item.kind {
                case .found:
                    guard match.foundItemID == itemID else { return nil }
                    candidateID = match.lostItemID
                case .lost:
                    guard match.lostItemID == itemID else { return nil }
                    candidateID = match.foundItemID
                }
                guard let candidate = state.item(candidateID) else { return nil }
                return LostFoundMatchHit(
                    candidate: candidate,
                    score: match.score,
                    distanceKm: match.distanceKm,
                    matchedAt: match.matchedAt
                )
            }
        }
        return LostFoundSearchEngine.matchesPage(hits, itemID: itemID, cursor: cursor, size: page.size)
    }
}
