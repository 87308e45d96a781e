public import SkiffDomain

/// Delivers listing changes to live watchers in this process (WatchSavedListings).
public typealias ChangeBroadcaster = LiveBroadcaster<ListingChangeEvent>

/// One watcher's bounded queue of changes.
public typealias ChangeWatcher = LiveSubscription<ListingChangeEvent>

extension LiveSubscription where Event == ListingChangeEvent {
    /// What a watcher that fell too far behind gets.
    public static var fellBehind: DomainError {
        DomainError(
            .aborted,
            "This watch fell too far behind: watch again with the resume_token of the last change you received."
        )
    }

    /// What a watch gets when its connection drains (the server restarts).
    public static var drained: DomainError {
        DomainError(
            .unavailable,
            "The server is restarting: watch again on a new connection with the resume_token of the last change you received."
        )
    }
}

extension LiveBroadcaster where Event == ListingChangeEvent {
    /// Registers a watcher for a user's saved listings; pair it with ``unsubscribe(_:)``.
    public func subscribe(userID: String) -> ChangeWatcher {
        subscribe(userID: userID, fellBehind: ChangeWatcher.fellBehind)
    }
}
