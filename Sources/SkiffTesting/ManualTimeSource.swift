public import Foundation
public import SkiffDomain
import Synchronization

/// A time source that only moves when told to; for tests.
///
/// ```swift
/// let clock = ManualTimeSource()
/// clock.advance(by: .seconds(3600))
/// ```
public final class ManualTimeSource: TimeSource {
    private let current: Mutex<Date>

    /// Creates a time source that starts at `start` (by default a fixed, millisecond-aligned instant).
    public init(start: Date = Date(millisecondsSince1970: 1_767_225_600_000)) {
        self.current = Mutex(start)
    }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves time forward (or backward, for a negative duration).
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }

    /// Sets the current time.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
