public import Foundation
public import SkiffDomain

/// The rules of a lost or found item's life, as pure functions over values: every ``LostFoundStore``
/// backend loads what a function needs, calls it inside its transaction (or critical section) and saves
/// what it returns, so all backends decide alike.
///
/// Each function checks its rules in the order ``LostFoundStore`` documents and throws the values in
/// ``LostFoundStoreError``.
public enum LostFoundLifecycle {
    /// A decided change to an item.
    public struct Change: Hashable, Sendable {
        /// The item after the change (as loaded when nothing changes).
        public var item: LostFoundItem
        /// Whether the item changed: `false` means there is nothing to save.
        public var changed: Bool

        /// Creates a change.
        public init(item: LostFoundItem, changed: Bool) {
            self.item = item
            self.changed = changed
        }
    }

    /// Decides a new report and its matches.
    ///
    /// - Parameters:
    ///   - item: The item reported.
    ///   - itemIDTaken: Whether an item with the item's id exists.
    ///   - candidates: Stored items that may match: at least every one that ``isCandidate(_:for:)`` accepts
    ///     (a backend may pass more; the others are left out here).
    ///   - matcher: Scores the pairs.
    /// - Returns: The item to insert (dates rounded to milliseconds) and the matches to record with it.
    /// - Throws: `alreadyExists` (``LostFoundStoreError/itemIDTaken``) if the item id is taken.
    public static func report(
        _ item: LostFoundItem,
        itemIDTaken: Bool,
        candidates: [LostFoundItem],
        matcher: LostFoundMatcher
    ) throws(DomainError) -> LostFoundReport {
        try report(
            item,
            itemIDTaken: itemIDTaken,
            matches: matches(for: item, candidates: candidates, matcher: matcher)
        )
    }

    /// The matches of a new report among `candidates` (as ``report(_:itemIDTaken:candidates:matcher:)``
    /// records them): scoring, which needs no write, so a backend may run it before its transaction and
    /// pass the result to ``report(_:itemIDTaken:matches:)`` when the candidates have not changed since.
    public static func matches(
        for item: LostFoundItem,
        candidates: [LostFoundItem],
        matcher: LostFoundMatcher
    ) -> [LostFoundMatch] {
        let stored = item.rounded
        let eligible = candidates.filter { isCandidate($0, for: stored) }
        return matcher.matches(for: stored, among: eligible, at: stored.createdAt)
    }

    /// ``matches(for:candidates:matcher:)`` for candidates whose keyword counts a backend kept per item.
    package static func matches(
        for item: LostFoundItem,
        candidates: [LostFoundMatcher.Candidate],
        matcher: LostFoundMatcher
    ) -> [LostFoundMatch] {
        let stored = item.rounded
        let eligible = candidates.filter { isCandidate($0.item, for: stored) }
        return matcher.matches(for: stored, among: eligible, at: stored.createdAt)
    }

    /// Decides a new report whose matches were scored already (``matches(for:candidates:matcher:)``).
    ///
    /// - Throws: `alreadyExists` (``LostFoundStoreError/itemIDTaken``) if the item id is taken.
    public static func report(
        _ item: LostFoundItem,
        itemIDTaken: Bool,
        matches: [LostFoundMatch]
    ) throws(DomainError) -> LostFoundReport {
        guard !itemIDTaken else { throw LostFoundStoreError.itemIDTaken }
        return LostFoundReport(item: item.rounded, matches: matches)
    }

    /// Whether a stored item may match a new one: of the other kind, still open, in the same category and
    /// reported by someone else.
    public static func isCandidate(_ candidate: LostFoundItem, for item: LostFoundItem) -> Bool {
        candidate.kind == item.kind.opposite && candidate.status == candidate.kind.openStatus
            && candidate.category == item.category && candidate.reporterID != item.reporterID
    }

    /// Decides an update of an item's fields by `reporterID`.
    ///
    /// - Parameter item: The item as stored, or `nil` if there is none.
    /// - Returns: The updated item, or the item unchanged (same `updatedAt`) when the fields stay as they are.
    /// - Throws: `notFound`; `permissionDenied` if the reporter is someone else; `failedPrecondition` if the
    ///   item is returned.
    public static func update(
        _ item: LostFoundItem?,
        reporterID: String,
        changes: LostFoundItemChanges,
        now: Date
    ) throws(DomainError) -> Change {
        guard var item else { throw LostFoundStoreError.itemNotFound }
        guard item.reporterID == reporterID else { throw LostFoundStoreError.notReporter }
        guard item.isOpen else { throw LostFoundStoreError.returned }
        let fields = changes.applied(to: item.fields)
        guard fields != item.fields else { return Change(item: item, changed: false) }
        item.fields = fields
        item.updatedAt = now.roundedToMilliseconds
        return Change(item: item, changed: true)
    }

    /// Decides marking an item returned by `reporterID`; an item returned already stays as it is.
    ///
    /// - Parameter item: The item as stored, or `nil` if there is none.
    /// - Throws: `notFound`; `permissionDenied` if the reporter is someone else.
    public static func markReturned(_ item: LostFoundItem?, reporterID: String, now: Date) throws(DomainError) -> Change
    {
        guard var item else { throw LostFoundStoreError.itemNotFound }
        guard item.reporterID == reporterID else { throw LostFoundStoreError.notReporter }
        guard item.isOpen else { return Change(item: item, changed: false) }
        let now = now.roundedToMilliseconds
        item.status = .returned
        item.returnedAt = now
        item.updatedAt = now
        return Change(item: item, changed: true)
    }
}
