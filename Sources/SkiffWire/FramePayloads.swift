import NIOCore
public import SkiffCore

/// A metadata block as read from a frame.
public struct DecodedMetadata: Sendable {
    /// The entries, in order.
    public var metadata: Metadata
    /// The encoded size of the whole block, in bytes.
    public var encodedSize: Int
    /// Why an entry is not acceptable (a bad key or a non-printable text value): the stream fails
    /// with INTERNAL. `nil` when every entry is fine.
    public var invalidEntry: String?
}

/// Parses frame payloads. Each function consumes the whole payload and throws
/// ``ProtocolViolation`` when it does not parse as its type says.
public enum FramePayload {
    /// SETTINGS: `u16 id, u32 value` pairs.
    public static func settings(_ frame: Frame) throws(ProtocolViolation) -> [(UInt16, UInt32)] {
        var payload = frame.payload
        if frame.flags.contains(.ack) {
            guard payload.readableBytes == 0 else { throw ProtocolViolation("SETTINGS ACK with a payload") }
            return []
        }
        guard payload.readableBytes % 6 == 0 else {
            throw ProtocolViolation("SETTINGS payload of \(payload.readableBytes) bytes is not a multiple of 6")
        }
        var pairs: [(UInt16, UInt32)] = []
        pairs.reserveCapacity(payload.readableBytes / 6)
        while let (id, value) = payload.readMultipleIntegers(as: (UInt16, UInt32).self) { pairs.append((id, value)) }
        return pairs
    }

    /// HEADERS: `u16 path_len, path`, then a metadata block.
    public static func headers(_ frame: Frame) throws(ProtocolViolation) -> (path: String, metadata: DecodedMetadata) {
        var payload = frame.payload
        guard let pathLength = payload.readInteger(as: UInt16.self),
            let path = payload.readString(length: Int(pathLength))
        else { throw ProtocolViolation("HEADERS path runs past the frame") }
        let metadata = try metadataBlock(&payload, frame: "HEADERS")
        return (path, metadata)
    }

    /// TRAILERS: `u32 status, u16 msg_len, msg`, then a metadata block.
    public static func trailers(
        _ frame: Frame
    ) throws(ProtocolViolation) -> (status: StatusCode, message: String, metadata: DecodedMetadata) {
        var payload = frame.payload
        guard let (status, messageLength) = payload.readMultipleIntegers(as: (UInt32, UInt16).self),
            let message = payload.readString(length: Int(messageLength))
        else { throw ProtocolViolation("TRAILERS status message runs past the frame") }
        let metadata = try metadataBlock(&payload, frame: "TRAILERS")
        return (StatusCode(rawValue: status), message, metadata)
    }

    /// RST_STREAM: `u32 status`, then an optional UTF-8 reason.
    public static func rstStream(_ frame: Frame) throws(ProtocolViolation) -> (status: StatusCode, reason: String) {
        var payload = frame.payload
        guard let status = payload.readInteger(as: UInt32.self) else {
            throw ProtocolViolation("RST_STREAM payload shorter than 4 bytes")
        }
        return (StatusCode(rawValue: status), payload.readString(length: payload.readableBytes) ?? "")
    }

    /// WINDOW_UPDATE: `u32 increment`, 1 … 2^31−1.
    public static func windowUpdate(_ frame: Frame) throws(ProtocolViolation) -> UInt32 {
        var payload = frame.payload
        guard payload.readableBytes == 4, let increment = payload.readInteger(as: UInt32.self) else {
            throw ProtocolViolation("WINDOW_UPDATE payload is not 4 bytes")
        }
        guard increment >= 1, increment <= UInt32(Int32.max) else {
            throw ProtocolViolation("WINDOW_UPDATE increment \(increment) is outside 1…2^31-1")
        }
        return increment
    }

    /// PING: 8 opaque bytes.
    public static func ping(_ frame: Frame) throws(ProtocolViolation) -> UInt64 {
        var payload = frame.payload
        guard payload.readableBytes == 8, let data = payload.readInteger(as: UInt64.self) else {
            throw ProtocolViolation("PING payload is not 8 bytes")
        }
        return data
    }

    /// GOAWAY: `u32 last_stream_id, u32 status`, then debug text.
    public static func goAway(
        _ frame: Frame
    ) throws(ProtocolViolation) -> (lastStreamID: UInt32, status: StatusCode, debug: String) {
        var payload = frame.payload
        guard let (last, status) = payload.readMultipleIntegers(as: (UInt32, UInt32).self) else {
            throw ProtocolViolation("GOAWAY payload shorter than 8 bytes")
        }
        return (last, StatusCode(rawValue: status), payload.readString(length: payload.readableBytes) ?? "")
    }

    /// HALF_CLOSE: empty.
    public static func halfClose(_ frame: Frame) throws(ProtocolViolation) {
        guard frame.payload.readableBytes == 0 else { throw ProtocolViolation("HALF_CLOSE with a payload") }
    }

    /// A metadata block that must end exactly at the end of the payload.
    static func metadataBlock(_ payload: inout ByteBuffer, frame: String) throws(ProtocolViolation) -> DecodedMetadata {
        let start = payload.readerIndex
        guard let count = payload.readInteger(as: UInt16.self) else {
            throw ProtocolViolation("\(frame) metadata block runs past the frame")
        }
        var entries: [Metadata.Entry] = []
        entries.reserveCapacity(Int(count))
        var invalid: String?
        for _ in 0..<count {
            guard let keyLength = payload.readInteger(as: UInt16.self),
                let keyView = payload.readSlice(length: Int(keyLength)),
                let valueLength = payload.readInteger(as: UInt32.self),
                valueLength <= payload.readableBytes,
                let valueView = payload.readSlice(length: Int(valueLength))
            else { throw ProtocolViolation("\(frame) metadata block runs past the frame") }
            let keyBytes = keyView.readableBytesView
            let key = String(decoding: keyBytes, as: UTF8.self)
            if invalid == nil, !Metadata.isValidKey(keyBytes) {
                invalid = "metadata key \"\(key)\" is not lowercase [0-9a-z_.-]"
            }
            let valueBytes = valueView.readableBytesView
            if Metadata.isBinaryKey(keyBytes) {
                entries.append(Metadata.Entry(key: key, value: .binary(Array(valueBytes))))
            } else {
                if invalid == nil, !Metadata.isValidTextValue(valueBytes) {
                    invalid = "metadata value for \"\(key)\" is not printable ASCII"
                }
                entries.append(Metadata.Entry(key: key, value: .string(String(decoding: valueBytes, as: UTF8.self))))
            }
        }
        guard payload.readableBytes == 0 else {
            throw ProtocolViolation("\(frame) has \(payload.readableBytes) bytes after its metadata block")
        }
        return DecodedMetadata(
            metadata: Metadata(entries),
            encodedSize: payload.readerIndex - start,
            invalidEntry: invalid
        )
    }
}
