import Foundation
import SkiffChat
import SkiffDomain
import SkiffFeed
import SkiffPostgres
import SkiffTesting
import Testing

/// The PostgreSQL chat store as several servers use it: each "server" is a ``PostgresStorage`` of its
/// own (its own pool) on one database, so nothing but PostgreSQL settles their races.
@Suite("ChatStore on PostgreSQL: several servers on one database")
struct ChatStorePostgresTests {
    /// Runs `body` with `count` stores on one new database, each opened as a separate server would.
    private func withServers(_ count: Int, _ body: ([PostgresChatStore]) async throws -> Void) async throws {
        try await TestPostgres.withStorages(count) { storages, _ in try await body(storages.map { $0.chatStore() }) }
    }

    /// Runs `operation` for each index concurrently; returns the results in index order.
    private func race<T: Sendable>(
        _ count: Int,
        _ operation: @escaping @Sendable (Int) async throws -> T
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await operation(index)) }
            }
            var results: [(Int, T)] = []
            for try await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    @Test("Three servers send, mark read and notify at once: message and feed numbers are gapless and unique")
    func gaplessAcrossServers() async throws {
        try await withServers(3) { servers in
            let rounds = 50
            // Each round: a message each way, a read mark by Bob, and a notification to Bob; the first
            // sends race to create the conversation.
            let outcomes = try await race(rounds * 4) { index -> [FeedEvent] in
                let server = servers[index % servers.count]
                let round = index / 4
                switch index % 4 {
                case 0: return try await server.send("usr_ann", "usr_bob", "a\(round)").events
                case 1: return try await server.send("usr_bob", "usr_ann", "b\(round)").events
                case 2:
                    let page = try await server.conversations(userID: "usr_bob", page: .first)
                    guard let summary = page.items.first else { return [] }
                    return try await server.markRead(
                        conversationID: summary.conversation.id,
                        userID: "usr_bob",
                        upTo: summary.conversation.lastSequence,
                        now: Fixture.t0
                    ).events
                default:
                    return try await server.appendNotifications(
                        [ChatFixture.bidNotification("usr_bob", key: "n\(round)")],
                        now: Fixture.t0
                    )
                }
            }
            let returned = outcomes.flatMap { $0 }
            for server in servers {
                let conversations = try await server.conversations(userID: "usr_ann", page: .first)
                #expect(conversations.items.count == 1)
                let id = try #require(conversations.items.first?.conversation.id)
                let messages = try await server.messages(conversationID: id, before: nil, after: nil, limit: 500)
                #expect(messages.map(\.sequence) == (1...Int64(2 * rounds)).map { $0 })
                for user in ["usr_ann", "usr_bob"] {
                    let feed = try await server.feedEvents(userID: user, after: 0, limit: 1_000)
                    #expect(feed.map(\.sequence) == (1...Int64(feed.count)).map { $0 })
                    #expect(try await server.lastFeedSequence(userID: user) == Int64(feed.count))
                    // What the calls returned is exactly what the feed holds.
                    let mine = returned.filter { $0.userID == user }.sorted { $0.sequence < $1.sequence }
                    #expect(mine == feed)
                }
            }
        }
    }

    @Test("Three servers open one pair's conversation at once: all get the same one")
    func openConversationAcrossServers() async throws {
        try await withServers(3) { servers in
            let opened = try await race(24) { index in
                try await servers[index % servers.count].openConversation(
                    between: index.isMultiple(of: 2) ? "usr_ann" : "usr_bob",
                    and: index.isMultiple(of: 2) ? "usr_bob" : "usr_ann",
                    listingID: "lst_lamp",
                    newID: "cnv_\(index)",
                    now: Fixture.t0
                )
            }
            #expect(Set(opened.map(\.id)).count == 1)
            let listed = try await servers[1].conversations(userID: "usr_bob", page: .first)
            #expect(listed.items.map(\.conversation.id) == [opened[0].id])
        }
    }

    @Test("Three servers publish one notification at once: it is recorded once")
    func notificationOnceAcrossServers() async throws {
        try await withServers(3) { servers in
            let recorded = try await race(12) { index in
                try await servers[index % servers.count].appendNotifications(
                    [ChatFixture.bidNotification("usr_bob", key: "bids:1")],
                    now: Fixture.t0
                )
            }
            #expect(recorded.flatMap { $0 }.map(\.sequence) == [1])
            #expect(try await servers[2].feedEvents(userID: "usr_bob", after: 0, limit: 10).count == 1)
        }
    }

    @Test("Three servers block ten users at once under a limit of three: three blocks, the rest refused")
    func blockLimitAcrossServers() async throws {
        try await withServers(3) { servers in
            let outcomes = try await race(10) { index -> DomainError? in
                do {
                    try await servers[index % servers.count].block(
                        blockerID: "usr_ann",
                        blockedID: "usr_\(index)",
                        now: Fixture.date(plusSeconds: Double(index)),
                        limit: 3
                    )
                    return nil
                } catch let error as DomainError {
                    return error
                }
            }
            #expect(outcomes.filter { $0 == nil }.count == 3)
            #expect(outcomes.compactMap { $0 }.allSatisfy { $0 == ChatStoreError.tooManyBlocks(3) })
            let blocked = try await servers[0].blockedUsers(blockerID: "usr_ann", page: .first)
            #expect(blocked.items.count == 3)
        }
    }
}
