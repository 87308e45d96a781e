import SwiftProtobuf

extension ProtoJSONTranscoder {
    // MARK: binary → JSON

    /// Decodes a binary message of the given type as JSON text (compact, or indented when `pretty`).
    /// - Throws: ``TranscodingError`` for malformed input or an unknown type.
    public func json(fromBinary bytes: [UInt8], messageType: String, pretty: Bool = false) throws -> String {
        try decode(bytes, messageType: messageType).serialized(pretty: pretty)
    }

    /// Decodes a binary message of the given type as a JSON value. Unknown fields are skipped;
    /// fields are written in declaration order.
    public func decode(_ bytes: [UInt8], messageType: String) throws -> JSONValue {
        try decode(bytes, range: 0..<bytes.count, messageType: messageType)
    }

    func decode(_ bytes: [UInt8], range: Range<Int>, messageType: String) throws -> JSONValue {
        var name = DescriptorRegistry.trimmed(messageType)
        if name.hasSuffix(WellKnownJSON.plainSuffix) {
            name.removeLast(WellKnownJSON.plainSuffix.count)
        } else if let special = try WellKnownJSON.decode(Array(bytes[range]), messageType: name, transcoder: self) {
            return special
        }
        guard let message = registry.message(named: name) else {
            throw TranscodingError("Unknown message type '\(name)'.")
        }
        var singular: [Int32: JSONValue] = [:]
        var repeated: [Int32: [JSONValue]] = [:]
        var maps: [Int32: [JSONValue.Member]] = [:]
        var reader = WireReader(bytes, range: range)
        while !reader.isAtEnd {
            let tag = try reader.varint()
            let number = Int32(truncatingIfNeeded: tag >> 3)
            let wireType = UInt8(tag & 7)
            guard let field = message.field.first(where: { $0.number == number }) else {
                _ = try reader.scalar(wireType: wireType)  // an unknown field: skip it
                continue
            }
            if let entry = mapEntry(of: field) {
                let entryRange = try reader.lengthDelimited()
                let (key, value) = try decodeMapEntry(bytes, range: entryRange, key: entry.key, value: entry.value)
                maps[number, default: []].removeAll { $0.key == key }
                maps[number, default: []].append(.init(key, value))
            } else if field.label == .repeated {
                if wireType == 2, field.isPackable {
                    var packed = WireReader(bytes, range: try reader.lengthDelimited())
                    while !packed.isAtEnd {
                        let scalar = try packed.scalar(wireType: field.scalarWireType)
                        repeated[number, default: []].append(try json(field, scalar))
                    }
                } else {
                    repeated[number, default: []].append(try decodeSingular(field, wireType: wireType, reader: &reader))
                }
            } else {
                if field.hasOneofIndex, !field.proto3Optional {  // the last member of a oneof wins
                    for other in message.field where other.hasOneofIndex && other.oneofIndex == field.oneofIndex {
                        singular[other.number] = nil
                    }
                }
                singular[number] = try decodeSingular(field, wireType: wireType, reader: &reader)
            }
        }
        var members: [JSONValue.Member] = []
        for field in message.field {
            if let value = singular[field.number] {
                members.append(.init(field.jsonFieldName, value))
            } else if let values = repeated[field.number] {
                members.append(.init(field.jsonFieldName, .array(values)))
            } else if let entries = maps[field.number] {
                members.append(.init(field.jsonFieldName, .object(entries)))
            }
        }
        return .object(members)
    }

    private func decodeSingular(
        _ field: Google_Protobuf_FieldDescriptorProto,
        wireType: UInt8,
        reader: inout WireReader
    ) throws -> JSONValue {
        if field.type == .message {
            return try decode(reader.bytes, range: try reader.lengthDelimited(), messageType: field.typeName)
        }
        return try json(field, try reader.scalar(wireType: wireType))
    }

    private func decodeMapEntry(
        _ bytes: [UInt8],
        range: Range<Int>,
        key keyField: Google_Protobuf_FieldDescriptorProto,
        value valueField: Google_Protobuf_FieldDescriptorProto
    ) throws -> (String, JSONValue) {
        var key: JSONValue = try json(keyField, keyField.type == .string ? .bytes([]) : .varint(0))
        var value: JSONValue? = nil
        var reader = WireReader(bytes, range: range)
        while !reader.isAtEnd {
            let tag = try reader.varint()
            switch tag >> 3 {
            case 1: key = try json(keyField, try reader.scalar(wireType: UInt8(tag & 7)))
            case 2: value = try decodeSingular(valueField, wireType: UInt8(tag & 7), reader: &reader)
            default: _ = try reader.scalar(wireType: UInt8(tag & 7))
            }
        }
        if value == nil {
            value =
                valueField.type == .message
                ? try decode([], messageType: valueField.typeName)
                : try json(valueField, valueField.scalarWireType == 2 ? .bytes([]) : .varint(0))
        }
        let keyText: String
        switch key {
        case .string(let text), .number(let text): keyText = text
        case .bool(let flag): keyText = flag ? "true" : "false"
        default: keyText = key.serialized()
        }
        return (keyText, value!)
    }

    /// A scalar's JSON form for a field's type.
    func json(_ field: Google_Protobuf_FieldDescriptorProto, _ scalar: WireScalar) throws -> JSONValue {
        func mismatch() -> TranscodingError {
            TranscodingError("Malformed protobuf message: wrong wire type for field \(field.name).")
        }
        switch (field.type, scalar) {
        case (.bool, .varint(let v)): return .bool(v != 0)
        case (.string, .bytes(let b)): return .string(String(decoding: b, as: UTF8.self))
        case (.bytes, .bytes(let b)): return .string(Base64.encode(b))
        case (.enum, .varint(let v)):
            let number = Int32(truncatingIfNeeded: v)
            if let name = registry.enumType(named: field.typeName)?.value.first(where: { $0.number == number })?.name {
                return .string(name)
            }
            return .number(String(number))
        case (.int32, .varint(let v)): return .number(String(Int32(truncatingIfNeeded: v)))
        case (.int64, .varint(let v)): return .string(String(Int64(bitPattern: v)))
        case (.uint32, .varint(let v)): return .number(String(UInt32(truncatingIfNeeded: v)))
        case (.uint64, .varint(let v)): return .string(String(v))
        case (.sint32, .varint(let v)):
            return .number(String(Int32(truncatingIfNeeded: Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))))))
        case (.sint64, .varint(let v)): return .string(String(Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))))
        case (.fixed32, .fixed32(let v)): return .number(String(v))
        case (.sfixed32, .fixed32(let v)): return .number(String(Int32(bitPattern: v)))
        case (.fixed64, .fixed64(let v)): return .string(String(v))
        case (.sfixed64, .fixed64(let v)): return .string(String(Int64(bitPattern: v)))
        case (.float, .fixed32(let v)):
            return Self.floatingPoint(Double(Float(bitPattern: v)), text: "\(Float(bitPattern: v))")
        case (.double, .fixed64(let v)):
            return Self.floatingPoint(Double(bitPattern: v), text: "\(Double(bitPattern: v))")
        default: throw mismatch()
        }
    }

    private static func floatingPoint(_ value: Double, text: String) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value > 0 ? "Infinity" : "-Infinity") }
        return .number(text.hasSuffix(".0") ? String(text.dropLast(2)) : text)
    }
}

extension Google_Protobuf_FieldDescriptorProto {
    /// The wire type of one (unpacked) value of a scalar field.
    var scalarWireType: UInt8 {
        switch type {
        case .fixed64, .sfixed64, .double: 1
        case .fixed32, .sfixed32, .float: 5
        case .string, .bytes, .message, .group: 2
        default: 0
        }
    }
}
