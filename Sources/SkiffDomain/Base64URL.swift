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
        decodeBytes(string).map { Data($0) }
    }

    /// Decodes unpadded (or padded) base64url into bytes; returns `nil` for anything else.
    public static func decodeBytes(_ string: String) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count * 3 / 4 + 2)
        var group: UInt32 = 0
        var count = 0
        for byte in string.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output.append(UInt8(truncatingIfNeeded: group >> 16))
                output.append(UInt8(truncatingIfNeeded: group >> 8))
                output.append(UInt8(truncatingIfNeeded: group))
                group = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: output.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        default: return nil
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
