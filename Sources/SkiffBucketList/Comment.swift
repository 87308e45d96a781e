public import Foundation

/// A comment on an activity.
public struct Comment: Hashable, Sendable {
    /// The opaque id (`cmt_…`).
    public var id: String
    /// The activity it is about.
    public var activityID: String
    /// The user who wrote it.
    public var authorID: String
    /// 1–1000 characters, trimmed.
    public var text: String
    /// When it was written.
    public var createdAt: Date

    /// Creates a comment.
    public init(id: String, activityID: String, authorID: String, text: String, createdAt: Date) {
        self.id = id
        self.activityID = activityID
        self.authorID = authorID
        self.text = text
        self.createdAt = createdAt
    }
}
