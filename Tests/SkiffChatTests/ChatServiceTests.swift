import Foundation
import SkiffAPI
import SkiffChat
import SkiffCore
import SkiffDomain
import SkiffFeed
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

/// Known users and listings, as Accounts and Listings would answer.
struct FixedDirectory: ChatDirectory {
    var users: Set<String> = ["usr_ann", "usr_bob", "usr_cat"]
    var listings: Set<String> = ["lst_lamp"]
    func userExists(_ userID: String) async throws -> Bool { users.contains(userID) }
    func listingExists(_ listingID: String) async throws -> Bool { listings.contains(listingID) }
}

/// Tokens `tok-<name>` sign in `usr_<name>`; `service-token` is a Skiff service.
struct TokenAuthenticator: SessionAuthenticator {
    func authenticate(token: String) async throws -> AuthenticatedUser? {
        guard token.hasPrefix("tok-") else { return nil }
        return AuthenticatedUser(id: "usr_" + token.dropFirst(4), sessionToken: token)
    }
}

/// The Chat service in process, through its generated client.
struct ChatHarness {
    let store = InMemoryChatStore()
    let service: ChatService
    let client: Skiff_Chat_V1_Chat.Client

    init(configuration: ChatConfiguration = .defaults) {
        service = ChatService(store: store, directory: FixedDirectory(), configuration: configuration)
        let transport = InProcessTransport(
            services: [service],
            interceptors: [
                AuthenticationInterceptor(authenticator: TokenAuthenticator(), serviceToken: "service-token")
            ]
        )
        client = Skiff_Chat_V1_Chat.Client(transport: transport)
    }

    static func auth(_ user: String) -> Metadata { ["authorization": .string("Bearer tok-\(user)")] }
    static let service: Metadata = ["authorization": "Bearer service-token"]

    /// A server context for calling the service directly, signed in as `usr_<user>`, on a connection whose
    /// drain is `drain`.
    static func context(_ user: String, drain: DrainSignal = DrainSignal()) -> ServerContext {
        var context = ServerContext(
            descriptor: MethodDescriptor(
                service: "skiff.chat.v1.Chat",
                method: "SubscribeFeed",
                kind: .serverStreaming
            ),
            metadata: [:],
            peer: "test",
            deadline: nil,
            streamID: 1,
            drain: drain,
            sink: DiscardingSink()
        )
        context.attributes[AuthenticatedUserKey.self] = AuthenticatedUser(
            id: "usr_\(user)",
            sessionToken: "tok-\(user)"
        )
        return context
    }

    @discardableResult
    func send(_ from: String, to: String, _ text: String, clientID: String = "") async throws -> Skiff_Chat_V1_Message {
        try await client.sendMessage(
            .with {
                $0.recipientID = "usr_\(to)"
                $0.text = text
                $0.clientMessageID = clientID
            },
            metadata: Self.auth(from)
        ).message
    }
}

/// Collects what a stream delivered, shared between the reading task and the test.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }

    /// Polls until `condition` holds (up to about 5 s); returns whether it held.
    func wait(until condition: ([Element]) -> Bool) async -> Bool {
        for _ in 0..<500 {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(all)
    }
}

@Suite("Chat service")
struct ChatServiceTests {
    @Test("SendMessage validates its input with exact codes")
    func sendValidation() async throws {
        let chat = ChatHarness()
        let client = chat.client
        func send(_ configure: @escaping (inout Skiff_Chat_V1_SendMessageRequest) -> Void) async throws {
            var request = Skiff_Chat_V1_SendMessageRequest()
            request.recipientID = "usr_bob"
            request.text = "hi"
            configure(&request)
            _ = try await client.sendMessage(request, metadata: ChatHarness.auth("ann"))
        }
        await expectStatus(.unauthenticated) { _ = try await client.sendMessage(.with { $0.recipientID = "usr_bob" }) }
        await expectStatus(.invalidArgument) { try await send { $0.recipientID = "" } }
        await expectStatus(.invalidArgument) { try await send { $0.recipientID = "usr_ann" } }
        await expectStatus(.invalidArgument) { try await send { $0.text = "  \n" } }
        await expectStatus(.invalidArgument) { try await send { $0.text = String(repeating: "é", count: 4_001) } }
        await expectStatus(.invalidArgument) {
            try await send { $0.clientMessageID = String(repeating: "x", count: 65) }
        }
        await expectStatus(.notFound) { try await send { $0.recipientID = "usr_nobody" } }
        await expectStatus(.notFound) { try await send { $0.listingID = "lst_missing" } }
        try await send { $0.text = String(repeating: "é", count: 4_000) }
        try await send {
            $0.text = ""
            $0.imageID = "img_1"
        }
        let about = try await client.sendMessage(
            .with {
                $0.recipientID = "usr_bob"
                $0.text = "lamp?"
                $0.listingID = "lst_lamp"
            },
            metadata: ChatHarness.auth("ann")
        ).message
        #expect(about.listingID == "lst_lamp" && about.sequence == 1)
    }

    @Test("Sending is rate-limited per user, with a retry-after")
    func sendRateLimit() async throws {
        var configuration = ChatConfiguration()
        configuration.sendMessageLimit = RateLimit(2, per: .seconds(60))
        let chat = ChatHarness(configuration: configuration)
        try await chat.send("ann", to: "bob", "one")
        try await chat.send("ann", to: "bob", "two")
        let error = await expectStatus(.resourceExhausted) { try await chat.send("ann", to: "bob", "three") }
        let retryAfter = error.flatMap { $0.metadata.first("retry-after") }.flatMap { Int($0) }
        #expect(retryAfter.map { (1...60).contains($0) } == true)
        try await chat.send("bob", to: "ann", "not limited")
        #expect(try await chat.store.feedEvents(userID: "usr_bob", after: 0, limit: 10).count == 3)
    }

    @Test("Only Skiff services may open conversations and publish notifications")
    func serviceOnly() async throws {
        let chat = ChatHarness()
        let open = Skiff_Chat_V1_OpenConversationRequest.with {
            $0.firstUserID = "usr_ann"
            $0.secondUserID = "usr_bob"
            $0.listingID = "lst_lamp"
        }
        await expectStatus(.unauthenticated) { _ = try await chat.client.openConversation(open) }
        await expectStatus(.permissionDenied) {
            _ = try await chat.client.openConversation(open, metadata: ChatHarness.auth("ann"))
        }
        await expectStatus(.invalidArgument) {
            _ = try await chat.client.openConversation(
                .with { $0.firstUserID = "usr_ann" },
                metadata: ChatHarness.service
            )
        }
        let opened = try await chat.client.openConversation(open, metadata: ChatHarness.service)
        #expect(try await chat.client.openConversation(open, metadata: ChatHarness.service) == opened)
        let listed = try await chat.client.listConversations(.init(), metadata: ChatHarness.auth("bob"))
        #expect(listed.conversations.map(\.conversationID) == [opened.conversationID])
        #expect(listed.conversations.first?.hasLastMessage == false)

        let notification = Skiff_Chat_V1_Notification.with {
            $0.userID = "usr_bob"
            $0.idempotencyKey = "bids:1"
            $0.bid = .with {
                $0.kind = .placed
                $0.bidID = "bid_1"
                $0.amountCents = 1_200
            }
        }
        let publish = Skiff_Chat_V1_PublishNotificationsRequest.with { $0.notifications = [notification] }
        await expectStatus(.unauthenticated) { _ = try await chat.client.publishNotifications(publish) }
        await expectStatus(.permissionDenied) {
            _ = try await chat.client.publishNotifications(publish, metadata: ChatHarness.auth("bob"))
        }
        await expectStatus(.invalidArgument) {
            _ = try await chat.client.publishNotifications(
                .with { $0.notifications = [.with { $0.userID = "usr_bob" }] },
                metadata: ChatHarness.service
            )
        }
        await expectStatus(.invalidArgument) {
            var unknownKind = notification
            unknownKind.bid.kind = .unspecified
            _ = try await chat.client.publishNotifications(
                .with { $0.notifications = [unknownKind] },
                metadata: ChatHarness.service
            )
        }
        #expect(try await chat.client.publishNotifications(publish, metadata: ChatHarness.service).recorded == 1)
        #expect(try await chat.client.publishNotifications(publish, metadata: ChatHarness.service).recorded == 0)
        let events = try await chat.store.feedEvents(userID: "usr_bob", after: 0, limit: 10)
        #expect(events.count == 1)
        #expect(
            events.first?.payload
                == .notification(.bid(.init(kind: "placed", bidID: "bid_1", listingID: "", amountCents: 1_200)))
        )
    }

    @Test("A feed fills a hole the hub leaves, in order, without duplicates")
    func gapFill() async throws {
        let chat = ChatHarness()
        let events = Collected<Skiff_Chat_V1_FeedEvent>()
        let feed = Task {
            try await chat.client.subscribeFeed(.with { $0.fromLatest = true }, metadata: ChatHarness.auth("bob")) {
                response in
                for try await event in response.messages { events.append(event) }
            }
        }
        defer { feed.cancel() }
        #expect(await waitForSubscriber(chat.service))
        // Two events committed, but the hub hears of the second first (as concurrent transactions may).
        let first = try await chat.store.appendNotifications([notification("k1")], now: Date())
        let second = try await chat.store.appendNotifications([notification("k2")], now: Date())
        chat.service.hub.publish(.event(second[0]), to: ["usr_bob"])
        chat.service.hub.publish(.event(first[0]), to: ["usr_bob"])
        chat.service.hub.publish(.event(second[0]), to: ["usr_bob"])
        #expect(await events.wait { $0.count >= 2 })
        try await chat.send("ann", to: "bob", "after")
        #expect(await events.wait { $0.count >= 3 })
        #expect(events.all.map(\.sequence) == [1, 2, 3])
        #expect(events.all.last?.message.text == "after")
    }

    @Test("Resuming from events already deleted fails with FAILED_PRECONDITION; from_latest works")
    func resumeAfterPruning() async throws {
        let chat = ChatHarness()
        for index in 0..<3 { try await chat.send("ann", to: "bob", "m\(index)") }
        try await chat.store.pruneFeed(before: Date().addingTimeInterval(60))
        try await chat.send("ann", to: "bob", "kept")
        for after: Int64 in [0, 1] {
            let error = await expectStatus(.failedPrecondition) {
                _ = try await chat.client.subscribeFeed(
                    .with { $0.afterSequence = after },
                    metadata: ChatHarness.auth("bob")
                ) {
                    try await $0.messages.collect()
                }
            }
            #expect(error?.message.contains("from_latest") == true)
        }
        // Resuming right before what is kept works.
        let kept = try await chat.client.subscribeFeed(
            .with { $0.afterSequence = 3 },
            metadata: ChatHarness.auth("bob")
        ) {
            response -> Skiff_Chat_V1_FeedEvent? in
            for try await event in response.messages { return event }
            return nil
        }
        #expect(kept?.sequence == 4 && kept?.message.text == "kept")
        await expectStatus(.outOfRange) {
            _ = try await chat.client.subscribeFeed(.with { $0.afterSequence = 5 }, metadata: ChatHarness.auth("bob")) {
                try await $0.messages.collect()
            }
        }
    }

    @Test("A drain ends the feed after what was sent, with UNAVAILABLE and its resume point")
    func drainedSubscriber() async throws {
        let chat = ChatHarness()
        let written = Collected<Int64>()
        let writer = RPCWriter<Skiff_Chat_V1_FeedEvent> { event in written.append(event.sequence) }
        let drain = DrainSignal()
        let feed = Task {
            try await chat.service.subscribeFeed(
                request: .init(),
                response: writer,
                context: ChatHarness.context("bob", drain: drain)
            )
        }
        #expect(await waitForSubscriber(chat.service))
        for index in 0..<3 { try await chat.send("ann", to: "bob", "m\(index)") }
        for _ in 0..<500 where written.all.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        drain.fire()
        let error = await #expect(throws: RPCError.self) { try await feed.value }
        #expect(error?.code == .unavailable)
        #expect(error?.metadata.first("skiff-resume-after") == "3")
        #expect(error?.message.contains("after_sequence 3") == true)
        #expect(written.all == [1, 2, 3])
        #expect(chat.service.hub.subscriberCount == 0)
        // A call that starts on a connection already draining ends at once, from where it was asked to start.
        let late = await #expect(throws: RPCError.self) {
            try await chat.service.subscribeFeed(
                request: .with { $0.afterSequence = 3 },
                response: writer,
                context: ChatHarness.context("bob", drain: drain)
            )
        }
        #expect(late?.metadata.first("skiff-resume-after") == "3")
    }

    @Test("A subscriber that reads too slowly is cut off with its resume point")
    func slowSubscriber() async throws {
        var configuration = ChatConfiguration()
        configuration.feedBufferSize = 4
        let chat = ChatHarness(configuration: configuration)
        let written = Collected<Int64>()
        let gate = Gate()
        // A writer that takes the first event, then blocks (a client that stopped reading).
        let writer = RPCWriter<Skiff_Chat_V1_FeedEvent> { event in
            written.append(event.sequence)
            await gate.wait()
        }
        let feed = Task {
            try await chat.service.subscribeFeed(
                request: .with { $0.fromLatest = true },
                response: writer,
                context: ChatHarness.context("bob")
            )
        }
        #expect(await waitForSubscriber(chat.service))
        for index in 0..<10 { try await chat.send("ann", to: "bob", "m\(index)") }
        gate.open()
        let error = await #expect(throws: RPCError.self) { try await feed.value }
        #expect(error?.code == .aborted)
        let resume = error.flatMap { $0.metadata.first("skiff-resume-after") }
        #expect(resume == "\(written.all.last ?? -1)")
        #expect(written.all.first == 1)
        #expect(chat.service.hub.subscriberCount == 0)
        // Resuming from there delivers the rest.
        let rest = try await chat.client.subscribeFeed(
            .with { $0.afterSequence = written.all.last ?? 0 },
            metadata: ChatHarness.auth("bob")
        ) { response in
            var sequences: [Int64] = []
            for try await event in response.messages {
                sequences.append(event.sequence)
                if event.sequence == 10 { break }
            }
            return sequences
        }
        #expect(rest == Array((written.all.last ?? 0) + 1...10))
    }

    @Test("Connect: the first request subscribes; failures come back on the stream, which stays open")
    func connect() async throws {
        let chat = ChatHarness()
        await expectStatus(.invalidArgument) {
            try await chat.client.connect(metadata: ChatHarness.auth("ann")) { writer in
                try await writer.write(.with { $0.sendMessage = .with { $0.recipientID = "usr_bob" } })
            } onResponse: { response in
                for try await _ in response.messages {}
            }
        }
        let responses = try await chat.client.connect(metadata: ChatHarness.auth("ann")) { writer in
            try await writer.write(.with { $0.subscribe = .init() })
            try await writer.write(
                .with {
                    $0.requestID = "r1"
                    $0.sendMessage = .with {
                        $0.recipientID = "usr_nobody"
                        $0.text = "hi"
                    }
                }
            )
            try await writer.write(
                .with {
                    $0.requestID = "r2"
                    $0.subscribe = .init()
                }
            )
            try await writer.write(
                .with {
                    $0.requestID = "r3"
                    $0.sendMessage = .with {
                        $0.recipientID = "usr_bob"
                        $0.text = "hello"
                        $0.clientMessageID = "c-1"
                    }
                }
            )
        } onResponse: { response in
            var collected: [Skiff_Chat_V1_ConnectResponse] = []
            for try await message in response.messages {
                collected.append(message)
                if collected.count == 3 { break }
            }
            return collected
        }
        try #require(responses.count == 3, "\(responses)")
        #expect(responses[0].requestFailed.requestID == "r1")
        #expect(responses[0].requestFailed.code == Int32(StatusCode.notFound.rawValue))
        #expect(responses[1].requestFailed.requestID == "r2")
        #expect(responses[1].requestFailed.code == Int32(StatusCode.invalidArgument.rawValue))
        #expect(responses[2].event.message.clientMessageID == "c-1")
        #expect(responses[2].event.sequence == 1)
    }

    private func notification(_ key: String) -> FeedNotification {
        FeedNotification(
            userID: "usr_bob",
            idempotencyKey: key,
            kind: .listing(
                .init(kind: "sold", listingID: "lst_lamp", title: "Lamp", newPriceCents: 1, oldPriceCents: 1)
            ),
            occurredAt: Date()
        )
    }

    private func waitForSubscriber(_ service: ChatService) async -> Bool {
        for _ in 0..<500 {
            if service.hub.subscriberCount > 0 { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// Response metadata that goes nowhere (for calling a handler directly).
final class DiscardingSink: ResponseMetadataSink {
    func setInitialMetadata(_ metadata: Metadata) {}
    func addTrailingMetadata(_ metadata: Metadata) {}
}

/// A one-shot gate: `wait` suspends until `open`.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
