import NIOCore
import SkiffCore
import SkiffWire

/// Small helpers shared by the SkiffWire tests.
enum Bytes {
    /// Parses hex such as `"00 0a ff"` or `"000aff"` (whitespace is ignored).
    static func hex(_ text: String) -> [UInt8] {
        let digits = text.unicodeScalars.filter { !$0.properties.isWhitespace }.map { Character($0) }
        precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let pair = String(digits[index...index + 1])
            bytes.append(UInt8(pair, radix: 16)!)
            index += 2
        }
        return bytes
    }

    /// Formats bytes as lowercase hex pairs separated by spaces.
    static func hexString<S: Sequence<UInt8>>(_ bytes: S) -> String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: " ")
    }

    /// The bytes a writer appends to an empty buffer.
    static func written(_ body: (inout ByteBuffer) -> Void) -> [UInt8] {
        var buffer = ByteBuffer()
        body(&buffer)
        return Array(buffer.readableBytesView)
    }

    /// A raw frame: 12-byte header with the given fields, then the payload.
    static func frame(
        length: UInt32? = nil,
        type: UInt8,
        flags: UInt8 = 0,
        reserved: UInt16 = 0,
        stream: UInt32,
        payload: [UInt8] = []
    ) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeMultipleIntegers(length ?? UInt32(payload.count), type, flags, reserved, stream)
        buffer.writeBytes(payload)
        return Array(buffer.readableBytesView)
    }

    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
    static func u32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
    }
}

extension Frame {
    /// A frame of a given type carrying raw payload bytes (for payload-parser tests).
    static func raw(_ type: FrameType, flags: FrameFlags = [], stream: UInt32 = 1, _ payload: [UInt8]) -> Frame {
        Frame(type: type, flags: flags, streamID: stream, payload: ByteBuffer(bytes: payload))
    }
}

/// Decodes every frame in `bytes` with a fresh decoder; fails if bytes are left over.
func decodeFrames(_ bytes: [UInt8], maxFrameSize: UInt32 = 65_536, expectPreface: Bool = false) throws -> [Frame] {
    var decoder = FrameDecoder(maxFrameSize: maxFrameSize, expectPreface: expectPreface)
    var buffer = ByteBuffer(bytes: bytes)
    var frames: [Frame] = []
    while let frame = try decoder.decodeFrame(&buffer) { frames.append(frame) }
    guard buffer.readableBytes == 0 else { throw LeftoverBytes(count: buffer.readableBytes) }
    return frames
}

struct LeftoverBytes: Error, Equatable { var count: Int }

/// A (key, value bytes, isBinary) view of metadata that is easy to compare.
func entries(_ metadata: Metadata) -> [String] {
    metadata.map { entry in
        switch entry.value {
        case .string(let s): "\(entry.key)=\(s)"
        case .binary(let b): "\(entry.key)=bin[\(Bytes.hexString(b))]"
        }
    }
}
