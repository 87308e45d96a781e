public import NIOCore

/// Reassembles the messages of one direction of one stream from MESSAGE fragments (contract §2.3),
/// as a value with no I/O, shared by client and server.
///
/// The first fragment carries the COMPRESSED flag, MORE says another fragment follows. A message
/// larger than the receiver's MAX_MESSAGE_SIZE is refused as soon as its fragments say so, before
/// the rest is buffered.
public struct MessageAssembler: Sendable {
    /// What one fragment completed.
    public enum Outcome: Sendable {
        /// A whole message.
        case message(ByteBuffer)
        /// A fragment, buffered until the rest arrives.
        case incomplete
        /// The message is larger than `maxMessageSize`: the fragments so far are dropped.
        case tooLarge
        /// A message flagged COMPRESSED, which no negotiated encoding allows.
        case compressed
    }

    /// Bytes of the message being reassembled.
    public private(set) var partial: ByteBuffer?

    public init() {}

    /// Whether a message has begun and not ended.
    public var isMidMessage: Bool { partial != nil }

    /// Bytes buffered for the message being reassembled.
    public var bufferedBytes: Int { partial?.readableBytes ?? 0 }

    /// Adds one MESSAGE frame's payload.
    public mutating func append(_ frame: Frame, maxMessageSize: Int) -> Outcome {
        let more = frame.flags.contains(.more)
        if var message = partial {
            partial = nil
            guard message.readableBytes + frame.payload.readableBytes <= maxMessageSize else { return .tooLarge }
            var payload = frame.payload
            message.writeBuffer(&payload)
            guard !more else {
                partial = message
                return .incomplete
            }
            return .message(message)
        }
        guard !frame.flags.contains(.compressed) else { return .compressed }
        guard frame.payload.readableBytes <= maxMessageSize else { return .tooLarge }
        guard !more else {
            partial = frame.payload
            return .incomplete
        }
        return .message(frame.payload)
    }

    /// Drops the message being reassembled.
    public mutating func reset() { partial = nil }
}
