import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

typealias ChatClient = Skiff_Chat_V1_Chat.Client
typealias FeedLog = StreamLog<Skiff_Chat_V1_FeedEvent>

/// Chat through the real server over a real socket, on both backends.
@Suite("Chat over a socket")
struct ChatServiceSocketTests {
    @Test("two users chat live; one reconnects mid-conversation and misses nothing", arguments: Backend.allCases)
    func liveChatWithReconnect(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let chat = ChatClient(transport: connection)
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")

            // Bob follows his feed from the start; Ann chats on one Connect stream.
            let bobFeed = FeedLog()
            let firstFeed = Task {
                try await chat.subscribeFeed(.init(), metadata: bob.auth) { response in
                    for try await event in response.messages { bobFeed.append(event) }
                }
            }
            let annStream = StreamLog<Skiff_Chat_V1_ConnectResponse>()
            let (outgoing, send) = AsyncStream.makeStream(of: Skiff_Chat_V1_ConnectRequest.self)
            let annChat = Task {
                try await chat.connect(metadata: ann.auth) { writer in
                    try await writer.write(.with { $0.subscribe = .with { $0.fromLatest = true } })
                    for await request in outgoing { try await writer.write(request) }
                } onResponse: { response in
                    for try await message in response.messages { annStream.append(message) }
                }
            }
            defer { annChat.cancel() }
            for index in 1...2 {
                send.yield(
                    .with {
                        $0.sendMessage = .with {
                            $0.recipientID = bob.id
                            $0.text = "message \(index)"
                            $0.clientMessageID = "ann-\(index)"
                        }
                    }
                )
            }
            #expect(await bobFeed.wait(milliseconds: 5_000) { $0.count == 2 })
            #expect(bobFeed.all.map(\.sequence) == [1, 2])
            #expect(bobFeed.all.map(\.message.text) == ["message 1", "message 2"])
            #expect(bobFeed.all.allSatisfy { $0.message.senderID == ann.id })
            // Ann's own stream confirms each send with her client message id.
            #expect(await annStream.wait(milliseconds: 5_000) { $0.count == 2 })
            #expect(annStream.all.map(\.event.message.clientMessageID) == ["ann-1", "ann-2"])
            let conversationID = bobFeed.all[0].message.conversationID

            // Bob goes away; meanwhile Ann writes twice and Bob reads on another device.
            firstFeed.cancel()
            _ = await firstFeed.result
            let lastSeen = bobFeed.all.last?.sequence ?? 0
            for index in 3...4 {
                send.yield(
                    .with {
                        $0.sendMessage = .with {
                            $0.recipientID = bob.id
                            $0.text = "message \(index)"
                        }
                    }
                )
            }
            #expect(await annStream.wait(milliseconds: 5_000) { $0.count == 4 })
            let read = try await chat.markRead(
                .with {
                    $0.conversationID = conversationID
                    $0.sequence = 4
                },
                metadata: bob.auth
            )
            #expect(read.readUpTo == 4)
            // Ann sees the read receipt live.
            #expect(
                await annStream.wait(milliseconds: 5_000) { responses in
                    responses.contains(where: { $0.event.hasReadReceipt })
                }
            )
            #expect(annStream.all.last?.event.readReceipt.readUpTo == 4)

            // Bob reconnects from his last sequence: the missed events from storage, then live ones.
            let resumed = FeedLog()
            let secondFeed = Task {
                try await chat.subscribeFeed(.with { $0.afterSequence = lastSeen }, metadata: bob.auth) { response in
                    for try await event in response.messages { resumed.append(event) }
                }
            }
            defer { secondFeed.cancel() }
            #expect(await resumed.wait(milliseconds: 5_000) { $0.count == 3 })
            send.yield(
                .with {
                    $0.sendMessage = .with {
                        $0.recipientID = bob.id
                        $0.text = "message 5"
                    }
                }
            )
            #expect(await resumed.wait(milliseconds: 5_000) { $0.count == 4 })
            #expect(resumed.all.map(\.sequence) == [3, 4, 5, 6])
            #expect(resumed.all.map(\.message.text) == ["message 3", "message 4", "", "message 5"])
            #expect(resumed.all[2].readReceipt.readerID == bob.id)
            send.finish()

            // History and unread counts agree.
            let history = try await chat.listMessages(.with { $0.conversationID = conversationID }, metadata: bob.auth)
            #expect(history.messages.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(history.hasMore_p == false)
            let older = try await chat.listMessages(
                .with {
                    $0.conversationID = conversationID
                    $0.beforeSequence = 3
                    $0.pageSize = 1
                },
                metadata: bob.auth
            )
            #expect(older.messages.map(\.text) == ["message 2"])
            #expect(older.hasMore_p)
            let bobsList = try await chat.listConversations(.init(), metadata: bob.auth).conversations
            #expect(bobsList.count == 1)
            #expect(bobsList.first?.unreadCount == 1)
            #expect(bobsList.first?.otherUserID == ann.id)
            #expect(bobsList.first?.lastMessage.text == "message 5")
            #expect(bobsList.first?.otherReadUpTo == 5)
        }
    }

    @Test(
        "a bid notification arrives on the seller's feed; blocks hide users and refuse messages",
        arguments: Backend.allCases
    )
    func bidNotificationAndBlocks(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = Skiff_Listings_V1_Listings.Client(transport: connection)
            let bids = Skiff_Bids_V1_Bids.Client(transport: connection)
            let chat = ChatClient(transport: connection)
            let seller = try await signUpAndLogIn(
                accounts,
                mailer: app.mailer,
                email: "sel@campus.edu",
                name: "Sel Ler"
            )
            let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "buy@campus.edu", name: "Buy Er")
            let listing = try await listings.createListing(
                .with {
                    $0.listing.title = "Desk lamp"
                    $0.listing.priceCents = 1_500
                    $0.listing.category = .furniture
                    $0.listing.condition = .lightlyUsed
                    $0.listing.biddingEnabled = true
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            ).listing
            _ = try await listings.saveListing(.with { $0.listingID = listing.listingID }, metadata: buyer.auth)

            let sellerFeed = FeedLog()
            let feed = Task {
                try await chat.subscribeFeed(.init(), metadata: seller.auth) { response in
                    for try await event in response.messages { sellerFeed.append(event) }
                }
            }
            defer { feed.cancel() }
            let bid = try await bids.placeBid(
                .with {
                    $0.listingID = listing.listingID
                    $0.amountCents = 1_800
                },
                metadata: buyer.auth
            ).bid
            #expect(await sellerFeed.wait(milliseconds: 5_000) { events in events.contains(where: { $0.hasBid }) })
            let update = try #require(sellerFeed.all.first { $0.hasBid }).bid
            #expect(update.kind == .placed)
            #expect(update.bidID == bid.bidID)
            #expect(update.listingID == listing.listingID)
            #expect(update.amountCents == 1_800)

            // The server's housekeeping (which starts every run by publishing recent events to the feed
            // again) delivers nothing twice: the relays use the same idempotency keys as the services.
            let head = try #require(sellerFeed.all.last?.sequence)
            await app.housekeeping.runOnce()
            await expectStatus(.outOfRange) {
                // A duplicate would make head + 1 a valid resume point: the call would then wait for
                // more events and end with DEADLINE_EXCEEDED instead.
                _ = try await chat.subscribeFeed(
                    .with { $0.afterSequence = head + 1 },
                    metadata: seller.auth,
                    timeout: .seconds(5)
                ) { try await $0.messages.collect() }
            }
            #expect(sellerFeed.all.filter(\.hasBid).map(\.bid.bidID) == [bid.bidID])

            // The buyer saved the listing: a price change reaches their feed from storage.
            _ = try await listings.updateListing(
                .with {
                    $0.listing.listingID = listing.listingID
                    $0.listing.priceCents = 1_400
                    $0.updateMask.paths = ["price_cents"]
                },
                metadata: seller.auth
            )
            let buyerEvents = try await chat.subscribeFeed(.init(), metadata: buyer.auth) {
                response -> Skiff_Chat_V1_ListingUpdate? in
                for try await event in response.messages where event.hasListing { return event.listing }
                return nil
            }
            #expect(buyerEvents?.kind == .priceChanged)
            #expect(buyerEvents?.newPriceCents == 1_400 && buyerEvents?.oldPriceCents == 1_500)

            // Blocking: the blocked user's messages are refused, and they vanish from the blocker's search.
            let found = try await accounts.searchUsers(.with { $0.query = "Buy" }, metadata: seller.auth)
            #expect(found.profiles.map(\.userID) == [buyer.id])
            _ = try await chat.blockUser(.with { $0.userID = buyer.id }, metadata: seller.auth)
            _ = try await chat.blockUser(.with { $0.userID = buyer.id }, metadata: seller.auth)
            let hidden = try await accounts.searchUsers(.with { $0.query = "Buy" }, metadata: seller.auth)
            #expect(hidden.profiles.isEmpty)
            let refused = await expectStatus(.permissionDenied) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = seller.id
                        $0.text = "hello?"
                    },
                    metadata: buyer.auth
                )
            }
            #expect(refused?.message.contains("blocked") == true)
            let blocked = try await chat.listBlockedUsers(.init(), metadata: seller.auth)
            #expect(blocked.blockedUsers.map(\.userID) == [buyer.id])
            _ = try await chat.unblockUser(.with { $0.userID = buyer.id }, metadata: seller.auth)
            _ = try await chat.sendMessage(
                .with {
                    $0.recipientID = seller.id
                    $0.text = "hello again"
                },
                metadata: buyer.auth
            )
        }
    }

    @Test("every Chat RPC rejects bad input and strangers with exact codes", arguments: Backend.allCases)
    func invalidInputAndPermissions(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let chat = ChatClient(transport: connection)
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@campus.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@campus.edu", name: "Bob")
            let eve = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "eve@campus.edu", name: "Eve")
            let message = try await chat.sendMessage(
                .with {
                    $0.recipientID = bob.id
                    $0.text = "hi"
                },
                metadata: ann.auth
            ).message
            let id = message.conversationID

            // SendMessage
            await expectStatus(.unauthenticated) { _ = try await chat.sendMessage(.with { $0.recipientID = bob.id }) }
            await expectStatus(.unauthenticated) {
                _ = try await chat.sendMessage(
                    .with { $0.recipientID = bob.id },
                    metadata: ["authorization": "Bearer nope"]
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.sendMessage(.with { $0.text = "x" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = ann.id
                        $0.text = "me"
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.sendMessage(.with { $0.recipientID = bob.id }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = bob.id
                        $0.text = String(repeating: "a", count: 4_001)
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.notFound) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = "usr_nobody"
                        $0.text = "x"
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.notFound) {
                _ = try await chat.sendMessage(
                    .with {
                        $0.recipientID = bob.id
                        $0.text = "x"
                        $0.listingID = "lst_missing"
                    },
                    metadata: ann.auth
                )
            }

            // ListConversations, GetConversation, ListMessages, MarkRead
            await expectStatus(.unauthenticated) { _ = try await chat.listConversations(.init()) }
            await expectStatus(.invalidArgument) {
                _ = try await chat.listConversations(.with { $0.pageToken = "garbage" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.listConversations(.with { $0.pageSize = -1 }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) { _ = try await chat.getConversation(.init(), metadata: ann.auth) }
            await expectStatus(.notFound) {
                _ = try await chat.getConversation(.with { $0.conversationID = "cnv_missing" }, metadata: ann.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await chat.getConversation(.with { $0.conversationID = id }, metadata: eve.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await chat.listMessages(.with { $0.conversationID = id }, metadata: eve.auth)
            }
            await expectStatus(.notFound) {
                _ = try await chat.listMessages(.with { $0.conversationID = "cnv_missing" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.listMessages(
                    .with {
                        $0.conversationID = id
                        $0.beforeSequence = 2
                        $0.afterSequence = 1
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.listMessages(
                    .with {
                        $0.conversationID = id
                        $0.afterSequence = -1
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.markRead(.with { $0.conversationID = id }, metadata: bob.auth)
            }
            await expectStatus(.outOfRange) {
                _ = try await chat.markRead(
                    .with {
                        $0.conversationID = id
                        $0.sequence = 2
                    },
                    metadata: bob.auth
                )
            }
            await expectStatus(.permissionDenied) {
                _ = try await chat.markRead(
                    .with {
                        $0.conversationID = id
                        $0.sequence = 1
                    },
                    metadata: eve.auth
                )
            }
            await expectStatus(.notFound) {
                _ = try await chat.markRead(
                    .with {
                        $0.conversationID = "cnv_missing"
                        $0.sequence = 1
                    },
                    metadata: eve.auth
                )
            }

            // Blocks
            await expectStatus(.unauthenticated) { _ = try await chat.blockUser(.with { $0.userID = bob.id }) }
            await expectStatus(.invalidArgument) { _ = try await chat.blockUser(.init(), metadata: ann.auth) }
            await expectStatus(.invalidArgument) {
                _ = try await chat.blockUser(.with { $0.userID = ann.id }, metadata: ann.auth)
            }
            await expectStatus(.notFound) {
                _ = try await chat.blockUser(.with { $0.userID = "usr_nobody" }, metadata: ann.auth)
            }
            await expectStatus(.invalidArgument) { _ = try await chat.unblockUser(.init(), metadata: ann.auth) }
            await expectStatus(.invalidArgument) {
                _ = try await chat.listBlockedUsers(.with { $0.pageToken = "garbage" }, metadata: ann.auth)
            }

            // The feed
            await expectStatus(.unauthenticated) {
                _ = try await chat.subscribeFeed(.init()) { try await $0.messages.collect() }
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.subscribeFeed(.with { $0.afterSequence = -1 }, metadata: ann.auth) {
                    try await $0.messages.collect()
                }
            }
            await expectStatus(.outOfRange) {
                _ = try await chat.subscribeFeed(.with { $0.afterSequence = 99 }, metadata: ann.auth) {
                    try await $0.messages.collect()
                }
            }
            await expectStatus(.invalidArgument) {
                _ = try await chat.connect(metadata: ann.auth) { writer in
                    try await writer.write(.with { $0.markRead = .with { $0.conversationID = id } })
                } onResponse: {
                    try await $0.messages.collect()
                }
            }

            // Service-only calls
            await expectStatus(.permissionDenied) {
                _ = try await chat.openConversation(
                    .with {
                        $0.firstUserID = ann.id
                        $0.secondUserID = eve.id
                    },
                    metadata: ann.auth
                )
            }
            await expectStatus(.unauthenticated) { _ = try await chat.publishNotifications(.init()) }
            await expectStatus(.permissionDenied) {
                _ = try await chat.publishNotifications(.init(), metadata: ann.auth)
            }
        }
    }
}

extension Skiff_Chat_V1_FeedEvent {
    var hasBid: Bool {
        if case .bid = event { return true }
        return false
    }

    var hasListing: Bool {
        if case .listing = event { return true }
        return false
    }

    var hasReadReceipt: Bool {
        if case .readReceipt = event { return true }
        return false
    }
}
