/// The receiving side of a skiff/1 flow-control window (contract §4): how many MESSAGE payload
/// bytes the peer may still send, and the credit owed back to it.
///
/// Credit for what arrived is returned in batches: once a quarter of the window is owed (so a
/// WINDOW_UPDATE is not sent per frame) or when the receiver says so (at the end of a read batch,
/// or when the application consumed a message). A value type with no I/O, shared by client and
/// server: the caller writes the WINDOW_UPDATE an action names.
public struct InboundWindow: Hashable, Sendable {
    /// Bytes the peer may send before it must wait for a WINDOW_UPDATE.
    public private(set) var available: Int
    /// Bytes received and processed whose credit has not gone back yet.
    public private(set) var owed = 0
    /// Credit is returned once this much is owed.
    public let batch: Int

    /// A window of `size` bytes, as advertised in SETTINGS.
    public init(size: Int) {
        self.available = size
        self.batch = max(1, size / 4)
    }

    /// `length` payload bytes arrived. Throws when the peer sent more than the window allowed;
    /// returns the increment to send now when a batch of credit is owed.
    public mutating func received(_ length: Int) throws(ProtocolViolation) -> UInt32? {
        try consume(length)
        return credit(length)
    }

    /// `length` payload bytes arrived and are owed back only when ``credit(_:)`` is called for
    /// them (a stream's window, returned as its application reads).
    public mutating func consume(_ length: Int) throws(ProtocolViolation) {
        available -= length
        guard available >= 0 else { throw ProtocolViolation("window overrun") }
    }

    /// `length` bytes were processed: returns the increment to send when a batch is owed.
    public mutating func credit(_ length: Int) -> UInt32? {
        owed += length
        return owed >= batch ? takeOwed() : nil
    }

    /// The application consumed `length` bytes it was holding and the caller returns their credit
    /// now, in one WINDOW_UPDATE of the increment returned (a stream's window, whose credit the
    /// application batches itself).
    public mutating func restore(_ length: Int) -> UInt32 {
        let increment = min(length, Int(Int32.max) - max(0, available))
        available += increment
        return UInt32(max(0, increment))
    }

    /// Returns everything owed (for instance at the end of a read batch): the increment to send,
    /// or `nil` when nothing is owed.
    public mutating func takeOwed() -> UInt32? {
        guard owed > 0 else { return nil }
        let increment = min(owed, Int(Int32.max))
        owed -= increment
        available += increment
        return UInt32(increment)
    }
}

/// The sending side of a skiff/1 flow-control window: how many MESSAGE payload bytes may still
/// be sent. Grows with WINDOW_UPDATE and with a changed initial window in SETTINGS, shrinks as
/// bytes are sent; it may go negative after SETTINGS lowered it (contract §4).
public struct OutboundWindow: Hashable, Sendable {
    /// Bytes that may be sent now (none while not positive).
    public private(set) var available: Int

    /// A window of `size` bytes.
    public init(size: Int) { self.available = size }

    /// The peer granted `increment` more bytes. Throws when the window would exceed 2^31−1.
    public mutating func grant(_ increment: UInt32) throws(ProtocolViolation) {
        available += Int(increment)
        guard available <= Int(Int32.max) else { throw ProtocolViolation("window exceeds 2^31-1") }
    }

    /// The peer's SETTINGS changed its initial window by `delta` bytes.
    public mutating func adjust(by delta: Int) { available += delta }

    /// `length` bytes were sent.
    public mutating func spend(_ length: Int) { available -= length }

    /// Whether anything may be sent.
    public var isOpen: Bool { available > 0 }
}
