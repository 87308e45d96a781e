/// A small binary form for `Codable` values, used by ``PageToken`` for its cursors.
///
/// Page cursors are a handful of strings and numbers, made and read on every paged call; Foundation's
/// JSON coders cost more than the search that fills a page. This form is what JSON would be without the
/// text: a value is a tag byte, then its payload.
///
/// | tag | value | payload |
/// |---|---|---|
/// | 0 | nil | none |
/// | 1, 2 | false, true | none |
/// | 3 | signed integer | zigzag LEB128 |
/// | 4 | unsigned integer | LEB128 |
/// | 5 | floating point | the `Double`'s 8 bytes, little-endian |
/// | 6 | string | LEB128 byte count, UTF-8 |
/// | 7 | keyed container | LEB128 count, then per entry a key (as a string's payload) and a value |
/// | 8 | unkeyed container | LEB128 count, then the values |
///
/// Encoding is deterministic (keys in the order the type encodes them). Decoding refuses anything a
/// correct encoder cannot produce: an unknown tag, a count or length past the end, a varint over 10
/// bytes, invalid UTF-8, nesting deeper than ``maximumDepth``, or bytes left over.
package enum CompactCoding {
    /// The deepest nesting of containers decoded; a cursor nests one or two.
    package static let maximumDepth = 16

    /// The value tree both directions go through.
    package indirect enum Value: Equatable, Sendable {
        case null
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case string(String)
        case keyed([Entry])
        case unkeyed([Value])
    }

    /// One entry of a keyed container.
    package struct Entry: Equatable, Sendable {
        package var key: String
        package var value: Value
    }

    /// The bytes of `value`, appended to `output`.
    package static func encode<T: Encodable>(_ value: T, into output: inout [UInt8]) throws {
        let slot = EncodingSlot()
        try value.encode(to: ValueEncoder(slot: slot, codingPath: []))
        write(slot.resolved(), into: &output)
    }

    /// The value of type `T` that `bytes` hold, all of them.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
        var reader = Reader(bytes: bytes)
        return try decode(type, from: &reader)
    }

    /// The value of type `T` in the rest of `reader`'s bytes, all of them.
    package static func decode<T: Decodable>(_ type: T.Type, from reader: inout Reader) throws -> T {
        let value = try reader.value(depth: 0)
        guard reader.isAtEnd else { throw corrupt("bytes after the value", []) }
        return try T(from: ValueDecoder(value: value, codingPath: []))
    }

    // MARK: Bytes

    package static func write(_ value: Value, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(0)
        case .bool(let flag): output.append(flag ? 2 : 1)
        case .int(let number):
            output.append(3)
            writeVarint(UInt64(bitPattern: (number << 1) ^ (number >> 63)), into: &output)
        case .uint(let number):
            output.append(4)
            writeVarint(number, into: &output)
        case .double(let number):
            output.append(5)
            withUnsafeBytes(of: number.bitPattern.littleEndian) { output.append(contentsOf: $0) }
        case .string(let text):
            output.append(6)
            writeString(text, into: &output)
        case .keyed(let entries):
            output.append(7)
            writeVarint(UInt64(entries.count), into: &output)
            for entry in entries {
                writeString(entry.key, into: &output)
                write(entry.value, into: &output)
            }
        case .unkeyed(let values):
            output.append(8)
            writeVarint(UInt64(values.count), into: &output)
            for element in values { write(element, into: &output) }
        }
    }

    static func writeString(_ text: String, into output: inout [UInt8]) {
        writeVarint(UInt64(text.utf8.count), into: &output)
        output.append(contentsOf: text.utf8)
    }

    static func writeVarint(_ number: UInt64, into output: inout [UInt8]) {
        var rest = number
        while rest >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    /// Reads values from bytes, refusing whatever ``write(_:into:)`` cannot have written.
    package struct Reader {
        private let bytes: ArraySlice<UInt8>
        private var index: Int

        package init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        package var isAtEnd: Bool { index == bytes.endIndex }

        package mutating func byte() throws -> UInt8 {
            guard index < bytes.endIndex else { throw corrupt("the bytes end early", []) }
            defer { index += 1 }
            return bytes[index]
        }

        package mutating func varint() throws -> UInt64 {
            var number: UInt64 = 0
            for shift in stride(from: 0, to: 70, by: 7) {
                let next = try byte()
                guard shift < 63 || next <= 1 else { throw corrupt("a number too large", []) }
                number |= UInt64(next & 0x7f) << UInt64(shift)
                if next < 0x80 { return number }
            }
            throw corrupt("a number too long", [])
        }

        /// A count or length, which cannot exceed the bytes left (each element takes at least one).
        private mutating func count() throws -> Int {
            let count = try varint()
            guard count <= UInt64(bytes.endIndex - index) else { throw corrupt("a length past the end", []) }
            return Int(count)
        }

        package mutating func string() throws -> String {
            let length = try count()
            defer { index += length }
            guard let text = String(validating: bytes[index..<index + length], as: UTF8.self) else {
                throw corrupt("text that is not UTF-8", [])
            }
            return text
        }

        package mutating func value(depth: Int) throws -> Value {
            switch try byte() {
            case 0: return .null
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3:
                let zigzag = try varint()
                return .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
            case 4: return .uint(try varint())
            case 5:
                var bits: UInt64 = 0
                for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << UInt64(shift) }
                return .double(Double(bitPattern: bits))
            case 6: return .string(try string())
            case 7:
                guard depth < maximumDepth else { throw corrupt("containers nested too deep", []) }
                var entries: [Entry] = []
                for _ in 0..<(try count()) {
                    let key = try string()
                    entries.append(Entry(key: key, value: try value(depth: depth + 1)))
                }
                return .keyed(entries)
            case 8:
                guard depth < maximumDepth else { throw corrupt("containers nested too deep", []) }
                var values: [Value] = []
                for _ in 0..<(try count()) { values.append(try value(depth: depth + 1)) }
                return .unkeyed(values)
            default: throw corrupt("an unknown tag", [])
            }
        }
    }

    static func corrupt(_ what: String, _ path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: "Compact coding: \(what)."))
    }
}

// MARK: - Encoding

/// Where an encoder puts what it is given; containers hold slots of their own, resolved at the end.
private final class EncodingSlot {
    enum Content {
        case empty
        case value(CompactCoding.Value)
        case keyed
        case unkeyed
    }
    var content = Content.empty
    var entries: [(key: String, slot: EncodingSlot)] = []
    var elements: [EncodingSlot] = []

    func resolved() -> CompactCoding.Value {
        switch content {
        case .empty: .keyed([])
        case .value(let value): value
        case .keyed: .keyed(entries.map { CompactCoding.Entry(key: $0.key, value: $0.slot.resolved()) })
        case .unkeyed: .unkeyed(elements.map { $0.resolved() })
        }
    }

    func makeKeyed() {
        if case .keyed = content { return }
        content = .keyed
        entries = []
    }

    func makeUnkeyed() {
        if case .unkeyed = content { return }
        content = .unkeyed
        elements = []
    }
}

private struct ValueEncoder: Encoder {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeKeyed()
        return KeyedEncodingContainer(KeyedWriter<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeUnkeyed()
        return UnkeyedWriter(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleWriter(slot: slot, codingPath: codingPath)
    }
}

/// Where the unkeyed and single-value encoding containers put a value; their `encode` overloads come from
/// the extension below.
private protocol ScalarWriter {
    var codingPath: [any CodingKey] { get }
    mutating func put(_ value: CompactCoding.Value)
    mutating func putEncodable<T: Encodable>(_ value: T) throws
}

/// The `encode` overloads of the unkeyed and single-value containers, shared.
extension ScalarWriter {
    mutating func encodeNil() { put(.null) }
    mutating func encode(_ value: Bool) { put(.bool(value)) }
    mutating func encode(_ value: String) { put(.string(value)) }
    mutating func encode(_ value: Double) { put(.double(value)) }
    mutating func encode(_ value: Float) { put(.double(Double(value))) }
    mutating func encode(_ value: Int) { put(.int(Int64(value))) }
    mutating func encode(_ value: Int8) { put(.int(Int64(value))) }
    mutating func encode(_ value: Int16) { put(.int(Int64(value))) }
    mutating func encode(_ value: Int32) { put(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { put(.int(value)) }
    mutating func encode(_ value: UInt) { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) { put(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) { put(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try putEncodable(value) }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    private func add(_ key: Key) -> EncodingSlot { add(named: key.stringValue) }

    private func add(named name: String) -> EncodingSlot {
        let child = EncodingSlot()
        slot.entries.append((name, child))
        return child
    }

    mutating func encodeNil(forKey key: Key) { add(key).content = .value(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) { add(key).content = .value(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) { add(key).content = .value(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) { add(key).content = .value(.double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) { add(key).content = .value(.double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) { add(key).content = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) { add(key).content = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) { add(key).content = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) { add(key).content = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) { add(key).content = .value(.int(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) { add(key).content = .value(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) { add(key).content = .value(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) { add(key).content = .value(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) { add(key).content = .value(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) { add(key).content = .value(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: ValueEncoder(slot: add(key), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(slot: add(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(slot: add(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueEncoder(slot: add(named: "super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoder(slot: add(key), codingPath: codingPath + [key])
    }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer, ScalarWriter {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var count: Int { slot.elements.count }

    private func add() -> EncodingSlot {
        let child = EncodingSlot()
        slot.elements.append(child)
        return child
    }

    mutating func put(_ value: CompactCoding.Value) { add().content = .value(value) }
    mutating func putEncodable<T: Encodable>(_ value: T) throws {
        try value.encode(to: ValueEncoder(slot: add(), codingPath: codingPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(slot: add(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(slot: add(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(slot: add(), codingPath: codingPath) }
}

private struct SingleWriter: SingleValueEncodingContainer, ScalarWriter {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    mutating func put(_ value: CompactCoding.Value) { slot.content = .value(value) }
    mutating func putEncodable<T: Encodable>(_ value: T) throws {
        try value.encode(to: ValueEncoder(slot: slot, codingPath: codingPath))
    }

}

// MARK: - Decoding

private struct ValueDecoder: Decoder {
    let value: CompactCoding.Value
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .keyed(let entries) = value else {
            throw CompactCoding.corrupt("a keyed container expected", codingPath)
        }
        return KeyedDecodingContainer(KeyedReader<Key>(entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .unkeyed(let values) = value else {
            throw CompactCoding.corrupt("an unkeyed container expected", codingPath)
        }
        return UnkeyedReader(values: values, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleReader(value: value, codingPath: codingPath)
    }
}

/// Scalars out of values, refusing a value of another kind or out of the type's range.
private enum Scalars {
    static func bool(_ value: CompactCoding.Value, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw CompactCoding.corrupt("a Boolean expected", path) }
        return flag
    }

    static func string(_ value: CompactCoding.Value, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw CompactCoding.corrupt("a string expected", path) }
        return text
    }

    static func double(_ value: CompactCoding.Value, _ path: [any CodingKey]) throws -> Double {
        guard case .double(let number) = value else { throw CompactCoding.corrupt("a number expected", path) }
        return number
    }

    static func float(_ value: CompactCoding.Value, _ path: [any CodingKey]) throws -> Float {
        let number = try double(value, path)
        guard let float = Float(exactly: number) ?? (number.isNaN ? Float.nan : nil) else {
            throw CompactCoding.corrupt("a Float out of range", path)
        }
        return float
    }

    static func integer<T: FixedWidthInteger>(_ value: CompactCoding.Value, _ path: [any CodingKey]) throws -> T {
        let exact: T? =
            switch value {
            case .int(let number): T(exactly: number)
            case .uint(let number): T(exactly: number)
            default: nil
            }
        guard let exact else { throw CompactCoding.corrupt("an integer of \(T.self)'s range expected", path) }
        return exact
    }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: [CompactCoding.Entry]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { entries.contains { $0.key == key.stringValue } }

    private func value(_ key: Key) throws -> CompactCoding.Value {
        guard let value = value(named: key.stringValue) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "Compact coding: no such key.")
            )
        }
        return value
    }

    private func value(named name: String) -> CompactCoding.Value? {
        entries.first { $0.key == name }?.value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Scalars.bool(value(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try Scalars.string(value(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Scalars.double(value(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try Scalars.float(value(key), path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try Scalars.integer(value(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try Scalars.integer(value(key), path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try T(from: ValueDecoder(value: value(key), codingPath: path(key)))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: value(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let value = value(named: "super") else {
            throw CompactCoding.corrupt("no superclass value", codingPath)
        }
        return ValueDecoder(value: value, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try ValueDecoder(value: value(key), codingPath: path(key))
    }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let values: [CompactCoding.Value]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex == values.count }

    init(values: [CompactCoding.Value], codingPath: [any CodingKey]) {
        self.values = values
        self.codingPath = codingPath
    }

    private mutating func next() throws -> CompactCoding.Value {
        guard !isAtEnd else { throw CompactCoding.corrupt("fewer elements than expected", codingPath) }
        defer { currentIndex += 1 }
        return values[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, values[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try Scalars.bool(next(), codingPath) }
    mutating func decode(_ type: String.Type) throws -> String { try Scalars.string(next(), codingPath) }
    mutating func decode(_ type: Double.Type) throws -> Double { try Scalars.double(next(), codingPath) }
    mutating func decode(_ type: Float.Type) throws -> Float { try Scalars.float(next(), codingPath) }
    mutating func decode(_ type: Int.Type) throws -> Int { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try Scalars.integer(next(), codingPath) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try Scalars.integer(next(), codingPath) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: ValueDecoder(value: next(), codingPath: codingPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: next(), codingPath: codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: next(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { ValueDecoder(value: try next(), codingPath: codingPath) }
}

private struct SingleReader: SingleValueDecodingContainer {
    let value: CompactCoding.Value
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try Scalars.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Scalars.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Scalars.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try Scalars.float(value, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try Scalars.integer(value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Scalars.integer(value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Scalars.integer(value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Scalars.integer(value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Scalars.integer(value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Scalars.integer(value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Scalars.integer(value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Scalars.integer(value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Scalars.integer(value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Scalars.integer(value, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }
}
