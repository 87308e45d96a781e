public import NIOCore

/// Splits a gRPC request body into messages (the gRPC over HTTP/2 spec, "Length-Prefixed-Message":
/// a compressed flag byte, a 4-byte big-endian length, the message), as a value with no I/O.
///
/// DATA frames arrive in any sizes: a message may span several, and one frame may carry several
/// messages. Only whole messages leave the reader, and none larger than ``maxMessageSize`` is ever
/// buffered: its length prefix is enough to refuse it.
public struct GRPCMessageReader: Sendable {
    /// What ``next()`` found.
    public enum Next: Sendable, Equatable {
        /// A whole message.
        case message(ByteBuffer)
        /// The rest of a message has not arrived yet.
        case needMoreData
        /// A message's length prefix exceeds ``GRPCMessageReader/maxMessageSize``.
        case tooLarge(length: Int)
        /// A message with the compressed flag set (this server reads only `identity`).
        case compressed
    }

    /// The largest message accepted.
    public let maxMessageSize: Int
    private var buffer = ByteBuffer()

    /// A reader that refuses messages above `maxMessageSize` bytes.
    public init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    /// Bytes of an incomplete message held now (at most 5 + ``maxMessageSize``).
    public var bufferedBytes: Int { buffer.readableBytes }

    /// Adds the payload of a DATA frame.
    public mutating func append(_ bytes: ByteBuffer) {
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer.writeBuffer(&bytes)
        }
    }

    /// The next whole message, if one is complete.
    public mutating func next() -> Next {
        guard buffer.readableBytes >= 5,
            let flag = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
            let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt32.self)
        else { return .needMoreData }
        guard flag & 0x01 == 0 else { return .compressed }
        guard Int(length) <= maxMessageSize else { return .tooLarge(length: Int(length)) }
        guard buffer.readableBytes >= 5 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 5)
        let message = buffer.readSlice(length: Int(length))!
        if buffer.readableBytes == 0 { buffer.clear() }
        return .message(message)
    }

    /// Whether the request ended in the middle of a message.
    public var isMidMessage: Bool { buffer.readableBytes > 0 }
}

extension ByteBuffer {
    /// Writes one gRPC Length-Prefixed-Message header (not compressed) for a message of `length` bytes.
    @inlinable
    public mutating func writeGRPCMessageHeader(length: Int) {
        writeInteger(UInt8(0))
        writeInteger(UInt32(length))
    }
}
