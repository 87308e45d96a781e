import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

extension BucketListStoreConformanceTests {
    @Test(
        "Create lists: names unique per owner case-insensitively, then the per-user limit",
        arguments: StoreKind.allCases
    )
    func createLists(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let summer = try await store.createList(F.list("Summer", at: 0.000_6), limit: 3)
            #expect(summer.createdAt == F.ms(1))
            #expect((summer.pendingCount, summer.completedCount) == (0, 0))
            #expect(try await store.list(id: summer.id) == summer)
            #expect(try await store.list(id: "bkl_missing") == nil)
            await #expect(throws: BucketListStoreError.listNameTaken) {
                _ = try await store.createList(F.list("SUMMER"), limit: 3)
            }
            // Another owner may use the name.
            _ = try await store.createList(F.list("Summer", owner: F.other), limit: 3)
            await #expect(throws: BucketListStoreError.listIDTaken) {
                _ = try await store.createList(F.list("Winter", id: summer.id), limit: 3)
            }
            _ = try await store.createList(F.list("Winter"), limit: 3)
            _ = try await store.createList(F.list("Spring"), limit: 3)
            // The name check comes before the limit.
            await #expect(throws: BucketListStoreError.listNameTaken) {
                _ = try await store.createList(F.list("spring"), limit: 3)
            }
            await #expect(throws: BucketListStoreError.listLimit) {
                _ = try await store.createList(F.list("Autumn"), limit: 3)
            }
        }
    }

    @Test(
        "Entries come back in the order they were added: same instant, clock going back, removed and re-added",
        arguments: StoreKind.allCases
    )
    func entriesInOrderAdded(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let list = try await store.createList(F.list("Order"), limit: 3)
            // Ids that sort the other way round from the order of adding.
            var ids: [String] = []
            for index in 0..<6 {
                let id = "act_\(9 - index)"
                ids.append(try await store.createActivity(F.activity("A\(index)", id: id)).id)
            }
            func add(_ id: String, at seconds: Double) async throws {
                _ = try await store.addEntry(
                    listID: list.id,
                    ownerID: F.owner,
                    activityID: id,
                    now: F.at(seconds),
                    limit: 10
                )
            }
            for id in ids.prefix(4) { try await add(id, at: 5) }  // all in the same millisecond
            try await add(ids[4], at: 1)  // the clock went back
            try await store.removeEntry(listID: list.id, ownerID: F.owner, activityID: ids[1])
            try await add(ids[5], at: 5)
            try await add(ids[1], at: 5)  // added again: now the last
            let expected = [ids[0], ids[2], ids[3], ids[4], ids[5], ids[1]]
            for size in [1, 2, 4, 100] {
                let listed = try await store.all(pageSize: size) { try await store.entries(listID: list.id, page: $0) }
                #expect(listed.map(\.activity.id) == expected, "page size \(size)")
            }
        }
    }

    @Test("Update and delete lists: owner only; private lists are NOT_FOUND to others", arguments: StoreKind.allCases)
    func updateAndDeleteLists(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let open = try await store.createList(F.list("Open"), limit: 50)
            let secret = try await store.createList(F.list("Secret", visibility: .private), limit: 50)
            let rename = BucketListChanges(name: "Opened")
            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.updateList(id: "bkl_missing", ownerID: F.owner, changes: rename, now: F.t0)
            }
            await #expect(throws: BucketListStoreError.notListOwner) {
                _ = try await store.updateList(id: open.id, ownerID: F.other, changes: rename, now: F.t0)
            }
            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.updateList(id: secret.id, ownerID: F.other, changes: rename, now: F.t0)
            }
            await #expect(throws: BucketListStoreError.listNameTaken) {
                _ = try await store.updateList(id: open.id, ownerID: F.owner, changes: .init(name: "secret"), now: F.t0)
            }
            // Changing only the case of its own name is fine.
            let recased = try await store.updateList(
                id: open.id,
                ownerID: F.owner,
                changes: .init(name: "OPEN"),
                now: F.at(1)
            )
            #expect(recased.fields.name == "OPEN")
            let changed = try await store.updateList(
                id: open.id,
                ownerID: F.owner,
                changes: BucketListChanges(name: "Opened", description: "New", visibility: .private),
                now: F.at(2)
            )
            #expect(changed.fields == BucketListFields(name: "Opened", description: "New", visibility: .private))
            #expect(changed.updatedAt == F.at(2))
            #expect(try await store.list(id: open.id) == changed)

            await #expect(throws: BucketListStoreError.listNotFound) {
                try await store.deleteList(id: secret.id, ownerID: F.other)
            }
            try await store.deleteList(id: secret.id, ownerID: F.owner)
            #expect(try await store.list(id: secret.id) == nil)
            await #expect(throws: BucketListStoreError.listNotFound) {
                try await store.deleteList(id: secret.id, ownerID: F.owner)
            }
            // The name is free again.
            _ = try await store.createList(F.list("Secret"), limit: 50)
        }
    }

    @Test("A user's lists: oldest first, paged; private ones only when asked", arguments: StoreKind.allCases)
    func listsOfUser(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            var all: [BucketList] = []
            for index in 0..<7 {
                let visibility: Visibility = index % 3 == 0 ? .private : .public
                all.append(
                    try await store.createList(
                        F.list("L\(index)", visibility: visibility, at: Double(7 - index)),
                        limit: 50
                    )
                )
            }
            _ = try await store.createList(F.list("Theirs", owner: F.other), limit: 50)
            let expected = all.sorted { $0.createdAt < $1.createdAt }
            let mine = try await store.all(pageSize: 2) {
                try await store.lists(ownerID: F.owner, includePrivate: true, page: $0)
            }
            #expect(mine == expected)
            let visible = try await store.all(pageSize: 2) {
                try await store.lists(ownerID: F.owner, includePrivate: false, page: $0)
            }
            #expect(visible == expected.filter(\.isPublic))
            // A token of the full list is not valid for the public one.
            let page = try await store.lists(ownerID: F.owner, includePrivate: true, page: PageRequest(size: 1))
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.lists(
                    ownerID: F.owner,
                    includePrivate: false,
                    page: PageRequest(size: 1, token: page.nextPageToken)
                )
            }
        }
    }

    @Test(
        "Entries: add once, limit, complete with date and note, un-complete, remove; counts",
        arguments: StoreKind.allCases
    )
    func entries(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let list = try await store.createList(F.list("Summer"), limit: 50)
            let secret = try await store.createList(F.list("Secret", visibility: .private), limit: 50)
            var activities: [Activity] = []
            for index in 0..<4 {
                activities.append(try await store.createActivity(F.activity("A\(index)", owner: F.other)))
            }
            let a = activities[0]

            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.addEntry(
                    listID: "bkl_missing",
                    ownerID: F.owner,
                    activityID: a.id,
                    now: F.t0,
                    limit: 3
                )
            }
            await #expect(throws: BucketListStoreError.notListOwner) {
                _ = try await store.addEntry(listID: list.id, ownerID: F.other, activityID: a.id, now: F.t0, limit: 3)
            }
            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.addEntry(listID: secret.id, ownerID: F.other, activityID: a.id, now: F.t0, limit: 3)
            }
            await #expect(throws: BucketListStoreError.activityNotFound) {
                _ = try await store.addEntry(
                    listID: list.id,
                    ownerID: F.owner,
                    activityID: "act_missing",
                    now: F.t0,
                    limit: 3
                )
            }
            let added = try await store.addEntry(
                listID: list.id,
                ownerID: F.owner,
                activityID: a.id,
                now: F.at(0.000_7),
                limit: 3
            )
            #expect(added == BucketListEntry(listID: list.id, activity: a, addedAt: F.ms(1)))
            await #expect(throws: BucketListStoreError.entryExists) {
                _ = try await store.addEntry(listID: list.id, ownerID: F.owner, activityID: a.id, now: F.t0, limit: 3)
            }
            _ = try await store.addEntry(
                listID: list.id,
                ownerID: F.owner,
                activityID: activities[1].id,
                now: F.at(1),
                limit: 3
            )
            _ = try await store.addEntry(
                listID: list.id,
                ownerID: F.owner,
                activityID: activities[2].id,
                now: F.at(1),
                limit: 3
            )
            await #expect(throws: BucketListStoreError.entryLimit) {
                _ = try await store.addEntry(
                    listID: list.id,
                    ownerID: F.owner,
                    activityID: activities[3].id,
                    now: F.t0,
                    limit: 3
                )
            }

            let completion = Completion(completedAt: F.at(-86_400.000_3), note: "Loved it")
            await #expect(throws: BucketListStoreError.entryNotFound) {
                _ = try await store.setCompletion(
                    listID: list.id,
                    ownerID: F.owner,
                    activityID: activities[3].id,
                    completion: completion
                )
            }
            await #expect(throws: BucketListStoreError.notListOwner) {
                _ = try await store.setCompletion(
                    listID: list.id,
                    ownerID: F.other,
                    activityID: a.id,
                    completion: completion
                )
            }
            let done = try await store.setCompletion(
                listID: list.id,
                ownerID: F.owner,
                activityID: a.id,
                completion: completion
            )
            #expect(done.completion == Completion(completedAt: F.ms(-86_400_000), note: "Loved it"))
            let redone = try await store.setCompletion(
                listID: list.id,
                ownerID: F.owner,
                activityID: a.id,
                completion: Completion(completedAt: F.t0)
            )
            #expect(redone.completion == Completion(completedAt: F.t0, note: ""))
            _ = try await store.setCompletion(
                listID: list.id,
                ownerID: F.owner,
                activityID: activities[1].id,
                completion: Completion(completedAt: F.t0, note: "x")
            )
            var counted = try #require(try await store.list(id: list.id))
            #expect((counted.pendingCount, counted.completedCount) == (1, 2))

            let undone = try await store.setCompletion(
                listID: list.id,
                ownerID: F.owner,
                activityID: activities[1].id,
                completion: nil
            )
            #expect(undone.completion == nil)
            counted = try #require(try await store.list(id: list.id))
            #expect((counted.pendingCount, counted.completedCount) == (2, 1))

            let listed = try await store.all(pageSize: 2) { try await store.entries(listID: list.id, page: $0) }
            // In the order they were added, also the two added in the same second.
            #expect(listed.map(\.activity.id) == [a.id, activities[1].id, activities[2].id])
            #expect(listed.first?.completion == Completion(completedAt: F.t0, note: ""))
            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.entries(listID: "bkl_missing", page: .first)
            }

            await #expect(throws: BucketListStoreError.notListOwner) {
                try await store.removeEntry(listID: list.id, ownerID: F.other, activityID: a.id)
            }
            try await store.removeEntry(listID: list.id, ownerID: F.owner, activityID: a.id)
            await #expect(throws: BucketListStoreError.entryNotFound) {
                try await store.removeEntry(listID: list.id, ownerID: F.owner, activityID: a.id)
            }
            counted = try #require(try await store.list(id: list.id))
            #expect((counted.pendingCount, counted.completedCount) == (2, 0))
            // Entries show the activity as it is now (votes included).
            _ = try await store.setVote(activityID: activities[2].id, userID: F.owner, vote: .up, now: F.t0)
            let now = try await store.entries(listID: list.id, page: .first).items
            #expect(now.first { $0.activity.id == activities[2].id }?.activity.upVotes == 1)
            // Deleting the list deletes its entries; the activities stay.
            try await store.deleteList(id: list.id, ownerID: F.owner)
            #expect(try await store.activity(id: activities[2].id) != nil)
            await #expect(throws: BucketListStoreError.listNotFound) {
                _ = try await store.entries(listID: list.id, page: .first)
            }
        }
    }

    @Test("50 concurrent adds to a list with room for 10: exactly 10 entries", arguments: StoreKind.allCases)
    func concurrentAdds(kind: StoreKind) async throws {
        try await withBucketListStore(kind) { store in
            let list = try await store.createList(F.list("Busy"), limit: 50)
            var ids: [String] = []
            for index in 0..<50 { ids.append(try await store.createActivity(F.activity("A\(index)")).id) }
            let all = ids
            let outcome = await raceBucketList(50) { index in
                try await store.addEntry(
                    listID: list.id,
                    ownerID: F.owner,
                    activityID: all[index],
                    now: F.t0,
                    limit: 10
                )
            }
            #expect(outcome.successes.count == 10)
            #expect(outcome.errors.count == 40)
            #expect(outcome.errors.allSatisfy { $0 == BucketListStoreError.entryLimit })
            #expect(try await store.list(id: list.id)?.pendingCount == 10)
        }
    }
}
