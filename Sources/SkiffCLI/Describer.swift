import SkiffReflection
import SwiftProtobuf

/// Renders schemas from a registry as proto-like text.
struct Describer {
    let registry: DescriptorRegistry

    /// `Name(Request) returns (stream Response)` for a method.
    func signature(_ method: Google_Protobuf_MethodDescriptorProto) -> String {
        let input = (method.clientStreaming ? "stream " : "") + short(method.inputType)
        let output = (method.serverStreaming ? "stream " : "") + short(method.outputType)
        return "\(method.name)(\(input)) returns (\(output))"
    }

    /// The service and each method's signature.
    func describeService(_ name: String) -> String? {
        guard let service = registry.services[name] else { return nil }
        var lines = ["service \(name) {"]
        for method in service.method { lines.append("  rpc \(signature(method));") }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The method's signature, then its request and response messages and every message and
    /// enum they use (well-known types excepted), field by field.
    func describeMethod(service: String, method: Google_Protobuf_MethodDescriptorProto) -> String {
        var text = "rpc \(service)/\(signature(method))\n"
        text += "  request:  \(trim(method.inputType))\n  response: \(trim(method.outputType))\n"
        var seen: Set<String> = []
        for type in [method.inputType, method.outputType] { text += describeType(trim(type), seen: &seen) }
        return text
    }

    /// A message or enum, and the types it uses.
    func describeType(_ name: String, seen: inout Set<String>) -> String {
        guard seen.insert(name).inserted, !name.hasPrefix("google.protobuf.") else { return "" }
        if let enumType = registry.enumType(named: name) {
            var text = "\nenum \(name) {\n"
            for value in enumType.value { text += "  \(value.name) = \(value.number);\n" }
            return text + "}\n"
        }
        guard let message = registry.message(named: name) else { return "" }
        var text = "\nmessage \(name) {\n"
        var used: [String] = []
        for field in message.field {
            let isSyntheticOneof = field.proto3Optional
            var label = ""
            if let entry = mapTypes(field) {
                label = "map<\(entry.0), \(entry.1)>"
            } else {
                let typeName = fieldType(field)
                label = (field.label == .repeated ? "repeated " : isSyntheticOneof ? "optional " : "") + typeName
            }
            var comment = "json: \"\(field.jsonFieldName)\""
            if field.hasOneofIndex, !isSyntheticOneof, field.oneofIndex < message.oneofDecl.count {
                comment += ", oneof \(message.oneofDecl[Int(field.oneofIndex)].name)"
            }
            text += "  \(label) \(field.name) = \(field.number);  // \(comment)\n"
            if field.type == .message || field.type == .enum {
                if let entry = registry.message(named: field.typeName), entry.options.mapEntry {
                    used += entry.field.filter { $0.type == .message || $0.type == .enum }.map { trim($0.typeName) }
                } else {
                    used.append(trim(field.typeName))
                }
            }
        }
        text += "}\n"
        for type in used { text += describeType(type, seen: &seen) }
        return text
    }

    private func mapTypes(_ field: Google_Protobuf_FieldDescriptorProto) -> (String, String)? {
        guard field.label == .repeated, field.type == .message, let entry = registry.message(named: field.typeName),
            entry.options.mapEntry, entry.field.count == 2
        else { return nil }
        return (fieldType(entry.field[0]), fieldType(entry.field[1]))
    }

    private func fieldType(_ field: Google_Protobuf_FieldDescriptorProto) -> String {
        switch field.type {
        case .message, .enum, .group: trim(field.typeName)
        default: String(describing: field.type)
        }
    }

    private func trim(_ name: String) -> String { name.hasPrefix(".") ? String(name.dropFirst()) : name }
    private func short(_ name: String) -> String { String(trim(name).split(separator: ".").last ?? "") }
}
