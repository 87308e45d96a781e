/// An error that stops code generation; protoc prints its description.
public struct GenerationError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for the person running protoc.
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
