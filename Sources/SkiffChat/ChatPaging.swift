import Foundation
public import SkiffDomain

/// Where a page of conversations ends: most recent activity first, then by id.
public struct ConversationCursor: Codable, Comparable, Hashable, Sendable {
    static let kind = "chat.conversations"
    /// Last activity, milliseconds since 1970.
    public var t: Int64
    public var id: String

    public init(_ conversation: Conversation) {
        self.t = conversation.lastActivityAt.millisecondsSince1970
        self.id = conversation.id
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.t != rhs.t ? lhs.t > rhs.t : lhs.id < rhs.id
    }

    /// The page token that resumes after this cursor.
    public var token: String { PageToken.encode(self, kind: Self.kind) }

    /// Decodes a page token of ``ChatStore/conversations(userID:page:)``.
    public static func decode(_ token: String) throws(DomainError) -> Self {
        try PageToken.decode(token, kind: kind)
    }
}

/// Where a page of blocked users ends: most recent first, then by user id.
public struct BlockCursor: Codable, Comparable, Hashable, Sendable {
    static let kind = "chat.blocks"
    /// Blocked at, milliseconds since 1970.
    public var t: Int64
    public var id: String

    public init(_ user: BlockedUser) {
        self.t = user.blockedAt.millisecondsSince1970
        self.id = user.userID
    }

    /// The user, for the in-memory store.
    var user: BlockedUser { BlockedUser(userID: id, blockedAt: Date(millisecondsSince1970: t)) }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.t != rhs.t ? lhs.t > rhs.t : lhs.id < rhs.id
    }

    /// The page token that resumes after this cursor.
    public var token: String { PageToken.encode(self, kind: Self.kind) }

    /// Decodes a page token of ``ChatStore/blockedUsers(blockerID:page:)``.
    public static func decode(_ token: String) throws(DomainError) -> Self {
        try PageToken.decode(token, kind: kind)
    }
}
