public import SwiftProtobuf

/// Converts between the Protobuf JSON mapping and the binary wire format for any message type
/// in a ``DescriptorRegistry``, without generated code.
///
/// Supports proto3 scalars, enums, nested messages, repeated fields, maps, `optional` and oneofs,
/// and the special JSON forms of `google.protobuf.Timestamp`, `Duration`, `FieldMask` and the
/// wrapper types. `Any`, `Struct`, `Value` and `ListValue` are not supported.
public struct ProtoJSONTranscoder: Sendable {
    /// The schemas.
    public let registry: DescriptorRegistry

    /// Creates a transcoder over a registry.
    public init(registry: DescriptorRegistry) {
        self.registry = registry
    }

    // MARK: JSON → binary

    /// Encodes JSON text as a message of the given type (full name, e.g. `skiff.listings.v1.Listing`).
    /// - Throws: ``TranscodingError`` for malformed JSON, unknown fields or values of the wrong kind.
    public func binary(fromJSON text: String, messageType: String) throws -> [UInt8] {
        try encode(try JSONValue(parsing: text), messageType: messageType)
    }

    /// Encodes a JSON value as a message of the given type.
    public func encode(_ json: JSONValue, messageType: String) throws -> [UInt8] {
        var name = DescriptorRegistry.trimmed(messageType)
        if name.hasSuffix(WellKnownJSON.plainSuffix) {
            name.removeLast(WellKnownJSON.plainSuffix.count)
        } else if let special = try WellKnownJSON.encode(json, messageType: name, transcoder: self) {
            return special
        }
        guard let message = registry.message(named: name) else {
            throw TranscodingError("Unknown message type '\(name)'.")
        }
        guard case .object(let members) = json else {
            throw TranscodingError("Expected a JSON object for \(name), got \(json.kindName).")
        }
        var values: [Int32: (field: Google_Protobuf_FieldDescriptorProto, value: JSONValue)] = [:]
        var oneofs: [Int32: String] = [:]
        for member in members {
            guard let field = message.field.first(where: { $0.jsonFieldName == member.key || $0.name == member.key })
            else {
                let known = message.field.map(\.jsonFieldName).joined(separator: ", ")
                throw TranscodingError(
                    "Unknown field '\(member.key)' in \(name) (fields: \(known.isEmpty ? "none" : known))."
                )
            }
            guard values[field.number] == nil else {
                throw TranscodingError("Field '\(member.key)' of \(name) is set twice.")
            }
            if member.value == .null, field.typeName != ".google.protobuf.Value" { continue }
            if field.hasOneofIndex, !field.proto3Optional {
                if let other = oneofs.updateValue(member.key, forKey: field.oneofIndex) {
                    throw TranscodingError("Fields '\(other)' and '\(member.key)' of \(name) are in the same oneof.")
                }
            }
            values[field.number] = (field, member.value)
        }
        var writer = WireWriter()
        for number in values.keys.sorted() {
            let (field, value) = values[number]!
            do {
                try write(field, value, into: &writer)
            } catch let error as TranscodingError where !error.description.hasPrefix("In ") {
                throw TranscodingError("In \(name).\(field.jsonFieldName): \(error.description)")
            }
        }
        return writer.bytes
    }

    private func write(
        _ field: Google_Protobuf_FieldDescriptorProto,
        _ value: JSONValue,
        into writer: inout WireWriter
    ) throws {
        if let entry = mapEntry(of: field) {
            guard case .object(let members) = value else {
                throw TranscodingError("expected a JSON object (map), got \(value.kindName)")
            }
            for member in members {
                var entryWriter = WireWriter()
                let key = try scalar(entry.key, .string(member.key), isMapKey: true)
                entryWriter.tag(1, key.wireType)
                entryWriter.scalar(key)
                try writeSingular(entry.value, member.value, into: &entryWriter, always: true)
                writer.tag(field.number, 2)
                writer.lengthDelimited(entryWriter.bytes)
            }
        } else if field.label == .repeated {
            guard case .array(let elements) = value else {
                throw TranscodingError("expected a JSON array, got \(value.kindName)")
            }
            if field.isPackable {
                guard !elements.isEmpty else { return }
                var packed = WireWriter()
                for element in elements { packed.scalar(try scalar(field, element)) }
                writer.tag(field.number, 2)
                writer.lengthDelimited(packed.bytes)
            } else {
                for element in elements { try writeSingular(field, element, into: &writer, always: true) }
            }
        } else {
            try writeSingular(field, value, into: &writer, always: field.hasOneofIndex)
        }
    }

    private func writeSingular(
        _ field: Google_Protobuf_FieldDescriptorProto,
        _ value: JSONValue,
        into writer: inout WireWriter,
        always: Bool
    ) throws {
        if field.type == .message || field.type == .group {
            writer.tag(field.number, 2)
            writer.lengthDelimited(try encode(value, messageType: field.typeName))
            return
        }
        let encoded = try scalar(field, value)
        guard always || !encoded.isZero else { return }
        writer.tag(field.number, encoded.wireType)
        writer.scalar(encoded)
    }

    /// A map field's entry key and value fields, if `field` is a map.
    func mapEntry(
        of field: Google_Protobuf_FieldDescriptorProto
    ) -> (key: Google_Protobuf_FieldDescriptorProto, value: Google_Protobuf_FieldDescriptorProto)? {
        guard field.label == .repeated, field.type == .message,
            let entry = registry.message(named: field.typeName), entry.options.mapEntry,
            let key = entry.field.first(where: { $0.number == 1 }),
            let value = entry.field.first(where: { $0.number == 2 })
        else { return nil }
        return (key, value)
    }

    /// Converts a JSON scalar to its wire form for a field's type.
    func scalar(
        _ field: Google_Protobuf_FieldDescriptorProto,
        _ value: JSONValue,
        isMapKey: Bool = false
    ) throws -> WireScalar {
        switch field.type {
        case .bool:
            switch value {
            case .bool(let flag): return .varint(flag ? 1 : 0)
            case .string("true") where isMapKey: return .varint(1)
            case .string("false") where isMapKey: return .varint(0)
            default: throw TranscodingError("expected true or false, got \(value.kindName)")
            }
        case .string:
            guard case .string(let text) = value else {
                throw TranscodingError("expected a string, got \(value.kindName)")
            }
            return .bytes(Array(text.utf8))
        case .bytes:
            guard case .string(let text) = value, let bytes = Base64.decode(text) else {
                throw TranscodingError("expected a base64 string, got \(value.kindName)")
            }
            return .bytes(bytes)
        case .enum:
            switch value {
            case .string(let name):
                guard let enumType = registry.enumType(named: field.typeName),
                    let number = enumType.value.first(where: { $0.name == name })?.number
                else {
                    throw TranscodingError(
                        "unknown value \"\(name)\" of enum \(DescriptorRegistry.trimmed(field.typeName))"
                    )
                }
                return .varint(UInt64(bitPattern: Int64(number)))
            default:
                return .varint(UInt64(bitPattern: Int64(try integer(value, in: Int64(Int32.min)...Int64(Int32.max)))))
            }
        case .int32: return .varint(UInt64(bitPattern: try integer(value, in: Int64(Int32.min)...Int64(Int32.max))))
        case .int64: return .varint(UInt64(bitPattern: try integer(value, in: Int64.min...Int64.max)))
        case .uint32: return .varint(try unsigned(value, max: UInt64(UInt32.max)))
        case .uint64: return .varint(try unsigned(value, max: UInt64.max))
        case .sint32, .sint64:
            let bound: ClosedRange<Int64> =
                field.type == .sint32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
            let v = try integer(value, in: bound)
            return .varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .fixed32: return .fixed32(UInt32(try unsigned(value, max: UInt64(UInt32.max))))
        case .fixed64: return .fixed64(try unsigned(value, max: UInt64.max))
        case .sfixed32:
            return .fixed32(UInt32(bitPattern: Int32(try integer(value, in: Int64(Int32.min)...Int64(Int32.max)))))
        case .sfixed64: return .fixed64(UInt64(bitPattern: try integer(value, in: Int64.min...Int64.max)))
        case .float: return .fixed32(Float(try floatingPoint(value)).bitPattern)
        case .double: return .fixed64(try floatingPoint(value).bitPattern)
        default: throw TranscodingError("unsupported field type \(field.type)")
        }
    }

    private func numberText(_ value: JSONValue) throws -> String {
        switch value {
        case .number(let text), .string(let text): return text
        default: throw TranscodingError("expected a number, got \(value.kindName)")
        }
    }

    private func integer(_ value: JSONValue, in range: ClosedRange<Int64>) throws -> Int64 {
        let text = try numberText(value)
        let parsed = Int64(text) ?? Double(text).flatMap { $0 == $0.rounded() && abs($0) < 9.2e18 ? Int64($0) : nil }
        guard let parsed, range.contains(parsed) else {
            throw TranscodingError("invalid or out-of-range integer \(text)")
        }
        return parsed
    }

    private func unsigned(_ value: JSONValue, max: UInt64) throws -> UInt64 {
        let text = try numberText(value)
        let parsed =
            UInt64(text) ?? Double(text).flatMap { $0 >= 0 && $0 == $0.rounded() && $0 < 1.8e19 ? UInt64($0) : nil }
        guard let parsed, parsed <= max else {
            throw TranscodingError("invalid or out-of-range unsigned integer \(text)")
        }
        return parsed
    }

    private func floatingPoint(_ value: JSONValue) throws -> Double {
        let text = try numberText(value)
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            guard let parsed = Double(text) else { throw TranscodingError("invalid number \(text)") }
            return parsed
        }
    }
}

extension Google_Protobuf_FieldDescriptorProto {
    /// The field's JSON name: `json_name` when set, else the lowerCamelCase of its name.
    public var jsonFieldName: String { hasJsonName ? jsonName : WellKnownJSON.lowerCamelCase(name) }

    /// Whether a repeated field of this type is packed in proto3.
    var isPackable: Bool {
        switch type {
        case .string, .bytes, .message, .group: false
        default: true
        }
    }
}

extension JSONValue {
    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let text): "the number \(text)"
        case .string(let text): "the string \"\(text)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
