public import NIOCore

/// The 8-byte connection preface: `89 53 4B 46 01 00 00 00` ("\x89SKF", version 1).
public enum Preface {
    /// The preface bytes.
    public static let bytes: [UInt8] = [0x89, 0x53, 0x4B, 0x46, 0x01, 0x00, 0x00, 0x00]
}

/// A frame type. Unknown types are kept so the connection can decide what they mean.
public struct FrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let settings = FrameType(rawValue: 0x01)
    public static let headers = FrameType(rawValue: 0x02)
    public static let message = FrameType(rawValue: 0x03)
    public static let trailers = FrameType(rawValue: 0x04)
    public static let rstStream = FrameType(rawValue: 0x05)
    public static let windowUpdate = FrameType(rawValue: 0x06)
    public static let ping = FrameType(rawValue: 0x07)
    public static let goAway = FrameType(rawValue: 0x08)
    public static let halfClose = FrameType(rawValue: 0x09)

    /// Whether this version of the protocol defines the type.
    public var isKnown: Bool { rawValue >= 0x01 && rawValue <= 0x09 }

    public var description: String {
        switch rawValue {
        case 0x01: "SETTINGS"
        case 0x02: "HEADERS"
        case 0x03: "MESSAGE"
        case 0x04: "TRAILERS"
        case 0x05: "RST_STREAM"
        case 0x06: "WINDOW_UPDATE"
        case 0x07: "PING"
        case 0x08: "GOAWAY"
        case 0x09: "HALF_CLOSE"
        default: "UNKNOWN(0x\(String(rawValue, radix: 16)))"
        }
    }
}

/// Frame flags. The same bit means different things per frame type; unknown bits are ignored.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// SETTINGS and PING: this frame acknowledges the peer's.
    public static let ack = FrameFlags(rawValue: 0x01)
    /// HEADERS and MESSAGE (client): the client's side ends with this frame.
    public static let endStream = FrameFlags(rawValue: 0x01)
    /// MESSAGE: the message is compressed (read from the first fragment only).
    public static let compressed = FrameFlags(rawValue: 0x02)
    /// MESSAGE: more fragments of this message follow.
    public static let more = FrameFlags(rawValue: 0x04)
    /// RST_STREAM: the stream was refused before any processing; safe to retry.
    public static let refused = FrameFlags(rawValue: 0x01)
}

/// One frame: the 12-byte header's fields and the payload.
public struct Frame: Sendable, Hashable, CustomStringConvertible {
    /// The size of the fixed header.
    public static let headerSize = 12

    public var type: FrameType
    public var flags: FrameFlags
    public var streamID: UInt32
    public var payload: ByteBuffer

    public init(type: FrameType, flags: FrameFlags = [], streamID: UInt32, payload: ByteBuffer) {
        self.type = type
        self.flags = flags
        self.streamID = streamID
        self.payload = payload
    }

    public var description: String {
        "\(type) stream=\(streamID) flags=0x\(String(flags.rawValue, radix: 16)) length=\(payload.readableBytes)"
    }
}
