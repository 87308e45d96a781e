public import NIOCore
public import SkiffCore
public import SwiftProtobuf

/// Lets swift-protobuf read from and write into a `ByteBuffer` without intermediate copies.
public struct ProtobufByteBuffer: SwiftProtobufContiguousBytes {
    public var buffer: ByteBuffer

    public init(_ buffer: ByteBuffer) { self.buffer = buffer }

    public init(repeating: UInt8, count: Int) {
        buffer = ByteBufferAllocator().buffer(repeating: repeating, count: count)
    }

    public init<S: Sequence>(_ sequence: S) where S.Element == UInt8 {
        buffer = ByteBuffer(bytes: sequence)
    }

    public var count: Int { buffer.readableBytes }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeReadableBytes(body)
    }

    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeMutableReadableBytes(body)
    }
}

extension SwiftProtobuf.Message {
    /// Decodes a message from the readable bytes of a buffer, without copying them.
    @inlinable
    public init(buffer: ByteBuffer) throws {
        try self.init(serializedBytes: ProtobufByteBuffer(buffer))
    }

    /// Decodes a request message as every server transport does: bytes that are not one are the
    /// client's error, `INVALID_ARGUMENT`.
    public init(request buffer: ByteBuffer) throws(RPCError) {
        do {
            try self.init(buffer: buffer)
        } catch {
            throw RPCError(
                code: .invalidArgument,
                message: "The request message does not decode as \(Self.protoMessageName): \(error)"
            )
        }
    }

    /// Serialises the message into a new buffer.
    @inlinable
    public func serializedBuffer() throws -> ByteBuffer {
        let bytes: ProtobufByteBuffer = try serializedBytes()
        return bytes.buffer
    }
}
