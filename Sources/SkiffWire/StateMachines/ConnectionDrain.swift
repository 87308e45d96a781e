/// The server's graceful drain of one connection (contract §5.2), as a value with no I/O.
///
/// `serving` → ``beginDrain()``: GOAWAY(2^31−1) and a PING go out, calls that never end by
/// themselves are told, a grace period starts → the PING's ACK (or the grace period's end):
/// the final GOAWAY names the highest stream accepted, and streams above it are refused from then
/// on → the connection closes once its last stream has ended (or at the grace period's end).
public struct ConnectionDrain: Hashable, Sendable {
    /// The PING payload of a drain ("SKIFDRN1"): its ACK means every stream the client opened
    /// before it has reached the server.
    public static let pingData: UInt64 = 0x534B_4946_4452_4E31

    public enum State: Hashable, Sendable {
        /// Not draining.
        case serving
        /// The first GOAWAY and the PING went out; waiting for the ACK.
        case awaitingPingAck
        /// The final GOAWAY went out: streams above `lastStreamID` are refused.
        case finalGoAwaySent(lastStreamID: UInt32)
    }

    public private(set) var state = State.serving
    /// The highest stream the server has accepted (not refused).
    public private(set) var highestAcceptedID: UInt32 = 0

    public init() {}

    /// Whether a drain has begun.
    public var isDraining: Bool { state != .serving }

    /// The final GOAWAY's last stream id, once sent.
    public var finalLastStreamID: UInt32? {
        if case .finalGoAwaySent(let id) = state { return id }
        return nil
    }

    /// Whether a stream the client opens is accepted: not after the final GOAWAY excluded it.
    public func accepts(_ streamID: UInt32) -> Bool {
        finalLastStreamID.map { streamID <= $0 } ?? true
    }

    /// Records an accepted stream.
    public mutating func accepted(_ streamID: UInt32) {
        highestAcceptedID = max(highestAcceptedID, streamID)
    }

    /// Starts the drain: `true` when the caller should now send GOAWAY(2^31−1) and the drain PING.
    public mutating func beginDrain() -> Bool {
        guard state == .serving else { return false }
        state = .awaitingPingAck
        return true
    }

    /// A PING ACK arrived: the last stream id for the final GOAWAY when it is the drain's.
    public mutating func pingAckReceived(_ data: UInt64) -> UInt32? {
        guard data == Self.pingData, state == .awaitingPingAck else { return nil }
        state = .finalGoAwaySent(lastStreamID: highestAcceptedID)
        return highestAcceptedID
    }

    /// The grace period ended: the last stream id for the final GOAWAY if it has not been sent
    /// (the client never answered the PING). Every stream still open is then reset.
    public mutating func graceExpired() -> UInt32? {
        guard finalLastStreamID == nil else { return nil }
        state = .finalGoAwaySent(lastStreamID: highestAcceptedID)
        return highestAcceptedID
    }
}
