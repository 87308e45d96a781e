/// Protobuf binary wire-format primitives.
struct WireWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func tag(_ number: Int32, _ wireType: UInt8) { varint(UInt64(UInt32(number)) << 3 | UInt64(wireType)) }

    mutating func fixed32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func lengthDelimited(_ payload: [UInt8]) {
        varint(UInt64(payload.count))
        bytes += payload
    }

    /// Writes a scalar's payload (no tag).
    mutating func scalar(_ value: WireScalar) {
        switch value {
        case .varint(let v): varint(v)
        case .fixed32(let v): fixed32(v)
        case .fixed64(let v): fixed64(v)
        case .bytes(let b): lengthDelimited(b)
        }
    }
}

/// A scalar's wire representation.
enum WireScalar: Equatable {
    case varint(UInt64)
    case fixed32(UInt32)
    case fixed64(UInt64)
    case bytes([UInt8])

    var wireType: UInt8 {
        switch self {
        case .varint: 0
        case .fixed64: 1
        case .bytes: 2
        case .fixed32: 5
        }
    }

    var isZero: Bool {
        switch self {
        case .varint(let v): v == 0
        case .fixed32(let v): v == 0
        case .fixed64(let v): v == 0
        case .bytes(let b): b.isEmpty
        }
    }
}

struct WireReader {
    let bytes: [UInt8]
    var index: Int
    let end: Int

    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.index = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    var isAtEnd: Bool { index >= end }

    static let truncated = TranscodingError("Malformed protobuf message: truncated.")

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while index < end, shift < 64 {
            let byte = bytes[index]
            index += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        throw Self.truncated
    }

    mutating func fixed32() throws -> UInt32 {
        guard index + 4 <= end else { throw Self.truncated }
        var value: UInt32 = 0
        for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << UInt32(offset * 8) }
        index += 4
        return value
    }

    mutating func fixed64() throws -> UInt64 {
        guard index + 8 <= end else { throw Self.truncated }
        var value: UInt64 = 0
        for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << UInt64(offset * 8) }
        index += 8
        return value
    }

    /// The range of a length-delimited payload, consumed.
    mutating func lengthDelimited() throws -> Range<Int> {
        let length = Int(try varint())
        guard length >= 0, index + length <= end else { throw Self.truncated }
        defer { index += length }
        return index..<index + length
    }

    /// Reads one value of the given wire type as a scalar.
    mutating func scalar(wireType: UInt8) throws -> WireScalar {
        switch wireType {
        case 0: return .varint(try varint())
        case 1: return .fixed64(try fixed64())
        case 2: return .bytes(Array(bytes[try lengthDelimited()]))
        case 5: return .fixed32(try fixed32())
        default: throw TranscodingError("Malformed protobuf message: unsupported wire type \(wireType).")
        }
    }
}
