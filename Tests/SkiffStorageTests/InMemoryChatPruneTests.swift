import Foundation
import SkiffChat
import SkiffDomain
import SkiffFeed
import Testing

/// The in-memory feed's prune and reads past a sequence: by each feed's oldest event and by the keys' times.
@Suite("In-memory chat: feed prune and reads")
struct InMemoryChatPruneTests {
    @Test(
        "A prune past a batch deletes exactly the old events of every feed and the old keys; reads after any sequence"
    )
    func pruneAcrossBatches() async throws {
        let store = InMemoryChatStore()
        // 2,600 old notifications over three users (more than two batches), then a few new ones.
        let users = ["usr_a", "usr_b", "usr_c"]
        for index in 0..<2_600 {
            _ = try await store.appendNotifications(
                [ChatFixture.bidNotification(users[index % 3], key: "old:\(index)")],
                now: Fixture.date(plusSeconds: Double(index) / 100)
            )
        }
        for (index, user) in users.enumerated() {
            _ = try await store.appendNotifications(
                [ChatFixture.bidNotification(user, key: "new:\(index)")],
                now: Fixture.date(plusSeconds: 100)
            )
        }
        #expect(try await store.pruneFeed(before: Fixture.date(plusSeconds: 50)) == 2_600)
        #expect(try await store.pruneFeed(before: Fixture.date(plusSeconds: 50)) == 0)
        for user in users {
            let last = try await store.lastFeedSequence(userID: user)
            let left = try await store.feedEvents(userID: user, after: 0, limit: 100)
            #expect(left.map(\.sequence) == [last], "\(user)")
            // After any sequence, from before the feed's start to past its end.
            #expect(try await store.feedEvents(userID: user, after: last - 1, limit: 5).map(\.sequence) == [last])
            #expect(try await store.feedEvents(userID: user, after: last, limit: 5).isEmpty)
            #expect(try await store.feedEvents(userID: user, after: last - 500, limit: 0).isEmpty)
            #expect(try await store.feedEvents(userID: user, after: -1, limit: .max).map(\.sequence) == [last])
        }
        // An old key is forgotten with its event (recorded again); a new one still deduplicates.
        let again = try await store.appendNotifications(
            [ChatFixture.bidNotification("usr_a", key: "old:0"), ChatFixture.bidNotification("usr_a", key: "new:0")],
            now: Fixture.date(plusSeconds: 101)
        )
        #expect(again.count == 1)
        let feed = try await store.feedEvents(userID: "usr_a", after: 0, limit: 10)
        #expect(feed.count == 2 && feed[1].sequence == feed[0].sequence + 1)
        #expect(try await store.feedEvents(userID: "usr_a", after: feed[0].sequence, limit: 10) == [feed[1]])
        // Everything goes at a late enough time; numbering goes on.
        #expect(try await store.pruneFeed(before: Fixture.date(plusSeconds: 1_000)) == 4)
        let next = try await store.appendNotifications(
            [ChatFixture.bidNotification("usr_a", key: "later")],
            now: Fixture.date(plusSeconds: 1_001)
        )
        #expect(next.map(\.sequence) == [feed[1].sequence + 1])
    }
}
