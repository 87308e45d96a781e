public import NIOCore
public import SkiffCore

/// Writes frames into a `ByteBuffer`. Each function appends one whole frame.
extension ByteBuffer {
    /// Appends the 12-byte frame header.
    @inlinable
    public mutating func writeFrameHeader(length: Int, type: FrameType, flags: FrameFlags = [], streamID: UInt32) {
        writeMultipleIntegers(UInt32(length), type.rawValue, flags.rawValue, UInt16(0), streamID)
    }

    /// Appends a frame with the given payload bytes.
    @inlinable
    public mutating func writeFrame(_ type: FrameType, flags: FrameFlags = [], streamID: UInt32, payload: ByteBuffer) {
        writeFrameHeader(length: payload.readableBytes, type: type, flags: flags, streamID: streamID)
        writeImmutableBuffer(payload)
    }

    /// Appends a frame.
    @inlinable
    public mutating func writeFrame(_ frame: Frame) {
        writeFrame(frame.type, flags: frame.flags, streamID: frame.streamID, payload: frame.payload)
    }

    /// Appends the preface.
    public mutating func writePreface() { writeBytes(Preface.bytes) }

    /// Appends a SETTINGS frame carrying the given pairs.
    public mutating func writeSettings(_ pairs: [(SettingsID, UInt32)]) {
        writeFrameHeader(length: pairs.count * 6, type: .settings, streamID: 0)
        for (id, value) in pairs { writeMultipleIntegers(id.rawValue, value) }
    }

    /// Appends an empty SETTINGS frame with ACK.
    public mutating func writeSettingsAck() {
        writeFrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
    }

    /// Appends a HEADERS frame. A server passes an empty path.
    public mutating func writeHeaders(
        streamID: UInt32,
        path: String = "",
        metadata: Metadata,
        flags: FrameFlags = []
    ) {
        let pathLength = path.utf8.count
        writeFrameHeader(
            length: 2 + pathLength + metadata.encodedSize,
            type: .headers,
            flags: flags,
            streamID: streamID
        )
        writeInteger(UInt16(pathLength))
        writeString(path)
        writeMetadataBlock(metadata)
    }

    /// Appends a TRAILERS frame.
    public mutating func writeTrailers(streamID: UInt32, status: StatusCode, message: String, metadata: Metadata) {
        // The status message is limited by its u16 length: cut it at a character boundary.
        var text = Array(message.utf8)
        if text.count > Int(UInt16.max) {
            var end = Int(UInt16.max)
            while end > 0 && text[end] & 0xC0 == 0x80 { end -= 1 }
            text.removeSubrange(end...)
        }
        writeFrameHeader(
            length: 6 + text.count + metadata.encodedSize,
            type: .trailers,
            streamID: streamID
        )
        writeMultipleIntegers(status.rawValue, UInt16(text.count))
        writeBytes(text)
        writeMetadataBlock(metadata)
    }

    /// Appends a RST_STREAM frame.
    public mutating func writeRSTStream(
        streamID: UInt32,
        status: StatusCode,
        reason: String = "",
        refused: Bool = false
    ) {
        writeFrameHeader(
            length: 4 + reason.utf8.count,
            type: .rstStream,
            flags: refused ? .refused : [],
            streamID: streamID
        )
        writeInteger(status.rawValue)
        writeString(reason)
    }

    /// Appends a WINDOW_UPDATE frame.
    public mutating func writeWindowUpdate(streamID: UInt32, increment: UInt32) {
        writeFrameHeader(length: 4, type: .windowUpdate, streamID: streamID)
        writeInteger(increment)
    }

    /// Appends a PING frame.
    public mutating func writePing(_ data: UInt64, ack: Bool) {
        writeFrameHeader(length: 8, type: .ping, flags: ack ? .ack : [], streamID: 0)
        writeInteger(data)
    }

    /// Appends a GOAWAY frame.
    public mutating func writeGoAway(lastStreamID: UInt32, status: StatusCode, debug: String = "") {
        writeFrameHeader(length: 8 + debug.utf8.count, type: .goAway, streamID: 0)
        writeMultipleIntegers(lastStreamID, status.rawValue)
        writeString(debug)
    }

    /// Appends a HALF_CLOSE frame.
    public mutating func writeHalfClose(streamID: UInt32) {
        writeFrameHeader(length: 0, type: .halfClose, streamID: streamID)
    }

    /// Appends one MESSAGE frame (a whole message or one fragment).
    @inlinable
    public mutating func writeMessageFrame(streamID: UInt32, flags: FrameFlags, bytes: ByteBuffer) {
        writeFrame(.message, flags: flags, streamID: streamID, payload: bytes)
    }

    /// Appends a metadata block: `u16 count`, then per entry `u16 key_len, key, u32 value_len, value`.
    public mutating func writeMetadataBlock(_ metadata: Metadata) {
        writeInteger(UInt16(metadata.count))
        for entry in metadata {
            writeInteger(UInt16(entry.key.utf8.count))
            writeString(entry.key)
            switch entry.value {
            case .string(let s):
                writeInteger(UInt32(s.utf8.count))
                writeString(s)
            case .binary(let b):
                writeInteger(UInt32(b.count))
                writeBytes(b)
            }
        }
    }
}

extension Metadata {
    /// The size of this metadata as an encoded block, in bytes (what MAX_HEADER_LIST_SIZE limits).
    public var encodedSize: Int {
        var size = 2
        for entry in self {
            size += 6 + entry.key.utf8.count
            switch entry.value {
            case .string(let s): size += s.utf8.count
            case .binary(let b): size += b.count
            }
        }
        return size
    }

    /// Checks that every key and value may be sent: keys lowercase `[0-9a-z_.-]` and shorter than
    /// 64 KiB, values under keys that do not end in `-bin` printable ASCII, at most 65,535 entries.
    ///
    /// - Returns: a message naming the first bad entry, or `nil` when all are valid.
    public func validationFailure() -> String? {
        guard count <= Int(UInt16.max) else { return "metadata has \(count) entries; at most 65535 fit a block" }
        for entry in self {
            let key = entry.key.utf8
            guard Metadata.isValidKey(key), key.count <= Int(UInt16.max) else {
                return "metadata key \"\(entry.key)\" is not lowercase [0-9a-z_.-] (or is 64 KiB or longer)"
            }
            guard !Metadata.isBinaryKey(key) else { continue }
            let printable: Bool
            switch entry.value {
            case .string(let s): printable = Metadata.isValidTextValue(s.utf8)
            case .binary(let b): printable = Metadata.isValidTextValue(b)
            }
            guard printable else {
                return "metadata value for \"\(entry.key)\" is not printable ASCII; use a -bin key for binary values"
            }
        }
        return nil
    }
}
