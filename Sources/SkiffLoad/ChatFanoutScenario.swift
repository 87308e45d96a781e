import Foundation
public import Histogram
import SkiffAPI
import SkiffClient
public import SkiffCore
import SwiftProtobuf
import Synchronization

/// `chat-fanout`: `subscribers` live-feed subscriptions (SubscribeFeed) spread over the seeded
/// accounts, most of them idle; each call sends one chat message between two seeded users and
/// completes when every subscription of the recipient has received it.
///
/// Besides the runner's call latency (send → delivered everywhere), it measures **delivery**: for
/// each subscription that receives a message, arrival time minus the message's `sent_at`, the
/// server's clock when it stored the message. `sent_at` is taken just before the store commits
/// and has millisecond precision, so the figure is an upper bound on commit → arrival (by up to
/// 1 ms plus the commit itself). Client and server must share a clock (loopback).
public final class ChatFanoutScenario: LoadScenario {
    public var name: String { "chat-fanout" }
    let options: ScenarioOptions
    let seeding: MarketplaceScenario
    private let prepared = Mutex<Prepared?>(nil)
    private let deliveries = DeliveryBoard()
    private let streams = Mutex<[Task<Void, Never>]>([])
    private let subscriberPool = Mutex<ClientConnectionPool?>(nil)

    struct Prepared: Sendable {
        var sessions: [MarketplaceScenario.Session]
        /// Subscriptions per user id.
        var subscriptions: [String: Int]
    }

    /// Creates the scenario; accounts are seeded (or reused) as for `marketplace`.
    public init(options: ScenarioOptions, domain: String = "campus.edu") {
        self.options = options
        self.seeding = MarketplaceScenario(options: options, domain: domain)
    }

    deinit {
        for task in streams.withLock({ $0 }) { task.cancel() }
    }

    public func prepare(_ context: LoadContext) async throws {
        let state = try await seeding.seed(context, domain: seeding.domain)
        let accounts = Skiff_Accounts_V1_Accounts.Client(transport: context.transport)
        let sessions = try await seeding.logIn(state.users.prefix(64), accounts)
        guard sessions.count >= 2 else {
            throw SeedingError("chat-fanout needs 2 or more accounts: pass --seed-users 2")
        }
        let chat = Skiff_Chat_V1_Chat.Client(transport: context.transport)

        // Subscriptions have connections of their own (one each by default, as each phone has its
        // own): a connection's stream limit must not be shared with the calls under test.
        let total = max(options.feedSubscribers, sessions.count)
        let feedTransport: ClientConnectionPool?
        if let target = context.target {
            let size = options.subscriberConnections > 0 ? options.subscriberConnections : total
            let pool = ClientConnectionPool(target: target, size: size)
            subscriberPool.withLock { $0 = pool }
            try await pool.connect()
            feedTransport = pool
        } else {
            feedTransport = nil
        }

        // Open the subscriptions, round robin over the users.
        var subscriptions: [String: Int] = [:]
        var tasks: [Task<Void, Never>] = []
        for index in 0..<total {
            let session = sessions[index % sessions.count]
            subscriptions[session.userID, default: 0] += 1
            let feedChat = feedTransport.map { Skiff_Chat_V1_Chat.Client(transport: $0.next()) } ?? chat
            tasks.append(
                Task { [deliveries] in
                    try? await feedChat.subscribeFeed(.with { $0.fromLatest = true }, metadata: session.auth) {
                        response in
                        for try await event in response.messages {
                            guard case .message(let message) = event.event, message.recipientID == session.userID else {
                                continue
                            }
                            deliveries.arrived(message, at: Date())
                        }
                    }
                }
            )
        }
        streams.withLock { $0 = tasks }

        // Every subscription is live once a message to each user reaches all of theirs. Until a
        // subscription is registered it misses messages (it starts from the latest event), so
        // warm-up messages are sent again until one reaches them all.
        for (index, session) in sessions.enumerated() {
            let sender = sessions[(index + 1) % sessions.count]
            let expected = subscriptions[session.userID] ?? 0
            var attempt = 0
            while true {
                do {
                    try await send(
                        chat,
                        from: sender,
                        to: session,
                        text: "chat-fanout warm-up",
                        expecting: expected,
                        timeout: .milliseconds(500)
                    )
                    break
                } catch let error as RPCError where error.code == .deadlineExceeded && attempt < 60 {
                    attempt += 1
                }
            }
            context.progress.bar("opening feeds   ", done: index + 1, total: sessions.count)
        }
        context.progress.finish()
        deliveries.resetLatencies()
        prepared.withLock { $0 = Prepared(sessions: sessions, subscriptions: subscriptions) }
    }

    public func perform(_ transport: any ClientTransport) async throws {
        guard let data = prepared.withLock({ $0 }) else { throw SeedingError("chat-fanout scenario not prepared") }
        var rng = SystemRandomNumberGenerator()
        let from = data.sessions.randomElement(using: &rng)!
        var to = data.sessions.randomElement(using: &rng)!
        while to.userID == from.userID { to = data.sessions.randomElement(using: &rng)! }
        let chat = Skiff_Chat_V1_Chat.Client(transport: transport)
        try await send(
            chat,
            from: from,
            to: to,
            text: "load \(UInt64.random(in: 0...UInt64.max, using: &rng))",
            expecting: data.subscriptions[to.userID] ?? 0
        )
    }

    private func send(
        _ chat: Skiff_Chat_V1_Chat.Client,
        from: MarketplaceScenario.Session,
        to: MarketplaceScenario.Session,
        text: String,
        expecting count: Int,
        timeout: Duration = DeliveryBoard.defaultTimeout
    ) async throws {
        let message = try await chat.sendMessage(
            .with {
                $0.recipientID = to.userID
                $0.text = text
            },
            metadata: from.auth
        ).message
        try await deliveries.wait(
            conversation: message.conversationID,
            sequence: message.sequence,
            count: count,
            timeout: timeout
        )
    }

    public func measurementStarted() {
        deliveries.resetLatencies()
    }

    public func measurements() -> [String: Histogram<UInt64>] {
        ["delivery (sent_at → arrival)": deliveries.latencies]
    }

    public func finish() async {
        let tasks = streams.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        if let pool = subscriberPool.withLock({ $0 }) { await pool.close() }
    }
}

/// Records each delivery's latency, counts the arrivals of each message and wakes whoever waits
/// for a number of them.
final class DeliveryBoard: Sendable {
    private let histogram = Mutex(
        Histogram<UInt64>(
            highestTrackableValue: LoadRecorder.highestTrackableMicros,
            numberOfSignificantValueDigits: .three
        )
    )

    /// Delivery latencies in microseconds.
    var latencies: Histogram<UInt64> { histogram.withLock { $0 } }

    func resetLatencies() { histogram.withLock { $0.reset() } }

    /// A subscription received a message at `now`.
    func arrived(_ message: Skiff_Chat_V1_Message, at now: Date) {
        let micros = max(0, now.timeIntervalSince(message.sentAt.date) * 1_000_000)
        histogram.withLock { _ = $0.record(UInt64(micros)) }
        arrived(conversation: message.conversationID, sequence: message.sequence)
    }

    private struct Key: Hashable {
        var conversation: String
        var sequence: Int64
    }

    private struct Entry {
        var arrived = 0
        var expected: Int?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let entries = Mutex<[Key: Entry]>([:])
    /// How long a message may take to reach every subscription before the call fails.
    static let defaultTimeout: Duration = .seconds(10)

    func arrived(conversation: String, sequence: Int64) {
        let key = Key(conversation: conversation, sequence: sequence)
        let waiter: CheckedContinuation<Void, any Error>? = entries.withLock { entries in
            var entry = entries[key] ?? Entry()
            entry.arrived += 1
            if let expected = entry.expected, entry.arrived >= expected {
                entries[key] = nil
                return entry.waiter
            }
            entries[key] = entry
            return nil
        }
        waiter?.resume()
    }

    /// Returns once `count` subscriptions received the message (at once if they already have).
    func wait(conversation: String, sequence: Int64, count: Int, timeout: Duration) async throws {
        let key = Key(conversation: conversation, sequence: sequence)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let done: Bool = self.entries.withLock { entries in
                        var entry = entries[key] ?? Entry()
                        if entry.arrived >= count {
                            entries[key] = nil
                            return true
                        }
                        entry.expected = count
                        entry.waiter = continuation
                        entries[key] = entry
                        return false
                    }
                    if done { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                let waiter = self.entries.withLock { entries in
                    defer { entries[key] = nil }
                    return entries[key]?.waiter
                }
                waiter?.resume(
                    throwing: RPCError(
                        code: .deadlineExceeded,
                        message: "A message did not reach every subscription in time."
                    )
                )
                return false
            }
            // The first task to finish decides: delivered, or (after the timeout) the waiter's error.
            for try await delivered in group where delivered {
                group.cancelAll()
                return
            }
        }
    }
}
