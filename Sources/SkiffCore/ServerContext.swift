/// Where a handler's response metadata goes. Implemented by each transport's call object.
public protocol ResponseMetadataSink: AnyObject, Sendable {
    /// Sets the metadata sent in the response HEADERS. Has no effect once they have gone.
    func setInitialMetadata(_ metadata: Metadata)
    /// Adds metadata to send in the TRAILERS.
    func addTrailingMetadata(_ metadata: Metadata)
}

/// What a server handler knows about its call.
public struct ServerContext: Sendable {
    /// The method being called.
    public let descriptor: MethodDescriptor
    /// The request metadata (reserved `grpc-` keys included).
    public let metadata: Metadata
    /// The client's address as the server sees it, `host:port` (`[addr]:port` for IPv6).
    public let peer: String
    /// When the call's deadline passes, if the client set one.
    public let deadline: ContinuousClock.Instant?
    /// The stream id on the connection (0 for in-process calls).
    public let streamID: UInt32
    /// Values attached by interceptors (e.g. the authenticated user).
    public var attributes: Attributes
    /// Fires when the call's connection starts draining: long-lived calls end promptly (see ``DrainSignal``).
    /// In-process calls get a signal that never fires.
    public let drain: DrainSignal

    @usableFromInline let sink: any ResponseMetadataSink

    /// Creates a context. Transports call this; handlers receive it.
    public init(
        descriptor: MethodDescriptor,
        metadata: Metadata,
        peer: String,
        deadline: ContinuousClock.Instant?,
        streamID: UInt32,
        drain: DrainSignal = DrainSignal(),
        sink: any ResponseMetadataSink
    ) {
        self.descriptor = descriptor
        self.metadata = metadata
        self.peer = peer
        self.deadline = deadline
        self.streamID = streamID
        self.attributes = Attributes()
        self.drain = drain
        self.sink = sink
    }

    /// Sets the response's initial metadata. Call before writing the first response message.
    public func setInitialMetadata(_ metadata: Metadata) { sink.setInitialMetadata(metadata) }

    /// Adds metadata to the response's trailers.
    public func addTrailingMetadata(_ metadata: Metadata) { sink.addTrailingMetadata(metadata) }
}

/// A small typed store of values that interceptors attach to a call.
public struct Attributes: Sendable {
    private var storage: [ObjectIdentifier: any Sendable] = [:]

    public init() {}

    /// The value for a key type.
    public subscript<Key: AttributeKey>(key: Key.Type) -> Key.Value? {
        get { storage[ObjectIdentifier(key)] as? Key.Value }
        set { storage[ObjectIdentifier(key)] = newValue }
    }
}

/// A key for ``Attributes``.
public protocol AttributeKey {
    associatedtype Value: Sendable
}
