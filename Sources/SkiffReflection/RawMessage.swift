public import SwiftProtobuf

/// A message whose binary form is passed through untouched: lets a generic client call any
/// method through a `ClientTransport` with bytes produced by ``ProtoJSONTranscoder``.
public struct RawMessage: SwiftProtobuf.Message, SwiftProtobuf._MessageImplementationBase,
    SwiftProtobuf._ProtoNameProviding, Sendable
{
    public static let protoMessageName = "skiff.RawMessage"
    public static let _protobuf_nameMap = SwiftProtobuf._NameMap()

    /// Every field, kept as unknown fields.
    public var unknownFields = SwiftProtobuf.UnknownStorage()

    /// An empty message.
    public init() {}

    /// A message with the given binary form.
    public init(bytes: [UInt8]) throws {
        try self.init(serializedBytes: bytes)
    }

    /// The message's binary form.
    public var bytes: [UInt8] { Array(unknownFields.data) }

    public mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        // Every field is unknown; the binary decoder keeps them in `unknownFields`.
        while try decoder.nextFieldNumber() != nil {}
    }

    public func traverse<V: SwiftProtobuf.Visitor>(visitor: inout V) throws {
        try unknownFields.traverse(visitor: &visitor)
    }

    public static func == (lhs: RawMessage, rhs: RawMessage) -> Bool {
        lhs.unknownFields == rhs.unknownFields
    }
}
