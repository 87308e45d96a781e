public import Foundation
public import SkiffDomain

extension BucketListLifecycle {
    // MARK: Bucket lists

    /// Decides a new bucket list.
    ///
    /// - Parameters:
    ///   - ownedNameKeys: The ``BucketListFields/nameKey`` of each list the owner has, one per list.
    ///   - limit: The most lists an owner may have.
    ///   - listIDTaken: Whether a list with the list's id exists.
    /// - Returns: The list to insert: dates rounded to milliseconds, no entries.
    /// - Throws: `alreadyExists` (``BucketListStoreError/listNameTaken``) if the owner has a list with the
    ///   same name (case-insensitively), then `resourceExhausted` if the owner already has `limit` lists;
    ///   `alreadyExists` (``BucketListStoreError/listIDTaken``) if the id is taken.
    public static func createList(
        _ list: BucketList,
        ownedNameKeys: [String],
        limit: Int,
        listIDTaken: Bool
    ) throws(DomainError) -> BucketList {
        guard !ownedNameKeys.contains(list.fields.nameKey) else { throw BucketListStoreError.listNameTaken }
        guard ownedNameKeys.count < limit else { throw BucketListStoreError.listLimit }
        guard !listIDTaken else { throw BucketListStoreError.listIDTaken }
        var stored = list
        stored.createdAt = list.createdAt.roundedToMilliseconds
        stored.updatedAt = list.updatedAt.roundedToMilliseconds
        stored.pendingCount = 0
        stored.completedCount = 0
        return stored
    }

    /// Decides a change to a bucket list by `ownerID`.
    ///
    /// - Parameters:
    ///   - list: The list as stored (with its counts), or `nil` if there is none.
    ///   - otherNameKeys: The ``BucketListFields/nameKey`` of each of `ownerID`'s other lists.
    /// - Returns: The changed list, or the list unchanged when its fields stay as they are.
    /// - Throws: `notFound` / `permissionDenied` (see ``ownedList(_:ownerID:)``); `alreadyExists`
    ///   (``BucketListStoreError/listNameTaken``) if the new name is taken by another of the owner's lists.
    public static func updateList(
        _ list: BucketList?,
        ownerID: String,
        changes: BucketListChanges,
        otherNameKeys: [String],
        now: Date
    ) throws(DomainError) -> Change<BucketList> {
        var list = try ownedList(list, ownerID: ownerID)
        let fields = changes.applied(to: list.fields)
        guard fields != list.fields else { return Change(list, changed: false) }
        guard !otherNameKeys.contains(fields.nameKey) else { throw BucketListStoreError.listNameTaken }
        list.fields = fields
        list.updatedAt = now.roundedToMilliseconds
        return Change(list, changed: true)
    }

    /// Checks that `ownerID` may change `list` (delete it, or change its entries).
    ///
    /// - Parameter list: The list as stored, or `nil` if there is none.
    /// - Returns: The list.
    /// - Throws: `notFound` (``BucketListStoreError/listNotFound``) if there is none; for a caller who is
    ///   not the owner, `notFound` if the list is private (its existence is not revealed) and
    ///   `permissionDenied` if it is public.
    public static func ownedList(_ list: BucketList?, ownerID: String) throws(DomainError) -> BucketList {
        guard let list else { throw BucketListStoreError.listNotFound }
        guard list.ownerID == ownerID else { throw BucketListStoreError.notOwner(of: list) }
        return list
    }

    // MARK: Entries

    /// Decides adding an activity, pending, to a list of `ownerID`.
    ///
    /// - Parameters:
    ///   - list: The list as stored, or `nil` if there is none.
    ///   - activity: The activity as stored, or `nil` if there is none.
    ///   - entryExists: Whether the activity is in the list.
    ///   - entryCount: How many activities the list holds.
    ///   - limit: The most activities a list may hold.
    /// - Returns: The entry to insert, added now (rounded to milliseconds).
    /// - Throws: `notFound` / `permissionDenied` for the list (see ``ownedList(_:ownerID:)``); `notFound`
    ///   for an unknown activity; `alreadyExists` if it is in the list; `resourceExhausted` if the list
    ///   holds `limit` entries.
    public static func addEntry(
        list: BucketList?,
        ownerID: String,
        activity: Activity?,
        entryExists: Bool,
        entryCount: Int,
        limit: Int,
        now: Date
    ) throws(DomainError) -> BucketListEntry {
        let list = try ownedList(list, ownerID: ownerID)
        guard let activity else { throw BucketListStoreError.activityNotFound }
        guard !entryExists else { throw BucketListStoreError.entryExists }
        guard entryCount < limit else { throw BucketListStoreError.entryLimit }
        return BucketListEntry(listID: list.id, activity: activity, addedAt: now.roundedToMilliseconds)
    }

    /// Decides removing an activity from a list of `ownerID`.
    ///
    /// - Parameters:
    ///   - list: The list as stored, or `nil` if there is none.
    ///   - entryExists: Whether the activity is in the list.
    /// - Throws: `notFound` / `permissionDenied` for the list; `notFound` if the activity is not in it.
    public static func removeEntry(list: BucketList?, ownerID: String, entryExists: Bool) throws(DomainError) {
        _ = try ownedList(list, ownerID: ownerID)
        guard entryExists else { throw BucketListStoreError.entryNotFound }
    }

    /// Decides marking an entry completed (replacing an earlier completion) or, with `nil`, pending.
    ///
    /// - Parameters:
    ///   - list: The list as stored, or `nil` if there is none.
    ///   - entry: The entry as stored (with its activity), or `nil` if the activity is not in the list.
    /// - Returns: The entry with its new completion (date rounded to milliseconds), to save.
    /// - Throws: `notFound` / `permissionDenied` for the list; `notFound` if the activity is not in it.
    public static func setCompletion(
        list: BucketList?,
        ownerID: String,
        entry: BucketListEntry?,
        completion: Completion?
    ) throws(DomainError) -> BucketListEntry {
        _ = try ownedList(list, ownerID: ownerID)
        guard var entry else { throw BucketListStoreError.entryNotFound }
        entry.completion = completion.map {
            Completion(completedAt: $0.completedAt.roundedToMilliseconds, note: $0.note)
        }
        return entry
    }
}
