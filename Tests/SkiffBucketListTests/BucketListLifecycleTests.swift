import Foundation
import SkiffBucketList
import SkiffDomain
import Testing

@Suite("BucketList lifecycle")
struct BucketListLifecycleTests {
    static let created = Date(millisecondsSince1970: 1_767_225_600_000)
    /// A time with sub-millisecond digits, to see the decisions round it.
    static let now = Date(timeIntervalSince1970: 1_767_229_200.123_456)

    static func activity(upVotes: Int = 0, downVotes: Int = 0) -> Activity {
        Activity(
            id: "act_1",
            ownerID: "owner",
            fields: ActivityFields(
                title: "Sunrise hike",
                place: Place(name: "Radnor Lake", point: Coordinate(latitude: 36.1, longitude: -86.8))
            ),
            upVotes: upVotes,
            downVotes: downVotes,
            createdAt: created
        )
    }

    static func list(visibility: Visibility = .public, name: String = "Summer") -> BucketList {
        BucketList(
            id: "bkl_1",
            ownerID: "owner",
            fields: BucketListFields(name: name, visibility: visibility),
            pendingCount: 2,
            completedCount: 1,
            createdAt: created
        )
    }

    // MARK: Activities

    @Test("A new activity is stored rounded without counts, unless its id is taken")
    func createActivity() throws {
        var asked = Activity(
            id: "act_1",
            ownerID: "owner",
            fields: Self.activity().fields,
            upVotes: 3,
            downVotes: 2,
            commentCount: 1,
            createdAt: Self.now
        )
        asked.fields.startsAt = Self.now
        let stored = try BucketListLifecycle.createActivity(asked, activityIDTaken: false)
        #expect(stored.upVotes == 0 && stored.downVotes == 0 && stored.commentCount == 0)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(stored.fields.startsAt == Self.now.roundedToMilliseconds)
        #expect(throws: BucketListStoreError.activityIDTaken) {
            try BucketListLifecycle.createActivity(asked, activityIDTaken: true)
        }
    }

    @Test("An activity update applies changes, or keeps the activity when nothing changes")
    func updateActivity() throws {
        var changes = ActivityChanges()
        changes.title = "Sunset hike"
        let change = try BucketListLifecycle.updateActivity(
            Self.activity(),
            ownerID: "owner",
            changes: changes,
            now: Self.now
        )
        #expect(change.changed)
        #expect(change.value.fields.title == "Sunset hike")
        #expect(change.value.updatedAt == Self.now.roundedToMilliseconds)
        changes.title = "Sunrise hike"
        let same = try BucketListLifecycle.updateActivity(
            Self.activity(),
            ownerID: "owner",
            changes: changes,
            now: Self.now
        )
        #expect(same == BucketListLifecycle.Change(Self.activity(), changed: false))
    }

    @Test("Changing or deleting an activity checks existence, then owner")
    func activityOwnership() {
        #expect(throws: BucketListStoreError.activityNotFound) {
            try BucketListLifecycle.updateActivity(nil, ownerID: "owner", changes: ActivityChanges(), now: Self.now)
        }
        #expect(throws: BucketListStoreError.notActivityOwner) {
            try BucketListLifecycle.updateActivity(
                Self.activity(),
                ownerID: "other",
                changes: ActivityChanges(),
                now: Self.now
            )
        }
        #expect(throws: BucketListStoreError.activityNotFound) {
            try BucketListLifecycle.deleteActivity(nil, ownerID: "owner")
        }
        #expect(throws: BucketListStoreError.notActivityOwner) {
            try BucketListLifecycle.deleteActivity(Self.activity(), ownerID: "other")
        }
        #expect(throws: Never.self) { try BucketListLifecycle.deleteActivity(Self.activity(), ownerID: "owner") }
    }

    // MARK: Votes

    struct VoteCase: Sendable {
        var previous: Vote
        var vote: Vote
        var up: Int
        var down: Int
        var write: BucketListLifecycle.VoteWrite
    }

    @Test(
        "A vote moves the counts and writes the vote row",
        arguments: [
            VoteCase(
                previous: .noVote,
                vote: .up,
                up: 2,
                down: 1,
                write: .cast(.up, castAt: Self.now.roundedToMilliseconds)
            ),
            VoteCase(
                previous: .up,
                vote: .down,
                up: 0,
                down: 2,
                write: .cast(.down, castAt: Self.now.roundedToMilliseconds)
            ),
            VoteCase(previous: .down, vote: .noVote, up: 1, down: 0, write: .clear),
            VoteCase(previous: .up, vote: .noVote, up: 0, down: 1, write: .clear),
        ]
    )
    func vote(_ test: VoteCase) throws {
        let change = try BucketListLifecycle.setVote(
            Self.activity(upVotes: 1, downVotes: 1),
            previous: test.previous,
            vote: test.vote,
            now: Self.now
        )
        #expect(change.activity.upVotes == test.up)
        #expect(change.activity.downVotes == test.down)
        #expect(change.write == test.write)
    }

    @Test("The same vote again changes nothing (it keeps its cast time)", arguments: Vote.allCases)
    func sameVote(vote: Vote) throws {
        let change = try BucketListLifecycle.setVote(
            Self.activity(upVotes: 1, downVotes: 1),
            previous: vote,
            vote: vote,
            now: Self.now
        )
        #expect(change == BucketListLifecycle.VoteChange(activity: Self.activity(upVotes: 1, downVotes: 1), write: nil))
    }

    @Test("A vote on an unknown activity is refused")
    func voteNotFound() {
        #expect(throws: BucketListStoreError.activityNotFound) {
            try BucketListLifecycle.setVote(nil, previous: .noVote, vote: .up, now: Self.now)
        }
    }

    // MARK: Comments

    @Test("A comment is stored rounded; its activity must exist, then its id be free")
    func addComment() throws {
        let comment = Comment(id: "cmt_1", activityID: "act_1", authorID: "author", text: "Nice", createdAt: Self.now)
        let stored = try BucketListLifecycle.addComment(comment, activityExists: true, commentIDTaken: false)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(stored.text == "Nice")
        #expect(throws: BucketListStoreError.activityNotFound) {
            try BucketListLifecycle.addComment(comment, activityExists: false, commentIDTaken: true)
        }
        #expect(throws: BucketListStoreError.commentIDTaken) {
            try BucketListLifecycle.addComment(comment, activityExists: true, commentIDTaken: true)
        }
    }

    @Test("A comment posted in the millisecond of the activity's latest one (or before it) comes a millisecond after")
    func commentsKeepPostingOrder() throws {
        let now = Self.now.roundedToMilliseconds
        let comment = Comment(id: "cmt_2", activityID: "act_1", authorID: "author", text: "Me too", createdAt: now)
        let same = try BucketListLifecycle.addComment(
            comment,
            activityExists: true,
            commentIDTaken: false,
            latestCommentAt: now
        )
        #expect(same.createdAt == now.addingTimeInterval(0.001).roundedToMilliseconds)
        let behind = try BucketListLifecycle.addComment(
            comment,
            activityExists: true,
            commentIDTaken: false,
            latestCommentAt: now.addingTimeInterval(0.005)
        )
        #expect(behind.createdAt == now.addingTimeInterval(0.006).roundedToMilliseconds)
        let later = try BucketListLifecycle.addComment(
            comment,
            activityExists: true,
            commentIDTaken: false,
            latestCommentAt: now.addingTimeInterval(-1)
        )
        #expect(later.createdAt == now)
    }

    @Test("A comment is deleted by its author or the activity's poster only")
    func deleteComment() {
        let comment = Comment(id: "cmt_1", activityID: "act_1", authorID: "author", text: "Nice", createdAt: Self.now)
        #expect(throws: Never.self) {
            try BucketListLifecycle.deleteComment(comment, activityOwnerID: "owner", by: "author")
            try BucketListLifecycle.deleteComment(comment, activityOwnerID: "owner", by: "owner")
        }
        #expect(throws: BucketListStoreError.notCommentAuthor) {
            try BucketListLifecycle.deleteComment(comment, activityOwnerID: "owner", by: "someone")
        }
        #expect(throws: BucketListStoreError.notCommentAuthor) {
            try BucketListLifecycle.deleteComment(comment, activityOwnerID: nil, by: "someone")
        }
        #expect(throws: BucketListStoreError.commentNotFound) {
            try BucketListLifecycle.deleteComment(nil, activityOwnerID: nil, by: "author")
        }
    }

    // MARK: Follows

    @Test("A follow is new now, or keeps its first time")
    func follow() {
        let new = BucketListLifecycle.follow(followerID: "a", followeeID: "b", since: nil, now: Self.now)
        #expect(
            new
                == BucketListLifecycle.Change(
                    Follow(userID: "b", followedAt: Self.now.roundedToMilliseconds),
                    changed: true
                )
        )
        let again = BucketListLifecycle.follow(followerID: "a", followeeID: "b", since: Self.created, now: Self.now)
        #expect(again == BucketListLifecycle.Change(Follow(userID: "b", followedAt: Self.created), changed: false))
    }

    // MARK: Lists

    @Test("A new list is stored rounded and empty")
    func createList() throws {
        var asked = Self.list()
        asked.createdAt = Self.now
        asked.updatedAt = Self.now
        let stored = try BucketListLifecycle.createList(asked, ownedNameKeys: ["winter"], limit: 2, listIDTaken: false)
        #expect(stored.pendingCount == 0 && stored.completedCount == 0)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(stored.updatedAt == Self.now.roundedToMilliseconds)
    }

    @Test("A new list checks its name (case-insensitively), then the limit, then its id")
    func createListErrors() {
        #expect(throws: BucketListStoreError.listNameTaken) {
            try BucketListLifecycle.createList(
                Self.list(name: "Summer"),
                ownedNameKeys: ["summer"],
                limit: 1,
                listIDTaken: true
            )
        }
        #expect(throws: BucketListStoreError.listLimit) {
            try BucketListLifecycle.createList(Self.list(), ownedNameKeys: ["winter"], limit: 1, listIDTaken: true)
        }
        #expect(throws: BucketListStoreError.listIDTaken) {
            try BucketListLifecycle.createList(Self.list(), ownedNameKeys: [], limit: 1, listIDTaken: true)
        }
    }

    @Test("A list update applies changes, checks the new name, or keeps the list when nothing changes")
    func updateList() throws {
        let rename = BucketListChanges(name: "Autumn")
        let change = try BucketListLifecycle.updateList(
            Self.list(),
            ownerID: "owner",
            changes: rename,
            otherNameKeys: ["winter"],
            now: Self.now
        )
        #expect(change.changed)
        #expect(change.value.fields.name == "Autumn")
        #expect(change.value.updatedAt == Self.now.roundedToMilliseconds)
        #expect(change.value.pendingCount == 2)
        #expect(throws: BucketListStoreError.listNameTaken) {
            try BucketListLifecycle.updateList(
                Self.list(),
                ownerID: "owner",
                changes: BucketListChanges(name: "WINTER"),
                otherNameKeys: ["winter"],
                now: Self.now
            )
        }
        // Nothing changes: the name check does not apply.
        let same = try BucketListLifecycle.updateList(
            Self.list(),
            ownerID: "owner",
            changes: BucketListChanges(name: "Summer"),
            otherNameKeys: ["summer"],
            now: Self.now
        )
        #expect(same == BucketListLifecycle.Change(Self.list(), changed: false))
    }

    @Test("Someone else gets notFound for a private list and permissionDenied for a public one")
    func ownership() {
        #expect(throws: BucketListStoreError.listNotFound) {
            try BucketListLifecycle.ownedList(nil, ownerID: "owner")
        }
        #expect(throws: BucketListStoreError.listNotFound) {
            try BucketListLifecycle.ownedList(Self.list(visibility: .private), ownerID: "other")
        }
        #expect(throws: BucketListStoreError.notListOwner) {
            try BucketListLifecycle.ownedList(Self.list(visibility: .public), ownerID: "other")
        }
        #expect(throws: BucketListStoreError.notListOwner) {
            try BucketListLifecycle.updateList(
                Self.list(),
                ownerID: "other",
                changes: BucketListChanges(name: "X"),
                otherNameKeys: [],
                now: Self.now
            )
        }
    }

    // MARK: Entries

    @Test("An entry is added pending, now")
    func addEntry() throws {
        let entry = try BucketListLifecycle.addEntry(
            list: Self.list(),
            ownerID: "owner",
            activity: Self.activity(),
            entryExists: false,
            entryCount: 4,
            limit: 5,
            now: Self.now
        )
        #expect(
            entry
                == BucketListEntry(listID: "bkl_1", activity: Self.activity(), addedAt: Self.now.roundedToMilliseconds)
        )
    }

    @Test("Adding an entry checks the list, the activity, duplicates, then the limit")
    func addEntryErrors() {
        func add(
            list: BucketList? = Self.list(),
            ownerID: String = "owner",
            activity: Activity? = Self.activity(),
            exists: Bool = false,
            count: Int = 0
        ) throws(DomainError) {
            _ = try BucketListLifecycle.addEntry(
                list: list,
                ownerID: ownerID,
                activity: activity,
                entryExists: exists,
                entryCount: count,
                limit: 5,
                now: Self.now
            )
        }
        #expect(throws: BucketListStoreError.listNotFound) { try add(list: nil, activity: nil, exists: true, count: 5) }
        #expect(throws: BucketListStoreError.notListOwner) {
            try add(ownerID: "x", activity: nil, exists: true, count: 5)
        }
        #expect(throws: BucketListStoreError.activityNotFound) { try add(activity: nil, exists: true, count: 5) }
        #expect(throws: BucketListStoreError.entryExists) { try add(exists: true, count: 5) }
        #expect(throws: BucketListStoreError.entryLimit) { try add(count: 5) }
    }

    @Test("Removing an entry checks the list, then the entry")
    func removeEntry() {
        #expect(throws: Never.self) {
            try BucketListLifecycle.removeEntry(list: Self.list(), ownerID: "owner", entryExists: true)
        }
        #expect(throws: BucketListStoreError.listNotFound) {
            try BucketListLifecycle.removeEntry(list: Self.list(visibility: .private), ownerID: "x", entryExists: false)
        }
        #expect(throws: BucketListStoreError.entryNotFound) {
            try BucketListLifecycle.removeEntry(list: Self.list(), ownerID: "owner", entryExists: false)
        }
    }

    @Test("A completion is set rounded, replaced, or cleared; the entry must exist")
    func setCompletion() throws {
        let pending = BucketListEntry(listID: "bkl_1", activity: Self.activity(), addedAt: Self.created)
        let done = try BucketListLifecycle.setCompletion(
            list: Self.list(),
            ownerID: "owner",
            entry: pending,
            completion: Completion(completedAt: Self.now, note: "Great")
        )
        #expect(done.completion == Completion(completedAt: Self.now.roundedToMilliseconds, note: "Great"))
        #expect(done.addedAt == Self.created)
        let cleared = try BucketListLifecycle.setCompletion(
            list: Self.list(),
            ownerID: "owner",
            entry: done,
            completion: nil
        )
        #expect(cleared == pending)
        #expect(throws: BucketListStoreError.entryNotFound) {
            try BucketListLifecycle.setCompletion(list: Self.list(), ownerID: "owner", entry: nil, completion: nil)
        }
        #expect(throws: BucketListStoreError.notListOwner) {
            try BucketListLifecycle.setCompletion(list: Self.list(), ownerID: "x", entry: nil, completion: nil)
        }
    }
}
