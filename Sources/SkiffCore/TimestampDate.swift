public import Foundation
public import SwiftProtobuf

extension Google_Protobuf_Timestamp {
    /// The earliest second `google.protobuf.Timestamp` allows: 0001-01-01T00:00:00Z.
    package static let earliestSeconds: Int64 = -62_135_596_800
    /// The latest second `google.protobuf.Timestamp` allows: 9999-12-31T23:59:59Z.
    package static let latestSeconds: Int64 = 253_402_300_799

    /// ``date``, without trapping on a timestamp a client may send: one before the range
    /// `google.protobuf.Timestamp` allows (years 1 to 9999) is the second before it, one after it the second
    /// after it, which the services' date rules refuse with a message naming the field. (SwiftProtobuf's
    /// `date` overflows, and stops the process, for seconds near `Int64.min`; and whole milliseconds since
    /// 1970, which stores keep, overflow past about the year 292 million.)
    public var checkedDate: Date {
        if seconds < Self.earliestSeconds { return Date(timeIntervalSince1970: TimeInterval(Self.earliestSeconds - 1)) }
        if seconds > Self.latestSeconds { return Date(timeIntervalSince1970: TimeInterval(Self.latestSeconds + 1)) }
        return date
    }
}
