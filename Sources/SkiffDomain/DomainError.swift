public import SkiffCore

/// An error a domain rule or a store raises, with a message a person can act on.
///
/// Services throw it as it is: it conforms to `RPCErrorConvertible`, so the runtime maps it to a status in
/// one place (`RPCError(mapping:)`). The ``message`` goes to the peer exactly as written, so it must never
/// contain internals (SQL, paths, other users' data); put those in ``cause``, which stays on this side.
///
/// Equality and hashing compare ``code`` and ``message`` only.
///
/// ```swift
/// throw DomainError(.alreadyExists, "An account with this e-mail address already exists.")
/// ```
public struct DomainError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. A struct rather than an enum so that new codes don't break source compatibility.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case invalidArgument
            case notFound
            case alreadyExists
            case permissionDenied
            case failedPrecondition
            case unauthenticated
            case resourceExhausted
            case aborted
            case outOfRange
            case unavailable
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The request is malformed or breaks a validation rule, whatever the state of the system.
        public static let invalidArgument = Code(.invalidArgument)
        /// The thing asked for does not exist (or the caller may not know that it does).
        public static let notFound = Code(.notFound)
        /// The thing being created exists already (a unique key is taken).
        public static let alreadyExists = Code(.alreadyExists)
        /// The caller is known but may not do this.
        public static let permissionDenied = Code(.permissionDenied)
        /// The system is not in a state that allows this (e.g. a link that was already used or expired).
        public static let failedPrecondition = Code(.failedPrecondition)
        /// The caller is not (or no longer) signed in.
        public static let unauthenticated = Code(.unauthenticated)
        /// A quota or rate limit is exhausted.
        public static let resourceExhausted = Code(.resourceExhausted)
        /// A concurrent change got in the way; retrying the whole operation may succeed.
        public static let aborted = Code(.aborted)
        /// A position or amount lies past the valid range (e.g. beyond the last message), whatever
        /// else is right with the request.
        public static let outOfRange = Code(.outOfRange)
        /// The call cannot go on here now (e.g. the server drains its connection to restart); retrying on a
        /// new connection, with back-off, may succeed.
        public static let unavailable = Code(.unavailable)

        /// The status code this maps to on the wire.
        public var statusCode: StatusCode {
            switch value {
            case .invalidArgument: .invalidArgument
            case .notFound: .notFound
            case .alreadyExists: .alreadyExists
            case .permissionDenied: .permissionDenied
            case .failedPrecondition: .failedPrecondition
            case .unauthenticated: .unauthenticated
            case .resourceExhausted: .resourceExhausted
            case .aborted: .aborted
            case .outOfRange: .outOfRange
            case .unavailable: .unavailable
            }
        }

        public var description: String { statusCode.name }
    }

    /// The kind of failure.
    public var code: Code
    /// A message a person can act on; sent to the peer as it is.
    public var message: String
    /// The underlying error, if any. Never sent to the peer.
    public var cause: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: A message a person can act on; it is sent to the peer exactly.
    ///   - cause: An underlying error kept for logs only.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        if let cause {
            return "\(code): \"\(message)\" (cause: \(cause))"
        }
        return "\(code): \"\(message)\""
    }

    public static func == (lhs: DomainError, rhs: DomainError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}

extension DomainError: RPCErrorConvertible {
    public var rpcErrorCode: StatusCode { code.statusCode }
    public var rpcErrorMessage: String { message }
}
