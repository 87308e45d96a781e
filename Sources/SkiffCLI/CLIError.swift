public import SkiffCore
import SkiffReflection

/// A failure `skiff` reports as a status code name and message; the exit code is the code's number.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// The status code: from the server, or chosen locally (e.g. INVALID_ARGUMENT for bad JSON).
    public var code: StatusCode
    /// The message.
    public var message: String

    /// Creates an error.
    public init(_ code: StatusCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The error as `CODE_NAME: message`.
    public var description: String { "\(code.name): \(message)" }

    /// The process exit code: the status code's number (never 0).
    public var exitCode: Int32 { code == .ok ? 1 : Int32(code.rawValue) }

    /// Maps any error to a CLIError (RPC errors keep their code).
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: error
        case let error as RPCError: CLIError(error.code, error.message)
        case let error as TranscodingError: CLIError(.invalidArgument, error.description)
        default: CLIError(.unknown, "\(error)")
        }
    }
}
