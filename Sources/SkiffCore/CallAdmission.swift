/// What every transport decides about a new call from its path and request metadata, before any
/// handler runs: which handler serves it, whether its request encoding is one Skiff reads, and
/// its timeout.
///
/// A transport first applies the limits of its own framing (header sizes, malformed entries),
/// then calls ``admit(path:metadata:router:)``. A call it refuses ends at once with the
/// rejection's status and message, and is counted in metrics under ``CallRejection/methodLabel``:
/// the path only when it names a registered method, so that made-up paths add no series.
///
/// ```swift
/// switch CallAdmission.admit(path: path, metadata: metadata, router: router) {
/// case .success(let call): start(call.handler, timeout: call.timeout)
/// case .failure(let rejection): end(rejection.status, rejection.message)
/// }
/// ```
public struct CallAdmission: Sendable {
    /// The handler that serves the call.
    public let handler: RPCRouter.Handler
    /// The call's timeout from its `grpc-timeout` metadata, if the client set one.
    public let timeout: Duration?

    /// The most characters of a client's value quoted back in a rejection's message.
    public static let quotedLimit = 100

    /// Decides whether a call may start.
    ///
    /// - Returns: the handler and timeout, or the rejection to answer with: `UNIMPLEMENTED` for a
    ///   path no service registered and for a `grpc-encoding` other than `identity`, `INTERNAL` for a
    ///   malformed `grpc-timeout`.
    public static func admit(
        path: String,
        metadata: Metadata,
        router: RPCRouter
    ) -> Result<CallAdmission, CallRejection> {
        guard let handler = router.handler(forPath: path) else {
            return .failure(
                CallRejection(
                    status: .unimplemented,
                    message: "Method \(quoted(path)) is not implemented by this server.",
                    methodLabel: CallRejection.unknownMethodLabel
                )
            )
        }
        if let encoding = metadata.first("grpc-encoding"), encoding != "identity" {
            return .failure(
                CallRejection(
                    status: .unimplemented,
                    message: "grpc-encoding \"\(quoted(encoding))\" is not supported; use identity.",
                    methodLabel: path
                )
            )
        }
        var timeout: Duration?
        if let text = metadata.first("grpc-timeout") {
            guard let parsed = GRPCTimeout.parse(text) else {
                return .failure(
                    CallRejection(
                        status: .internal,
                        message: "grpc-timeout \"\(quoted(text))\" is malformed.",
                        methodLabel: path
                    )
                )
            }
            timeout = parsed
        }
        return .success(CallAdmission(handler: handler, timeout: timeout))
    }

    /// The label metrics use for a call to `path`: the path itself when it names a registered
    /// method, ``CallRejection/unknownMethodLabel`` otherwise.
    public static func methodLabel(forPath path: String, router: RPCRouter) -> String {
        router.handler(forPath: path) == nil ? CallRejection.unknownMethodLabel : path
    }

    static func quoted(_ text: String) -> Substring { text.prefix(quotedLimit) }
}

/// A call refused before its handler ran.
public struct CallRejection: Error, Sendable, Hashable {
    /// The method label of calls to paths that no service registered.
    public static let unknownMethodLabel = "unknown"

    /// The status the call ends with.
    public let status: StatusCode
    /// A message a person can act on; it quotes at most ``CallAdmission/quotedLimit`` characters of
    /// any value the client sent.
    public let message: String
    /// The label to count the call under in metrics.
    public let methodLabel: String

    /// Creates a rejection.
    public init(status: StatusCode, message: String, methodLabel: String) {
        self.status = status
        self.message = message
        self.methodLabel = methodLabel
    }
}
