public import NIOCore

/// Splits inbound bytes into ``Frame``s, checking the preface first if asked to.
///
/// The payload length is compared with ``maxFrameSize`` as soon as the 12-byte header is in,
/// before any payload is buffered; a larger frame throws ``FrameDecodingError/frameTooLarge(length:limit:)``.
/// A wrong preface byte throws ``FrameDecodingError/badPreface`` as soon as it arrives.
public struct FrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = Frame

    /// The largest payload accepted (the receiver's advertised MAX_FRAME_SIZE).
    public var maxFrameSize: UInt32
    private var prefaceBytesSeen: Int

    /// Creates a decoder.
    /// - Parameters:
    ///   - maxFrameSize: the largest payload accepted.
    ///   - expectPreface: whether the stream starts with the 8-byte preface.
    public init(maxFrameSize: UInt32, expectPreface: Bool) {
        self.maxFrameSize = maxFrameSize
        self.prefaceBytesSeen = expectPreface ? 0 : Preface.bytes.count
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try decodeFrame(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }

    /// Decodes one frame from the front of `buffer`, or returns `nil` when more bytes are needed.
    public mutating func decodeFrame(_ buffer: inout ByteBuffer) throws -> Frame? {
        while prefaceBytesSeen < Preface.bytes.count {
            guard let byte = buffer.readInteger(as: UInt8.self) else { return nil }
            guard byte == Preface.bytes[prefaceBytesSeen] else { throw FrameDecodingError.badPreface }
            prefaceBytesSeen += 1
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length <= maxFrameSize else {
            throw FrameDecodingError.frameTooLarge(length: length, limit: maxFrameSize)
        }
        guard buffer.readableBytes >= Frame.headerSize + Int(length) else { return nil }
        let base = buffer.readerIndex
        let type = buffer.getInteger(at: base + 4, as: UInt8.self)!
        let flags = buffer.getInteger(at: base + 5, as: UInt8.self)!
        let streamID = buffer.getInteger(at: base + 8, as: UInt32.self)!
        buffer.moveReaderIndex(forwardBy: Frame.headerSize)
        let payload = buffer.readSlice(length: Int(length))!
        return Frame(
            type: FrameType(rawValue: type),
            flags: FrameFlags(rawValue: flags),
            streamID: streamID,
            payload: payload
        )
    }
}
