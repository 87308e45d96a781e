public import SkiffCore

/// The life of one skiff/1 stream, seen from either end (contract §3): idle until its HEADERS,
/// open, half-closed once one side has ended its messages, closed with a status. A value type
/// with no I/O, shared by client and server.
///
/// *Local* is the end that holds the value. A client ends its side with HALF_CLOSE (or END_STREAM
/// on its last frame) and the server's TRAILERS close the stream; a server sees the client's
/// side end, then closes the stream with its TRAILERS. Either end closes it at once with a reset.
///
/// ```swift
/// var stream = StreamState()
/// stream.open()                       // HEADERS sent (client) or received (server)
/// stream.halfClose(.local)            // the client's HALF_CLOSE
/// stream.close(.ok)                   // the server's TRAILERS
/// ```
public struct StreamState: Hashable, Sendable {
    /// Where a stream is in its life.
    public enum Phase: Hashable, Sendable {
        /// No HEADERS yet (a client's call waiting for a connection, or between retries).
        case idle
        /// Both sides may send.
        case open
        /// This end has ended its messages; the peer may still send.
        case halfClosedLocal
        /// The peer has ended its messages; this end may still send.
        case halfClosedRemote
        /// Ended with a status: nothing more is sent or read on it.
        case closed(StatusCode)
    }

    /// One end of the stream.
    public enum Side: Hashable, Sendable {
        /// The end that holds the value.
        case local
        /// The peer.
        case remote
    }

    /// Where the stream is.
    public private(set) var phase: Phase

    /// A stream in `phase`: `.idle` for one whose HEADERS have not gone yet, `.open` for one whose
    /// HEADERS just arrived.
    public init(_ phase: Phase = .idle) { self.phase = phase }

    /// The HEADERS went or arrived. No effect unless the stream is idle.
    public mutating func open() {
        if phase == .idle { phase = .open }
    }

    /// `side` has ended its messages.
    ///
    /// - Returns: `false` when that side could not send any more already (it had ended, or the
    ///   stream is closed or idle): for a peer, a protocol error the caller reports. Only the
    ///   client half-closes: the server's side ends with the stream, by ``close(_:)``.
    @discardableResult
    public mutating func halfClose(_ side: Side) -> Bool {
        switch (phase, side) {
        case (.open, .local): phase = .halfClosedLocal
        case (.open, .remote): phase = .halfClosedRemote
        default: return false
        }
        return true
    }

    /// The stream ends with `status` (TRAILERS, a reset, the connection's end).
    ///
    /// - Returns: `false` when it had closed already (the first status stands).
    @discardableResult
    public mutating func close(_ status: StatusCode) -> Bool {
        if case .closed = phase { return false }
        phase = .closed(status)
        return true
    }

    /// Whether its HEADERS have not gone or arrived yet.
    public var isIdle: Bool { phase == .idle }

    /// Whether this end may still send messages on it.
    public var localOpen: Bool { phase == .open || phase == .halfClosedRemote }

    /// Whether the peer may still send messages on it.
    public var remoteOpen: Bool { phase == .open || phase == .halfClosedLocal }

    /// Whether it has closed.
    public var isClosed: Bool { status != nil }

    /// The status it closed with.
    public var status: StatusCode? {
        if case .closed(let status) = phase { return status }
        return nil
    }
}
