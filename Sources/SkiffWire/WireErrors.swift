/// A connection error: the peer broke the contract. Answered with GOAWAY(INTERNAL) and close.
public struct ProtocolViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// Debug text for the GOAWAY and the log.
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "protocol violation: \(reason)" }
}

/// Errors the frame decoder throws before buffering anything it should not.
public enum FrameDecodingError: Error, Hashable, Sendable {
    /// The peer's first bytes are not the Skiff preface.
    case badPreface
    /// A frame header announces a payload above the receiver's MAX_FRAME_SIZE.
    case frameTooLarge(length: UInt32, limit: UInt32)
}
