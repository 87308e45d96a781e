/// Per-call settings a client passes with a call.
public struct CallOptions: Sendable {
    /// Request metadata.
    public var metadata: Metadata
    /// How long the call may take; sent as `grpc-timeout` and enforced on both sides.
    public var timeout: Duration?

    public init(metadata: Metadata = [:], timeout: Duration? = nil) {
        self.metadata = metadata
        self.timeout = timeout
    }

    /// No metadata, no deadline.
    public static var defaults: CallOptions { CallOptions() }
}
