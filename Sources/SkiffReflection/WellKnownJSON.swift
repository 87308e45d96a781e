import Foundation

/// The special JSON forms of well-known types.
enum WellKnownJSON {
    /// Appended to a type name to transcode it field by field, without its special form.
    static let plainSuffix = "#fields"
    static let wrappers: Set<String> = [
        "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
        "google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
        "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue",
    ]
    static let unsupported: Set<String> = [
        "google.protobuf.Any", "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
    ]

    /// The binary form of `json` when `messageType` has a special JSON form, else nil.
    static func encode(_ json: JSONValue, messageType: String, transcoder: ProtoJSONTranscoder) throws -> [UInt8]? {
        switch messageType {
        case "google.protobuf.Timestamp":
            guard case .string(let text) = json, let (seconds, nanos) = parseTimestamp(text) else {
                throw TranscodingError(
                    "expected an RFC 3339 timestamp string such as \"2024-05-01T12:00:00Z\", got \(json.kindName)"
                )
            }
            return secondsAndNanos(seconds, nanos)
        case "google.protobuf.Duration":
            guard case .string(let text) = json, let (seconds, nanos) = parseDuration(text) else {
                throw TranscodingError("expected a duration string such as \"1.5s\", got \(json.kindName)")
            }
            return secondsAndNanos(seconds, nanos)
        case "google.protobuf.FieldMask":
            guard case .string(let text) = json else {
                throw TranscodingError(
                    "expected a field mask string such as \"title,priceCents\", got \(json.kindName)"
                )
            }
            var writer = WireWriter()
            for path in text.split(separator: ",") where !path.isEmpty {
                writer.tag(1, 2)
                writer.lengthDelimited(Array(snakeCase(String(path)).utf8))
            }
            return writer.bytes
        case _ where wrappers.contains(messageType):
            return try transcoder.encode(.object([.init("value", json)]), messageType: messageType + plainSuffix)
        case _ where unsupported.contains(messageType):
            throw TranscodingError("\(messageType) is not supported by skiff's JSON transcoder")
        default:
            return nil
        }
    }

    /// The JSON form of `bytes` when `messageType` has a special JSON form, else nil.
    static func decode(_ bytes: [UInt8], messageType: String, transcoder: ProtoJSONTranscoder) throws -> JSONValue? {
        switch messageType {
        case "google.protobuf.Timestamp":
            let (seconds, nanos) = try readSecondsAndNanos(bytes)
            return .string(formatTimestamp(seconds: seconds, nanos: nanos))
        case "google.protobuf.Duration":
            let (seconds, nanos) = try readSecondsAndNanos(bytes)
            let negative = seconds < 0 || nanos < 0
            let text = "\(abs(seconds))" + fraction(abs(nanos)) + "s"
            return .string(negative ? "-" + text : text)
        case "google.protobuf.FieldMask":
            var reader = WireReader(bytes)
            var paths: [String] = []
            while !reader.isAtEnd {
                let tag = try reader.varint()
                let value = try reader.scalar(wireType: UInt8(tag & 7))
                if tag >> 3 == 1, case .bytes(let b) = value {
                    paths.append(lowerCamelCase(String(decoding: b, as: UTF8.self)))
                }
            }
            return .string(paths.joined(separator: ","))
        case _ where wrappers.contains(messageType):
            guard
                case .object(let members) = try transcoder.decode(
                    bytes,
                    range: 0..<bytes.count,
                    messageType: messageType + plainSuffix
                )
            else { return nil }
            if let value = members.first?.value { return value }
            let defaults: [String: JSONValue] = [
                "google.protobuf.BoolValue": .bool(false), "google.protobuf.StringValue": .string(""),
                "google.protobuf.BytesValue": .string(""), "google.protobuf.Int64Value": .string("0"),
                "google.protobuf.UInt64Value": .string("0"),
            ]
            return defaults[messageType] ?? .number("0")
        case _ where unsupported.contains(messageType):
            throw TranscodingError("\(messageType) is not supported by skiff's JSON transcoder")
        default:
            return nil
        }
    }

    // MARK: Helpers

    static func lowerCamelCase(_ name: String) -> String {
        var result = ""
        var upperNext = false
        for character in name {
            if character == "_" {
                upperNext = true
                continue
            }
            result += upperNext ? character.uppercased() : String(character)
            upperNext = false
        }
        return result
    }

    static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
        return result
    }

    private static func secondsAndNanos(_ seconds: Int64, _ nanos: Int32) -> [UInt8] {
        var writer = WireWriter()
        if seconds != 0 {
            writer.tag(1, 0)
            writer.varint(UInt64(bitPattern: seconds))
        }
        if nanos != 0 {
            writer.tag(2, 0)
            writer.varint(UInt64(bitPattern: Int64(nanos)))
        }
        return writer.bytes
    }

    private static func readSecondsAndNanos(_ bytes: [UInt8]) throws -> (Int64, Int32) {
        var reader = WireReader(bytes)
        var seconds: Int64 = 0
        var nanos: Int32 = 0
        while !reader.isAtEnd {
            let tag = try reader.varint()
            let value = try reader.scalar(wireType: UInt8(tag & 7))
            guard case .varint(let v) = value else { continue }
            if tag >> 3 == 1 {
                seconds = Int64(bitPattern: v)
            } else if tag >> 3 == 2 {
                nanos = Int32(truncatingIfNeeded: v)
            }
        }
        return (seconds, nanos)
    }

    /// ".5", ".500", ".500000" style fractions with 0, 3, 6 or 9 digits.
    private static func fraction(_ nanos: Int32) -> String {
        guard nanos != 0 else { return "" }
        var digits = String(nanos)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.count > 3, digits.hasSuffix("000") { digits.removeLast(3) }
        return "." + digits
    }

    static func formatTimestamp(seconds: Int64, nanos: Int32) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil from days (Howard Hinnant).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))\(fraction(nanos))Z"
    }

    static func parseTimestamp(_ text: String) -> (Int64, Int32)? {
        let chars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= chars.count else { return nil }
            return Int64(String(decoding: chars[range], as: UTF8.self))
        }
        guard chars.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            chars[4] == UInt8(ascii: "-"), chars[7] == UInt8(ascii: "-"), chars[10] | 0x20 == UInt8(ascii: "t")
        else { return nil }
        var index = 19
        var nanos: Int32 = 0
        if chars[index] == UInt8(ascii: ".") {
            index += 1
            var digits = ""
            while index < chars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(chars[index]) {
                digits.append(Character(Unicode.Scalar(chars[index])))
                index += 1
            }
            guard !digits.isEmpty, digits.count <= 9 else { return nil }
            nanos = Int32(digits + String(repeating: "0", count: 9 - digits.count))!
        }
        var offset: Int64 = 0
        let rest = String(decoding: chars[index...], as: UTF8.self)
        if rest.uppercased() != "Z" {
            let sign: Int64 = rest.hasPrefix("-") ? -1 : 1
            let parts = rest.dropFirst().split(separator: ":")
            guard rest.hasPrefix("+") || rest.hasPrefix("-"), parts.count == 2, let h = Int64(parts[0]),
                let m = Int64(parts[1])
            else { return nil }
            offset = sign * (h * 3600 + m * 60)
        }
        // Days from civil (Howard Hinnant).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return (days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanos)
    }

    static func parseDuration(_ text: String) -> (Int64, Int32)? {
        guard text.hasSuffix("s") else { return nil }
        var body = text.dropLast()
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let seconds = Int64(parts[0]) else { return nil }
        var nanos: Int32 = 0
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 9,
                let n = Int32(parts[1] + String(repeating: "0", count: 9 - parts[1].count))
            else { return nil }
            nanos = n
        }
        return negative ? (-seconds, -nanos) : (seconds, nanos)
    }
}

/// Base64 for the JSON form of `bytes` (standard alphabet on output; standard or URL-safe on input).
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func decode(_ text: String) -> [UInt8]? {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normalized.count % 4 != 0 { normalized += "=" }
        return Data(base64Encoded: normalized).map { Array($0) }
    }
}
