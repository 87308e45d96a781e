public import SkiffDomain

/// The rules of read marks and blocks, decided here once for every store: a store loads what a rule
/// needs, lets it decide, and saves what it returns.
public enum ChatRules {
    /// What a read mark comes to.
    public enum ReadMark: Hashable, Sendable {
        /// The mark does not move (it only moves forward): the reader's current mark.
        case unchanged(readUpTo: Int64)
        /// The conversation with the mark moved, and the receipt to put on `feeds` (the reader's,
        /// then the other participant's), in that order.
        case moved(Conversation, ReadReceipt, feeds: [String])
    }

    /// `userID` marks `conversation` (as loaded: `nil` when there is none) read up to `sequence`.
    ///
    /// - Throws: ``ChatStoreError/conversationNotFound``, ``ChatStoreError/notParticipant``, or
    ///   ``ChatStoreError/beyondLastMessage(_:)`` when `sequence` is past the last message.
    public static func markRead(
        _ conversation: Conversation?,
        by userID: String,
        upTo sequence: Int64
    ) throws(DomainError) -> ReadMark {
        guard var conversation else { throw ChatStoreError.conversationNotFound }
        guard conversation.includes(userID) else { throw ChatStoreError.notParticipant }
        guard sequence <= conversation.lastSequence else {
            throw ChatStoreError.beyondLastMessage(conversation.lastSequence)
        }
        let current = conversation.readUpTo(userID)
        guard sequence > current else { return .unchanged(readUpTo: current) }
        conversation.setReadUpTo(sequence, for: userID)
        let receipt = ReadReceipt(conversationID: conversation.id, readerID: userID, readUpTo: sequence)
        return .moved(conversation, receipt, feeds: [userID, conversation.otherUser(than: userID)])
    }

    /// Whether a block is to be recorded: `false` when the user is blocked already (nothing changes).
    ///
    /// - Throws: ``ChatStoreError/tooManyBlocks(_:)`` when the blocker already blocks `limit` users.
    public static func block(alreadyBlocked: Bool, blocksHeld: Int, limit: Int) throws(DomainError) -> Bool {
        guard !alreadyBlocked else { return false }
        guard blocksHeld < limit else { throw ChatStoreError.tooManyBlocks(limit) }
        return true
    }
}
