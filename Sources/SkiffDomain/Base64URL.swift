public import Foundation

/// Base64url (RFC 4648 §5) without padding: the alphabet `A–Z a–z 0–9 - _`, safe in URLs and file names.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index < input.count {
            let count = min(3, input.count - index)
            var group = UInt32(input[index]) << 16
            if count > 1 { group |= UInt32(input[index + 1]) << 8 }
            if count > 2 { group |= UInt32(input[index + 2]) }
            for position in 0...count {
                output.append(alphabet[Int(group >> UInt32(18 - 6 * position)) & 0x3f])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded (or padded) base64url; returns `nil` for anything else.
    public static func decode(_ string: String) -> Data? {
        var values: [UInt8] = []
        values.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            case UInt8(ascii: "="): continue
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var output = Data()
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let count = min(4, values.count - index)
            var group: UInt32 = 0
            for position in 0..<4 {
                group <<= 6
                if position < count { group |= UInt32(values[index + position]) }
            }
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            if count > 2 { output.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if count > 3 { output.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return output
    }

    /// Whether a byte is in the base64url alphabet.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
