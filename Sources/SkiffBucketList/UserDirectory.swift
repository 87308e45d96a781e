/// What BucketList asks about users it does not store: whether an account exists.
///
/// The composition root implements it over Accounts (in one process, its store; apart, its typed client).
///
/// ## Implementation requirements
/// Answer for well-formed ids only (the service checks the shape first); throw only when the answer is
/// unknown (the call then fails rather than guessing).
public protocol UserDirectory: Sendable {
    /// Whether an account with this id exists.
    func userExists(id: String) async throws -> Bool
}

/// A directory that takes every well-formed id as an existing user: for a server run without Accounts and
/// for tests that do not look at it.
public struct AnyUserExists: UserDirectory {
    /// Creates the directory.
    public init() {}

    /// Always `true`.
    public func userExists(id: String) async throws -> Bool { true }
}
