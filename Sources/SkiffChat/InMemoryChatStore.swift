import DequeModule
public import Foundation
import HeapModule
public import SkiffDomain
public import SkiffFeed
import Synchronization

/// A ``ChatStore`` that keeps everything in memory, for tests and demos.
///
/// All state sits behind one `Mutex` and every method runs in one critical section, so each use
/// case is atomic as a database transaction would be.
public final class InMemoryChatStore: ChatStore {
    private struct PairKey: Hashable {
        var first: String
        var second: String
        var listingID: String
    }

    private struct ClientKey: Hashable {
        var senderID: String
        var clientMessageID: String
    }

    private struct NotificationKey: Hashable {
        var userID: String
        var key: String
    }

    private struct State {
        var conversations: [String: Conversation] = [:]
        var pairs: [PairKey: String] = [:]
        var messages: [String: [ChatMessage]] = [:]
        var clientMessages: [ClientKey: ChatMessage] = [:]
        /// Blocked-at per blocker and blocked user.
        var blocks: [String: [String: Date]] = [:]
        /// Each user's feed in sequence order.
        var feeds: [String: Deque<FeedEvent>] = [:]
        /// The time of each non-empty feed's first event, soonest first: a prune reads the feeds that hold
        /// something due and, in each, what is due, never every feed.
        var feedFronts = Heap<Due<String, Date>>()
        var lastFeedSequence: [String: Int64] = [:]
        /// The idempotency keys of recorded notifications, with the time recorded (pruned with the feed).
        var notificationKeys: [NotificationKey: Date] = [:]
        /// The same keys by time recorded, soonest first, for the prune.
        var notificationKeysByTime = Heap<Due<NotificationKey, Date>>()

        func isBlocked(_ a: String, _ b: String) -> Bool {
            blocks[a]?[b] != nil || blocks[b]?[a] != nil
        }

        mutating func conversation(
            _ a: String,
            _ b: String,
            listingID: String?,
            newID: String,
            now: Date
        ) -> Conversation {
            let (first, second) = Conversation.pair(a, b)
            let key = PairKey(first: first, second: second, listingID: listingID ?? "")
            if let id = pairs[key], let existing = conversations[id] { return existing }
            let created = Conversation(
                id: newID,
                firstUserID: first,
                secondUserID: second,
                listingID: listingID,
                createdAt: now
            )
            conversations[newID] = created
            pairs[key] = newID
            return created
        }

        mutating func append(_ payload: FeedPayload, to userID: String, at now: Date) -> FeedEvent {
            let sequence = lastFeedSequence[userID, default: 0] + 1
            lastFeedSequence[userID] = sequence
            let event = FeedEvent(userID: userID, sequence: sequence, occurredAt: now, payload: payload)
            if feeds[userID]?.isEmpty ?? true { feedFronts.insert(Due(at: now, key: userID)) }
            feeds[userID, default: []].append(event)
            return event
        }

        /// One batch of ``InMemoryChatStore/pruneFeed(before:)``: up to `limit` events and `limit` keys.
        mutating func pruneBatch(before date: Date, limit: Int) -> (events: Int, keys: Int) {
            var events = 0
            while events < limit, let front = feedFronts.min, front.at < date {
                _ = feedFronts.popMin()
                guard var feed = feeds.removeValue(forKey: front.key) else { continue }
                while events < limit, let first = feed.first, first.occurredAt < date {
                    feed.removeFirst()
                    events += 1
                }
                if let first = feed.first { feedFronts.insert(Due(at: first.occurredAt, key: front.key)) }
                if !feed.isEmpty { feeds[front.key] = feed }
            }
            var keys = 0
            while keys < limit, let due = notificationKeysByTime.min, due.at < date {
                _ = notificationKeysByTime.popMin()
                notificationKeys[due.key] = nil
                keys += 1
            }
            return (events, keys)
        }

        func summary(_ conversation: Conversation) -> ConversationSummary {
            ConversationSummary(conversation: conversation, lastMessage: messages[conversation.id]?.last)
        }
    }

    private let state = Mutex(State())

    /// Creates an empty store.
    public init() {}

    public func sendMessage(_ draft: MessageDraft, conversationID: String, now: Date) async throws -> SentMessage {
        let now = now.roundedToMilliseconds
        return try state.withLock { state throws(DomainError) -> SentMessage in
            if let clientID = draft.clientMessageID,
                let sent = state.clientMessages[ClientKey(senderID: draft.senderID, clientMessageID: clientID)]
            {
                return SentMessage(message: sent, events: [])
            }
            guard !state.isBlocked(draft.senderID, draft.recipientID) else { throw ChatStoreError.blocked }
            var conversation = state.conversation(
                draft.senderID,
                draft.recipientID,
                listingID: draft.listingID,
                newID: conversationID,
                now: now
            )
            let message = conversation.append(draft, at: now)
            state.conversations[conversation.id] = conversation
            state.messages[conversation.id, default: []].append(message)
            if let clientID = draft.clientMessageID {
                state.clientMessages[ClientKey(senderID: draft.senderID, clientMessageID: clientID)] = message
            }
            let events = [draft.senderID, draft.recipientID].map {
                state.append(.message(message), to: $0, at: now)
            }
            return SentMessage(message: message, events: events)
        }
    }

    public func openConversation(
        between firstUserID: String,
        and secondUserID: String,
        listingID: String?,
        newID: String,
        now: Date
    ) async throws -> Conversation {
        let now = now.roundedToMilliseconds
        return state.withLock {
            $0.conversation(firstUserID, secondUserID, listingID: listingID, newID: newID, now: now)
        }
    }

    public func conversation(id: String) async throws -> ConversationSummary? {
        state.withLock { state in state.conversations[id].map { state.summary($0) } }
    }

    public func conversations(userID: String, page: PageRequest) async throws -> Page<ConversationSummary> {
        let after = try page.token.map { token throws(DomainError) in try ConversationCursor.decode(token) }
        return state.withLock { state in
            let sorted = state.conversations.values
                .filter { $0.includes(userID) }
                .map { ConversationCursor($0) }
                .sorted()
            let remaining = after.map { cursor in sorted.filter { $0 > cursor } } ?? sorted
            let items = remaining.prefix(page.size).compactMap { state.conversations[$0.id] }.map(state.summary)
            let next = remaining.count > page.size ? items.last.map { ConversationCursor($0.conversation).token } : nil
            return Page(items: Array(items), nextPageToken: next)
        }
    }

    public func messages(
        conversationID: String,
        before: Int64?,
        after: Int64?,
        limit: Int
    ) async throws
        -> [ChatMessage]
    {
        state.withLock { state in
            let all = state.messages[conversationID] ?? []
            if let after {
                return Array(all.filter { $0.sequence > after }.prefix(limit + 1))
            }
            let older = before.map { before in all.filter { $0.sequence < before } } ?? all
            return Array(older.suffix(limit + 1))
        }
    }

    public func markRead(
        conversationID: String,
        userID: String,
        upTo sequence: Int64,
        now: Date
    ) async throws
        -> ReadMarkUpdate
    {
        let now = now.roundedToMilliseconds
        return try state.withLock { state throws(DomainError) -> ReadMarkUpdate in
            switch try ChatRules.markRead(state.conversations[conversationID], by: userID, upTo: sequence) {
            case .unchanged(let current):
                return ReadMarkUpdate(readUpTo: current, events: [])
            case .moved(let conversation, let receipt, let feeds):
                state.conversations[conversationID] = conversation
                let events = feeds.map { state.append(.readReceipt(receipt), to: $0, at: now) }
                return ReadMarkUpdate(readUpTo: sequence, events: events)
            }
        }
    }

    public func block(blockerID: String, blockedID: String, now: Date, limit: Int) async throws {
        let now = now.roundedToMilliseconds
        return try state.withLock { state throws(DomainError) in
            let blocked = state.blocks[blockerID, default: [:]]
            guard
                try ChatRules.block(alreadyBlocked: blocked[blockedID] != nil, blocksHeld: blocked.count, limit: limit)
            else { return }
            state.blocks[blockerID, default: [:]][blockedID] = now
        }
    }

    public func unblock(blockerID: String, blockedID: String) async throws {
        _ = state.withLock { $0.blocks[blockerID]?.removeValue(forKey: blockedID) }
    }

    public func blockedUsers(blockerID: String, page: PageRequest) async throws -> Page<BlockedUser> {
        let after = try page.token.map { token throws(DomainError) in try BlockCursor.decode(token) }
        return state.withLock { state in
            let sorted = (state.blocks[blockerID] ?? [:])
                .map { BlockCursor(BlockedUser(userID: $0.key, blockedAt: $0.value)) }
                .sorted()
            let remaining = after.map { cursor in sorted.filter { $0 > cursor } } ?? sorted
            let items = remaining.prefix(page.size).map(\.user)
            let next = remaining.count > page.size ? items.last.map { BlockCursor($0).token } : nil
            return Page(items: Array(items), nextPageToken: next)
        }
    }

    public func appendNotifications(_ notifications: [FeedNotification], now: Date) async throws -> [FeedEvent] {
        let now = now.roundedToMilliseconds
        return state.withLock { state in
            notifications.compactMap { notification in
                let key = NotificationKey(userID: notification.userID, key: notification.idempotencyKey)
                guard state.notificationKeys[key] == nil else { return nil }
                state.notificationKeys[key] = now
                state.notificationKeysByTime.insert(Due(at: now, key: key))
                return state.append(.notification(notification.kind), to: notification.userID, at: now)
            }
        }
    }

    public func feedEvents(userID: String, after sequence: Int64, limit: Int) async throws -> [FeedEvent] {
        state.withLock { state in
            // Sequences grow along the feed: the first one after `sequence` is found by halving.
            guard let feed = state.feeds[userID] else { return [] }
            var low = 0
            var high = feed.count
            while low < high {
                let middle = (low + high) / 2
                if feed[middle].sequence > sequence { high = middle } else { low = middle + 1 }
            }
            return Array(feed[low..<(low + min(max(0, limit), feed.count - low))])
        }
    }

    public func lastFeedSequence(userID: String) async throws -> Int64 {
        state.withLock { $0.lastFeedSequence[userID, default: 0] }
    }

    @discardableResult
    /// Deletes feed events older than `date`, each feed from its oldest event on, and the notification keys
    /// recorded before it: at most a batch of events (and a batch of keys) per hold of the lock, reading only
    /// the feeds that hold something due. An event appended just after a newer one of the same feed (their
    /// times taken before the lock) goes once that newer one is due.
    public func pruneFeed(before date: Date) async throws -> Int {
        var removed = 0
        // A batch counts the larger of its events and keys, so the loop stops once both fell short of a batch.
        _ = try await BatchedDelete.run { size in
            let batch = state.withLock { state in state.pruneBatch(before: date, limit: size) }
            removed += batch.events
            return max(batch.events, batch.keys)
        }
        return removed
    }
}
