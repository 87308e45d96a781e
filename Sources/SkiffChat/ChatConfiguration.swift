public import SkiffDomain

/// Settings and limits of the Chat service.
public struct ChatConfiguration: Hashable, Sendable {
    /// The longest message text, in characters.
    public var maximumTextLength = 4_000
    /// The longest client message id, in characters.
    public var maximumClientMessageIDLength = 64
    /// The longest id (user, listing, image, conversation) accepted before looking it up.
    public var maximumIDLength = 128
    /// The most users one user may block.
    public var maximumBlockedUsers = 1_000
    /// The most undelivered events one feed subscriber may have before it is cut off.
    public var feedBufferSize = 1_024
    /// How long feed events are kept for replay (30 days).
    public var feedRetention: Duration = .seconds(30 * 24 * 3600)
    /// Messages per ListMessages page when the request says 0.
    public var defaultMessagePageSize = 50
    /// The largest ListMessages page.
    public var maximumMessagePageSize = 200
    /// The most notifications per PublishNotifications call.
    public var maximumNotificationsPerPublish = 1_000
    /// Events read from the store per replay batch.
    public var replayBatchSize = 200
    /// Messages one user may send (SendMessage and sends on Connect; a retry with the
    /// `client_message_id` of a sent message counts again); `nil` for no limit. Default: 300 per
    /// 5 minutes — a lively chat, not a script.
    public var sendMessageLimit: RateLimit? = RateLimit(300, per: .seconds(300))

    public init() {}

    /// The defaults.
    public static var defaults: ChatConfiguration { ChatConfiguration() }

    /// Multiplies every per-user rate limit by `factor`; 0 turns them all off (load tests).
    public mutating func scaleRateLimits(by factor: Double) {
        sendMessageLimit = sendMessageLimit?.scaled(by: factor)
    }
}

/// Who exists, as far as Chat needs to know: implemented over the Accounts and Listings clients.
public protocol ChatDirectory: Sendable {
    /// Whether an account with this id exists.
    func userExists(_ userID: String) async throws -> Bool
    /// Whether a listing with this id exists.
    func listingExists(_ listingID: String) async throws -> Bool
}
