public import Foundation
public import SkiffDomain

/// Persistence for the LostFound service: one method per use case, each atomic.
///
/// Every backend (``InMemoryLostFoundStore``, the SQLite store, the PostgreSQL store) must behave exactly alike,
/// search and matching included; the shared conformance suite in `Tests/SkiffStorageTests` proves it.
///
/// ## Implementation requirements
/// - Each method is one atomic step (one transaction); concurrent calls behave as if they ran one after
///   another.
/// - Failures are thrown as ``SkiffDomain/DomainError`` with the values in ``LostFoundStoreError``, checked in
///   the order documented here; no backend type crosses this protocol.
/// - Dates are kept at millisecond precision; values read back are rounded.
/// - Inputs are validated by ``LostFoundRules``. Existence, ownership and state, and which stored items a
///   new one is scored against, are decided by ``LostFoundLifecycle``: each write loads what its function
///   needs, calls it inside the transaction and saves what it returns, so a backend only stores and queries.
/// - Search has one definition, `LostFoundSearchEngine` (matching, distances, order, cursors), and matching
///   one, ``LostFoundMatcher``; each backend answers from its own indexes (SQLite: one statement with the
///   order, cursor and limit inside the engine; in memory: `LostFoundIndex`) and checks each result with
///   the shared code, so results are identical everywhere and cost what the page and the index entries
///   touched cost, not the table.
public protocol LostFoundStore: Sendable {
    /// Stores a new item and, in the same transaction, scores it against the open items of the other kind
    /// and records the matches `matcher` accepts.
    ///
    /// - Throws: `alreadyExists` if the item id is taken.
    func reportItem(_ item: LostFoundItem, matcher: LostFoundMatcher) async throws -> LostFoundReport

    /// The item with this id, in any status, or `nil`.
    func item(id: String) async throws -> LostFoundItem?

    /// Applies changes to an open item of `reporterID`. Returns the item unchanged (same `updatedAt`) when
    /// nothing changes.
    ///
    /// - Throws: `notFound`; `permissionDenied` if the reporter is someone else; `failedPrecondition` if
    ///   the item is returned.
    func updateItem(
        id: String,
        reporterID: String,
        changes: LostFoundItemChanges,
        now: Date
    ) async throws
        -> LostFoundItem

    /// Marks an item of `reporterID` returned; marking a returned item again returns it unchanged.
    ///
    /// - Throws: `notFound`; `permissionDenied` if the reporter is someone else.
    func markReturned(id: String, reporterID: String, now: Date) async throws -> LostFoundItem

    /// Searches items: see ``LostFoundQuery``. Keyset paging; at most `page.size` results.
    ///
    /// - Throws: `invalidArgument` for a page token that is malformed or belongs to another query.
    func search(_ query: LostFoundQuery, page: PageRequest) async throws -> Page<LostFoundSearchHit>

    /// The recorded matches of an item (whatever the reporter), best score first, then most recently
    /// recorded, then candidate id descending.
    ///
    /// - Throws: `notFound` if the item does not exist; `invalidArgument` for a bad page token.
    func matches(itemID: String, page: PageRequest) async throws -> Page<LostFoundMatchHit>

    /// The items `reporterID` reported whose status is in `statuses` (all statuses when it is empty), newest
    /// report first (`createdAt` descending, then id descending), each with its number of recorded matches.
    /// Keyset paging; a page walks only the reporter's own items.
    ///
    /// - Throws: `invalidArgument` for a page token that is malformed or belongs to another reporter or
    ///   other statuses.
    func items(
        reporterID: String,
        statuses: Set<LostFoundStatus>,
        page: PageRequest
    ) async throws
        -> Page<LostFoundOwnItem>

    /// Matches recorded at or after `date`, oldest first (then by found and lost item id), at most
    /// `limit`: what the feed relay publishes again after a crash between a report and its
    /// notifications.
    func matches(recordedSince date: Date, limit: Int) async throws -> [LostFoundMatch]
}

/// The errors every ``LostFoundStore`` throws, so that all backends use the same codes and messages.
public enum LostFoundStoreError {
    public static let itemNotFound = DomainError(.notFound, "The item does not exist.")
    public static let notReporter = DomainError(.permissionDenied, "Only the item's reporter can do this.")
    public static let returned = DomainError(
        .failedPrecondition,
        "The item was returned to its owner, so it can no longer be changed."
    )
    public static let itemIDTaken = DomainError(.alreadyExists, "An item with this id already exists.")
}
