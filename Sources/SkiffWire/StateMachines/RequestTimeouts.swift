public import NIOCore

/// When each stream's request is due (the server's request timeout), for one connection, with no
/// clock of its own: one timer per connection serves every stream.
///
/// A unary or server-streaming request must be complete within `timeout` of its HEADERS; a
/// client-streaming one may not pause longer than `timeout` between messages (``progress(_:at:)``).
/// While the server is not reading (its socket is full) nothing is due: ``postpone(by:)`` moves
/// every due time by the time reads were paused.
public struct RequestTimeouts: Hashable, Sendable {
    public let timeout: TimeAmount
    private var due: [UInt32: NIODeadline] = [:]

    public init(timeout: TimeAmount) { self.timeout = timeout }

    /// Whether no stream is waiting.
    public var isEmpty: Bool { due.isEmpty }

    /// The earliest due time, when a timer should fire next.
    public var earliest: NIODeadline? { due.values.min() }

    /// Whether `streamID` is still waiting for its request.
    public func isWaiting(_ streamID: UInt32) -> Bool { due[streamID] != nil }

    /// `streamID` opened at `now` and waits for its request.
    public mutating func start(_ streamID: UInt32, at now: NIODeadline) { due[streamID] = now + timeout }

    /// A waiting stream made progress at `now` (a message, or credit that let its client go on):
    /// it is due a full timeout from now. Streams not waiting are left alone.
    public mutating func progress(_ streamID: UInt32, at now: NIODeadline) {
        guard due[streamID] != nil else { return }
        due[streamID] = now + timeout
    }

    /// `streamID` no longer waits (its request is complete, or it ended).
    public mutating func stop(_ streamID: UInt32) { due[streamID] = nil }

    /// Reads were paused for `paused`: that time is not counted against any client.
    public mutating func postpone(by paused: TimeAmount) {
        for key in due.keys { due[key]! = due[key]! + paused }
    }

    /// Removes and returns the streams due at `now` (in stream order).
    public mutating func expire(at now: NIODeadline) -> [UInt32] {
        let expired = due.filter { $0.value <= now }.keys.sorted()
        for id in expired { due[id] = nil }
        return expired
    }
}
