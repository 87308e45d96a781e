import Foundation
import SkiffChat
import SkiffDomain
import SkiffFeed
import Testing

/// The one conformance suite for ``ChatStore``: every test runs against every backend.
@Suite("ChatStore conformance")
struct ChatStoreConformanceTests {
    @Test("A first message creates the conversation and lands on both feeds", arguments: StoreKind.allCases)
    func firstMessage(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            let sent = try await store.send("usr_ann", "usr_bob", "Is the lamp still there?", at: 0.000_4)
            let message = sent.message
            #expect(message.sequence == 1)
            #expect(message.senderID == "usr_ann" && message.recipientID == "usr_bob")
            #expect(message.sentAt == Fixture.t0)
            #expect(sent.events.map(\.userID) == ["usr_ann", "usr_bob"])
            #expect(sent.events.map(\.sequence) == [1, 1])
            #expect(sent.events.allSatisfy { $0.payload == .message(message) && $0.occurredAt == Fixture.t0 })

            let summary = try #require(try await store.conversation(id: message.conversationID))
            #expect(summary.lastMessage == message)
            #expect(summary.conversation.firstUserID == "usr_ann" && summary.conversation.secondUserID == "usr_bob")
            #expect(summary.conversation.lastSequence == 1)
            #expect(summary.unreadCount(for: "usr_ann") == 0)
            #expect(summary.unreadCount(for: "usr_bob") == 1)
            #expect(try await store.feedEvents(userID: "usr_bob", after: 0, limit: 10) == [sent.events[1]])
            #expect(try await store.lastFeedSequence(userID: "usr_bob") == 1)
            #expect(try await store.lastFeedSequence(userID: "usr_nobody") == 0)
            #expect(try await store.conversation(id: "cnv_missing") == nil)
        }
    }

    @Test("One conversation per pair and listing, whoever writes first", arguments: StoreKind.allCases)
    func conversationIdentity(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            let a = try await store.send("usr_bob", "usr_ann", "hi")
            let b = try await store.send("usr_ann", "usr_bob", "hello", at: 1)
            let lamp = try await store.send("usr_ann", "usr_bob", "the lamp?", listing: "lst_lamp", at: 2)
            let lamp2 = try await store.send("usr_bob", "usr_ann", "yes", listing: "lst_lamp", at: 3)
            #expect(a.message.conversationID == b.message.conversationID)
            #expect(b.message.sequence == 2)
            #expect(lamp.message.conversationID != a.message.conversationID)
            #expect(lamp2.message.conversationID == lamp.message.conversationID)
            #expect(lamp2.message.sequence == 2)
            #expect(lamp2.message.listingID == "lst_lamp")

            let opened = try await store.openConversation(
                between: "usr_bob",
                and: "usr_ann",
                listingID: "lst_lamp",
                newID: "cnv_new",
                now: Fixture.t0
            )
            #expect(opened.id == lamp.message.conversationID)
            let fresh = try await store.openConversation(
                between: "usr_bob",
                and: "usr_cat",
                listingID: "lst_desk",
                newID: "cnv_fresh",
                now: Fixture.t0
            )
            #expect(fresh.id == "cnv_fresh" && fresh.lastSequence == 0)
            let again = try await store.openConversation(
                between: "usr_cat",
                and: "usr_bob",
                listingID: "lst_desk",
                newID: "cnv_other",
                now: Fixture.t0
            )
            #expect(again.id == "cnv_fresh")
            #expect(try await store.conversation(id: "cnv_fresh")?.lastMessage == nil)
        }
    }

    @Test("A client message id makes a retry return the stored message", arguments: StoreKind.allCases)
    func clientMessageID(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            let first = try await store.send("usr_ann", "usr_bob", "once", clientID: "c-1")
            let retry = try await store.send("usr_ann", "usr_bob", "once", clientID: "c-1", at: 5)
            #expect(retry.message == first.message)
            #expect(retry.events.isEmpty)
            let other = try await store.send("usr_bob", "usr_ann", "mine", clientID: "c-1", at: 6)
            #expect(other.message.sequence == 2)
            #expect(try await store.lastFeedSequence(userID: "usr_ann") == 2)
        }
    }

    @Test("Blocks refuse messages both ways until lifted", arguments: StoreKind.allCases)
    func blocking(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            try await store.block(blockerID: "usr_bob", blockedID: "usr_ann", now: Fixture.t0, limit: 2)
            try await store.block(
                blockerID: "usr_bob",
                blockedID: "usr_ann",
                now: Fixture.date(plusSeconds: 9),
                limit: 2
            )
            await #expect(throws: ChatStoreError.blocked) { try await store.send("usr_ann", "usr_bob", "hi") }
            await #expect(throws: ChatStoreError.blocked) { try await store.send("usr_bob", "usr_ann", "hi") }
            try await store.block(
                blockerID: "usr_bob",
                blockedID: "usr_cat",
                now: Fixture.date(plusSeconds: 1),
                limit: 2
            )
            await #expect(throws: ChatStoreError.tooManyBlocks(2)) {
                try await store.block(blockerID: "usr_bob", blockedID: "usr_dan", now: Fixture.t0, limit: 2)
            }
            let page = try await store.blockedUsers(blockerID: "usr_bob", page: try PageRequest(size: 1))
            #expect(page.items == [BlockedUser(userID: "usr_cat", blockedAt: Fixture.date(plusSeconds: 1))])
            let rest = try await store.blockedUsers(
                blockerID: "usr_bob",
                page: try PageRequest(size: 1, token: page.nextPageToken)
            )
            #expect(rest.items == [BlockedUser(userID: "usr_ann", blockedAt: Fixture.t0)])
            #expect(rest.nextPageToken == nil)

            try await store.unblock(blockerID: "usr_bob", blockedID: "usr_ann")
            try await store.unblock(blockerID: "usr_bob", blockedID: "usr_ann")
            #expect(try await store.send("usr_ann", "usr_bob", "hi again").message.sequence == 1)
            #expect(try await store.feedEvents(userID: "usr_bob", after: 0, limit: 10).count == 1)
        }
    }

    @Test("Read marks move forward only and notify both participants", arguments: StoreKind.allCases)
    func readMarks(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            let sent = try await store.send("usr_ann", "usr_bob", "one")
            try await store.send("usr_ann", "usr_bob", "two", at: 1)
            let id = sent.message.conversationID
            await #expect(throws: ChatStoreError.conversationNotFound) {
                _ = try await store.markRead(conversationID: "cnv_missing", userID: "usr_bob", upTo: 1, now: Fixture.t0)
            }
            await #expect(throws: ChatStoreError.notParticipant) {
                _ = try await store.markRead(conversationID: id, userID: "usr_eve", upTo: 1, now: Fixture.t0)
            }
            await #expect(throws: ChatStoreError.beyondLastMessage(2)) {
                _ = try await store.markRead(conversationID: id, userID: "usr_bob", upTo: 3, now: Fixture.t0)
            }
            let update = try await store.markRead(
                conversationID: id,
                userID: "usr_bob",
                upTo: 1,
                now: Fixture.date(plusSeconds: 2)
            )
            let receipt = ReadReceipt(conversationID: id, readerID: "usr_bob", readUpTo: 1)
            #expect(update.readUpTo == 1)
            #expect(update.events.map(\.userID) == ["usr_bob", "usr_ann"])
            #expect(update.events.map(\.sequence) == [3, 3])
            #expect(update.events.allSatisfy { $0.payload == .readReceipt(receipt) })
            #expect(try await store.conversation(id: id)?.unreadCount(for: "usr_bob") == 1)

            let same = try await store.markRead(conversationID: id, userID: "usr_bob", upTo: 1, now: Fixture.t0)
            #expect(same == ReadMarkUpdate(readUpTo: 1, events: []))
            let older = try await store.markRead(conversationID: id, userID: "usr_ann", upTo: 1, now: Fixture.t0)
            #expect(older == ReadMarkUpdate(readUpTo: 2, events: []))

            try await store.send("usr_bob", "usr_ann", "three", at: 3)
            let after = try #require(try await store.conversation(id: id))
            #expect(after.conversation.readUpTo("usr_bob") == 3)
            #expect(after.unreadCount(for: "usr_ann") == 1)
        }
    }

    @Test("Conversations list by latest activity with stable pages", arguments: StoreKind.allCases)
    func conversationPaging(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            var ids: [String] = []
            for (index, other) in ["usr_b", "usr_c", "usr_d", "usr_e"].enumerated() {
                ids.append(try await store.send("usr_a", other, "hi", at: Double(index)).message.conversationID)
            }
            // The first conversation becomes the most recent.
            try await store.send("usr_b", "usr_a", "back", at: 10)
            try await store.send("usr_x", "usr_y", "unrelated", at: 11)
            var seen: [String] = []
            var token: String?
            repeat {
                let page = try await store.conversations(userID: "usr_a", page: try PageRequest(size: 3, token: token))
                seen += page.items.map(\.conversation.id)
                token = page.nextPageToken
            } while token != nil
            #expect(seen == [ids[0], ids[3], ids[2], ids[1]])
            let first = try await store.conversations(userID: "usr_a", page: try PageRequest(size: 3))
            #expect(first.items.first?.lastMessage?.text == "back")
            #expect(try await store.conversations(userID: "usr_nobody", page: .first).items.isEmpty)
        }
    }

    @Test("Message history pages before, after and from the newest", arguments: StoreKind.allCases)
    func messagePaging(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            var id = ""
            for index in 1...7 {
                id = try await store.send("usr_a", "usr_b", "m\(index)", at: Double(index)).message.conversationID
            }
            let newest = try await store.messages(conversationID: id, before: nil, after: nil, limit: 3)
            #expect(newest.map(\.sequence) == [4, 5, 6, 7])
            let older = try await store.messages(conversationID: id, before: 4, after: nil, limit: 3)
            #expect(older.map(\.sequence) == [1, 2, 3])
            #expect(older.map(\.text) == ["m1", "m2", "m3"])
            let newer = try await store.messages(conversationID: id, before: nil, after: 2, limit: 3)
            #expect(newer.map(\.sequence) == [3, 4, 5, 6])
            #expect(try await store.messages(conversationID: id, before: nil, after: 7, limit: 3).isEmpty)
            #expect(try await store.messages(conversationID: "cnv_missing", before: nil, after: nil, limit: 3).isEmpty)
        }
    }

    @Test("Notifications are numbered with messages and recorded once per key", arguments: StoreKind.allCases)
    func notifications(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            try await store.send("usr_ann", "usr_bob", "hi")
            let recorded = try await store.appendNotifications(
                [
                    ChatFixture.bidNotification("usr_bob", key: "bids:1"),
                    ChatFixture.bidNotification("usr_cat", key: "bids:1"),
                    ChatFixture.bidNotification("usr_bob", key: "bids:2"),
                ],
                now: Fixture.date(plusSeconds: 1)
            )
            #expect(recorded.map(\.userID) == ["usr_bob", "usr_cat", "usr_bob"])
            #expect(recorded.map(\.sequence) == [2, 1, 3])
            #expect(recorded[0].payload == .notification(ChatFixture.bidNotification("usr_bob", key: "bids:1").kind))
            let again = try await store.appendNotifications(
                [
                    ChatFixture.bidNotification("usr_bob", key: "bids:2"),
                    ChatFixture.bidNotification("usr_bob", key: "bids:3"),
                ],
                now: Fixture.date(plusSeconds: 2)
            )
            #expect(again.map(\.sequence) == [4])
            let feed = try await store.feedEvents(userID: "usr_bob", after: 1, limit: 2)
            #expect(feed.map(\.sequence) == [2, 3])
            #expect(feed == Array(recorded.filter { $0.userID == "usr_bob" }))
        }
    }

    @Test("Pruning deletes old events and numbering goes on", arguments: StoreKind.allCases)
    func pruning(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            try await store.send("usr_ann", "usr_bob", "old")
            _ = try await store.appendNotifications([ChatFixture.bidNotification("usr_bob", key: "k")], now: Fixture.t0)
            try await store.send("usr_ann", "usr_bob", "new", at: 100)
            #expect(try await store.pruneFeed(before: Fixture.date(plusSeconds: 50)) == 3)
            #expect(try await store.feedEvents(userID: "usr_bob", after: 0, limit: 10).map(\.sequence) == [3])
            #expect(try await store.lastFeedSequence(userID: "usr_bob") == 3)
            let next = try await store.send("usr_ann", "usr_bob", "newer", at: 101)
            #expect(next.events.map(\.sequence) == [3, 4])
            // The message history is not the feed: it stays.
            #expect(
                try await store.messages(
                    conversationID: next.message.conversationID,
                    before: nil,
                    after: nil,
                    limit: 10
                ).count == 3
            )
        }
    }

    @Test("Concurrent senders get gapless message and feed numbers", arguments: StoreKind.allCases)
    func concurrentSenders(kind: StoreKind) async throws {
        try await withChatStore(kind) { store in
            let perSide = 25
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<perSide {
                    group.addTask { try await store.send("usr_ann", "usr_bob", "a\(index)") }
                    group.addTask { try await store.send("usr_bob", "usr_ann", "b\(index)") }
                    group.addTask {
                        _ = try await store.appendNotifications(
                            [ChatFixture.bidNotification("usr_bob", key: "n\(index)")],
                            now: Fixture.t0
                        )
                    }
                }
                try await group.waitForAll()
            }
            let conversations = try await store.conversations(userID: "usr_ann", page: .first)
            #expect(conversations.items.count == 1)
            let id = try #require(conversations.items.first?.conversation.id)
            let messages = try await store.messages(conversationID: id, before: nil, after: nil, limit: 200)
            #expect(messages.map(\.sequence) == (1...Int64(2 * perSide)).map { $0 })
            let bob = try await store.feedEvents(userID: "usr_bob", after: 0, limit: 500)
            #expect(bob.map(\.sequence) == (1...Int64(3 * perSide)).map { $0 })
            let ann = try await store.feedEvents(userID: "usr_ann", after: 0, limit: 500)
            #expect(ann.map(\.sequence) == (1...Int64(2 * perSide)).map { $0 })
        }
    }
}
