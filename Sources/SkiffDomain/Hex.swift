extension Sequence where Element == UInt8 {
    /// The bytes in lowercase hexadecimal, two digits each (a digest as stores keep it).
    package var lowercaseHex: String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = String.UnicodeScalarView()
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(text)
    }
}
