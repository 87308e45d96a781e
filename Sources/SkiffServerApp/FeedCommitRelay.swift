public import ServiceLifecycle
public import SkiffChat

/// Hands this server's live feed subscribers the events other servers on the same database commit
/// (``SkiffChat/ChatService/followCommits(from:)``), until graceful shutdown.
public struct FeedCommitRelay: Service {
    let chat: ChatService
    let signals: any FeedCommitSignals

    public init(chat: ChatService, signals: any FeedCommitSignals) {
        self.chat = chat
        self.signals = signals
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown { await chat.followCommits(from: signals) }
    }
}
