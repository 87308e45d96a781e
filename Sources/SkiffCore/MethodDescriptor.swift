/// The four call kinds.
public enum RPCKind: Sendable, Hashable {
    /// One request, one response.
    case unary
    /// A stream of requests, one response.
    case clientStreaming
    /// One request, a stream of responses.
    case serverStreaming
    /// Streams both ways.
    case bidirectionalStreaming

    /// Whether the client sends exactly one message.
    public var hasSingleRequest: Bool { self == .unary || self == .serverStreaming }
    /// Whether the server sends exactly one message on success.
    public var hasSingleResponse: Bool { self == .unary || self == .clientStreaming }
}

/// Names one method of one service, e.g. `/skiff.testing.v1.TestService/EmptyCall`.
public struct MethodDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The fully qualified service name, e.g. `skiff.testing.v1.TestService`.
    public let service: String
    /// The method name, e.g. `EmptyCall`.
    public let method: String
    /// The call kind.
    public let kind: RPCKind
    /// The path used on the wire: `/service/method`.
    public let path: String
    /// What calling the method twice does (the proto's `idempotency_level` option).
    public let idempotency: Idempotency

    /// Creates a descriptor.
    public init(service: String, method: String, kind: RPCKind, idempotency: Idempotency = .unknown) {
        self.service = service
        self.method = method
        self.kind = kind
        self.path = "/\(service)/\(method)"
        self.idempotency = idempotency
    }

    /// A method's `idempotency_level` (google/protobuf/descriptor.proto, `MethodOptions`).
    public enum Idempotency: Sendable, Hashable {
        /// Not declared: the method may change state.
        case unknown
        /// Calling it again with the same request has no further effect.
        case idempotent
        /// It only reads (`NO_SIDE_EFFECTS`): Connect clients may call it with GET, which browsers
        /// and proxies can cache.
        case noSideEffects
    }

    public var description: String { path }
}

/// Describes one service: its name and methods.
public struct ServiceDescriptor: Sendable, Hashable {
    /// The fully qualified service name.
    public let name: String
    /// The service's methods.
    public let methods: [MethodDescriptor]

    public init(name: String, methods: [MethodDescriptor]) {
        self.name = name
        self.methods = methods
    }
}
