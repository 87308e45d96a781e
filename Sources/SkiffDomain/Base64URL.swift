import Foundation

/// Base64url (RFC 4648 §5) without padding: the alphabet `A–Z a–z 0–9 - _`, safe in URLs and file names.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded (or padded) base64url; returns `nil` for anything else.
    public static func decode(_ string: String) -> Data? {
        guard string.utf8.allSatisfy({ isAlphabet($0) || $0 == UInt8(ascii: "=") }) else { return nil }
        var base64 =
            string
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: "=", with: "")
        switch base64.utf8.count % 4 {
        case 0: break
        case 2: base64 += "=="
        case 3: base64 += "="
        default: return nil
        }
        return Data(base64Encoded: base64)
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
