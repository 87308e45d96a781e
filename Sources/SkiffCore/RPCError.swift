/// An error that ends a call with a status code, a message a person can act on, and metadata.
///
/// Throw it from a handler to end the call with that status; the runtime sends it as `TRAILERS`.
/// Clients receive it when a call ends with a status other than OK.
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status code.
    public var code: StatusCode
    /// The status message, returned to the peer exactly.
    public var message: String
    /// Trailing metadata sent with (or received with) the status.
    public var metadata: Metadata

    /// Creates an error.
    public init(code: StatusCode, message: String, metadata: Metadata = [:]) {
        self.code = code
        self.message = message
        self.metadata = metadata
    }

    public var description: String { "\(code): \"\(message)\"" }

    public static func == (lhs: RPCError, rhs: RPCError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}

/// An error that knows how it should appear on the wire.
///
/// Domain errors conform to this so that the runtime maps them to a status in one place
/// (``RPCError/init(mapping:)``). Errors that do not conform become `INTERNAL` with a generic
/// message; their details go to the log only.
public protocol RPCErrorConvertible: Error {
    /// The status code the error maps to.
    var rpcErrorCode: StatusCode { get }
    /// The message sent to the peer.
    var rpcErrorMessage: String { get }
    /// Trailing metadata sent to the peer.
    var rpcErrorMetadata: Metadata { get }
}

extension RPCErrorConvertible {
    public var rpcErrorMetadata: Metadata { [:] }
}

extension RPCError {
    /// The single mapping point from any thrown error to a status.
    ///
    /// - ``RPCError`` passes through; ``RPCErrorConvertible`` is converted;
    /// - `CancellationError` becomes `CANCELLED`;
    /// - anything else becomes `INTERNAL` with a message that leaks no internals.
    public init(mapping error: any Error) {
        switch error {
        case let error as RPCError:
            self = error
        case let error as any RPCErrorConvertible:
            self.init(code: error.rpcErrorCode, message: error.rpcErrorMessage, metadata: error.rpcErrorMetadata)
        case is CancellationError:
            self.init(code: .cancelled, message: "The call was cancelled.")
        default:
            self.init(code: .internal, message: "Internal server error.")
        }
    }

    /// Whether ``init(mapping:)`` hid the error's details (so they belong in the log).
    public static func isOpaque(_ error: any Error) -> Bool {
        !(error is RPCError || error is any RPCErrorConvertible || error is CancellationError)
    }
}
