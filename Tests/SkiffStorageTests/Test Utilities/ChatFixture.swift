import Foundation
import SkiffChat
import SkiffDomain
import SkiffFeed
import SkiffPostgres
import SkiffSQLite

/// Runs `body` with a fresh, empty chat store of the given kind.
func withChatStore(_ kind: StoreKind, _ body: (any ChatStore) async throws -> Void) async throws {
    try await withStore(
        kind,
        memory: { InMemoryChatStore() },
        sqlite: { $0.chatStore() },
        postgres: { $0.chatStore() },
        body
    )
}

extension ChatStore {
    /// Sends `text` from one user to another at `t0 + seconds`.
    @discardableResult
    func send(
        _ from: String,
        _ to: String,
        _ text: String,
        listing: String? = nil,
        clientID: String? = nil,
        at seconds: Double = 0
    ) async throws -> SentMessage {
        try await sendMessage(
            MessageDraft(senderID: from, recipientID: to, text: text, listingID: listing, clientMessageID: clientID),
            conversationID: EntityID.make(.conversation),
            now: Fixture.date(plusSeconds: seconds)
        )
    }
}

enum ChatFixture {
    static func bidNotification(_ user: String, key: String, amount: Int64 = 1_000) -> FeedNotification {
        FeedNotification(
            userID: user,
            idempotencyKey: key,
            kind: .bid(.init(kind: "placed", bidID: "bid_\(key)", listingID: "lst_1", amountCents: amount)),
            occurredAt: Fixture.t0
        )
    }
}
