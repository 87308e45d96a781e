public import Foundation

/// Where services read the current wall-clock time.
///
/// Inject it rather than calling `Date()` so that tests can move time forward (expiring sessions and
/// one-time links) without sleeping.
///
/// ## Implementation requirements
/// `now()` must be cheap and must not block; it may be called on any thread.
public protocol TimeSource: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemTimeSource: TimeSource {
    /// Creates the system time source.
    public init() {}

    public func now() -> Date { Date() }
}

extension TimeSource where Self == SystemTimeSource {
    /// The system's wall clock.
    public static var system: SystemTimeSource { SystemTimeSource() }
}

extension Date {
    /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded to the nearest millisecond.
    ///
    /// Stores keep timestamps at this precision so that every backend returns exactly the same values.
    /// Rounding to nearest (not down) makes the conversion stable:
    /// `Date(millisecondsSince1970: d.millisecondsSince1970).millisecondsSince1970 == d.millisecondsSince1970`
    /// despite floating-point error.
    public var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.toNearestOrAwayFromZero))
    }

    /// Creates a date from whole milliseconds since 1970-01-01T00:00:00Z.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// This date rounded to whole milliseconds (the precision stores keep).
    public var roundedToMilliseconds: Date {
        Date(millisecondsSince1970: millisecondsSince1970)
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's dates count time.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
