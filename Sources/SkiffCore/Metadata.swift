/// Ordered key–value metadata sent with requests and responses.
///
/// Keys are lowercase `[0-9a-z_.-]`. Keys ending in `-bin` carry binary values; others carry
/// printable ASCII. Order and duplicates are kept, as on the wire.
public struct Metadata: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// A metadata value: text for ordinary keys, raw bytes for `-bin` keys.
    public enum Value: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        case string(String)
        case binary([UInt8])

        public init(stringLiteral value: String) { self = .string(value) }

        /// The value's bytes as they travel on the wire.
        public var bytes: [UInt8] {
            switch self {
            case .string(let s): Array(s.utf8)
            case .binary(let b): b
            }
        }

        public var description: String {
            switch self {
            case .string(let s): s
            case .binary(let b): "<\(b.count) bytes>"
            }
        }
    }

    /// One entry.
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: Value
        public init(key: String, value: Value) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var entries: [Entry]

    public init() { self.entries = [] }

    public init(dictionaryLiteral elements: (String, Value)...) {
        self.entries = elements.map { Entry(key: $0.0, value: $0.1) }
    }

    public init(_ entries: [Entry]) { self.entries = entries }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    /// Appends a text value.
    public mutating func add(_ key: String, _ value: String) {
        entries.append(Entry(key: key, value: .string(value)))
    }

    /// Appends a binary value (the key should end in `-bin`).
    public mutating func add(_ key: String, binary value: [UInt8]) {
        entries.append(Entry(key: key, value: .binary(value)))
    }

    /// Appends an entry.
    public mutating func add(_ entry: Entry) { entries.append(entry) }

    /// Appends all entries of another block.
    public mutating func add(contentsOf other: Metadata) { entries.append(contentsOf: other.entries) }

    /// Removes every entry with this key.
    public mutating func removeAll(key: String) { entries.removeAll { $0.key == key } }

    /// Replaces every entry with this key by one text value.
    public mutating func replace(_ key: String, _ value: String) {
        removeAll(key: key)
        add(key, value)
    }

    /// The first text value for a key (the one that counts for reserved keys).
    public func first(_ key: String) -> String? {
        for entry in entries where entry.key == key {
            if case .string(let s) = entry.value { return s }
            return String(decoding: entry.value.bytes, as: UTF8.self)
        }
        return nil
    }

    /// All values for a key, in order.
    public func values(_ key: String) -> [Value] {
        entries.lazy.filter { $0.key == key }.map(\.value)
    }

    /// Whether a key is well formed: non-empty, lowercase `[0-9a-z_.-]`.
    public static func isValidKey<Bytes: Collection<UInt8>>(_ key: Bytes) -> Bool {
        guard !key.isEmpty else { return false }
        for byte in key {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// Whether a key names a binary value.
    public static func isBinaryKey<Bytes: BidirectionalCollection<UInt8>>(_ key: Bytes) -> Bool {
        key.count >= 4 && key.suffix(4).elementsEqual("-bin".utf8)
    }

    /// Whether a text value is printable ASCII (0x20–0x7E).
    public static func isValidTextValue<Bytes: Sequence<UInt8>>(_ value: Bytes) -> Bool {
        value.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }
}

extension Metadata: CustomStringConvertible {
    public var description: String {
        "[" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension Metadata.Value: ExpressibleByStringInterpolation {
    /// A text value written with interpolation, e.g. `["authorization": "Bearer \(token)"]`.
    public init(stringInterpolation: DefaultStringInterpolation) {
        self = .string(String(stringInterpolation: stringInterpolation))
    }
}
