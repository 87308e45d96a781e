/// A gRPC status code, as carried in Skiff `TRAILERS` and `RST_STREAM` frames.
///
/// A struct rather than an enum so that codes unknown to this version (a peer may send any
/// `u32`) survive a round trip and new codes do not break source compatibility.
public struct StatusCode: Hashable, Sendable, CustomStringConvertible {
    /// The wire value.
    public let rawValue: UInt32

    /// Creates a status code from its wire value. Any value is kept as it is.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let ok = StatusCode(rawValue: 0)
    public static let cancelled = StatusCode(rawValue: 1)
    public static let unknown = StatusCode(rawValue: 2)
    public static let invalidArgument = StatusCode(rawValue: 3)
    public static let deadlineExceeded = StatusCode(rawValue: 4)
    public static let notFound = StatusCode(rawValue: 5)
    public static let alreadyExists = StatusCode(rawValue: 6)
    public static let permissionDenied = StatusCode(rawValue: 7)
    public static let resourceExhausted = StatusCode(rawValue: 8)
    public static let failedPrecondition = StatusCode(rawValue: 9)
    public static let aborted = StatusCode(rawValue: 10)
    public static let outOfRange = StatusCode(rawValue: 11)
    public static let unimplemented = StatusCode(rawValue: 12)
    public static let `internal` = StatusCode(rawValue: 13)
    public static let unavailable = StatusCode(rawValue: 14)
    public static let dataLoss = StatusCode(rawValue: 15)
    public static let unauthenticated = StatusCode(rawValue: 16)

    /// The canonical upper-snake-case name, e.g. `INVALID_ARGUMENT`, or `CODE_<n>` for unknown codes.
    public var name: String {
        switch rawValue {
        case 0: "OK"
        case 1: "CANCELLED"
        case 2: "UNKNOWN"
        case 3: "INVALID_ARGUMENT"
        case 4: "DEADLINE_EXCEEDED"
        case 5: "NOT_FOUND"
        case 6: "ALREADY_EXISTS"
        case 7: "PERMISSION_DENIED"
        case 8: "RESOURCE_EXHAUSTED"
        case 9: "FAILED_PRECONDITION"
        case 10: "ABORTED"
        case 11: "OUT_OF_RANGE"
        case 12: "UNIMPLEMENTED"
        case 13: "INTERNAL"
        case 14: "UNAVAILABLE"
        case 15: "DATA_LOSS"
        case 16: "UNAUTHENTICATED"
        default: "CODE_\(rawValue)"
        }
    }

    public var description: String { name }
}
