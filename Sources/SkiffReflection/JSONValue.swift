/// A JSON value that keeps object member order and the exact text of numbers.
public indirect enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as written (so 64-bit integers keep their precision).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object's members, in order.
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Parses JSON text.
    /// - Throws: ``TranscodingError`` for malformed JSON.
    public init(parsing text: String) throws {
        var parser = JSONParser(Array(text.utf8))
        self = try parser.parseDocument()
    }

    /// The value as JSON text: compact, or indented by two spaces when `pretty`.
    public func serialized(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        var out = ""
        write(into: &out, pretty: pretty, sortedKeys: sortedKeys, indent: 0)
        return out
    }

    /// The value with object members sorted by key and numbers in a canonical form: for comparing
    /// JSON documents that differ only in member order or number spelling.
    public var canonical: JSONValue {
        switch self {
        case .number(let text):
            if let value = Double(text) {
                return .number(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)")
            }
            return self
        case .array(let values): return .array(values.map(\.canonical))
        case .object(let members):
            return .object(members.map { Member($0.key, $0.value.canonical) }.sorted { $0.key < $1.key })
        default: return self
        }
    }

    private func write(into out: inout String, pretty: Bool, sortedKeys: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let values):
            if values.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                value.write(into: &out, pretty: pretty, sortedKeys: sortedKeys, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            let ordered = sortedKeys ? members.sorted { $0.key < $1.key } : members
            out += "{"
            for (index, member) in ordered.enumerated() {
                if index > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                Self.writeString(member.key, into: &out)
                out += pretty ? ": " : ":"
                member.value.write(into: &out, pretty: pretty, sortedKeys: sortedKeys, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    private static func writeString(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// A small strict JSON parser over UTF-8 bytes.
struct JSONParser {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the JSON value") }
        return value
    }

    private func fail(_ message: String) -> TranscodingError {
        TranscodingError("Invalid JSON at offset \(index): \(message).")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String) throws {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("expected '\(literal)'")
        }
        index += expected.count
    }

    private mutating func parseValue() throws -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "["):
            index += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            }
            while true {
                values.append(try parseValue())
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(values)
                }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "{"):
            index += 1
            var members: [JSONValue.Member] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw fail("expected a member name")
                }
                let key = try parseString()
                skipWhitespace()
                try expect(":")
                members.append(.init(key, try parseValue()))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                throw fail("expected ',' or '}'")
            }
        default:
            let start = index
            while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard !text.isEmpty, Double(text) != nil else {
                index = start
                throw fail("unexpected character")
            }
            return .number(text)
        }
    }

    private mutating func parseString() throws -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            if !run.isEmpty {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run = []
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") {
                flush()
                return String(scalars)
            }
            guard byte == UInt8(ascii: "\\") else {
                run.append(byte)
                continue
            }
            flush()
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\") {
                    index += 2
                    let low = try hex4()
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                scalars.append(scalar)
            default: scalars.append(Unicode.Scalar(escape))
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count,
            let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw fail("invalid \\u escape") }
        index += 4
        return code
    }
}

/// Why JSON could not be turned into a message, or a message into JSON.
public struct TranscodingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for people.
    public var description: String
    public init(_ description: String) { self.description = description }
}
