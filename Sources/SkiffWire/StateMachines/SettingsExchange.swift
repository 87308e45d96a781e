/// The SETTINGS exchange of one skiff/1 connection (contract §3), as a value with no I/O,
/// shared by client and server.
///
/// Each side sends its SETTINGS after the preface. The peer's values apply from the moment they
/// arrive (a change of initial window shifts every open send window); our own limits are enforced
/// only once the peer has ACKed them, and until then wherever they are below the defaults the
/// defaults hold.
public struct SettingsExchange: Hashable, Sendable {
    /// What this side advertises.
    public let local: ConnectionSettings
    /// What the peer advertised (the defaults until its SETTINGS arrive).
    public private(set) var remote = ConnectionSettings.protocolDefaults
    /// Whether the peer's SETTINGS have arrived.
    public private(set) var receivedRemote = false
    /// Whether the peer has ACKed ours.
    public private(set) var localAcked = false
    /// Our MAX_MESSAGE_SIZE in force now (``enforced(_:)``), kept for the per-message path.
    public private(set) var enforcedMaxMessageSize: Int
    /// Our MAX_HEADER_LIST_SIZE in force now (``enforced(_:)``), kept for the per-call path.
    public private(set) var enforcedMaxHeaderListSize: Int

    public init(local: ConnectionSettings) {
        self.local = local
        let defaults = ConnectionSettings.protocolDefaults
        self.enforcedMaxMessageSize = Int(max(local.maxMessageSize, defaults.maxMessageSize))
        self.enforcedMaxHeaderListSize = Int(max(local.maxHeaderListSize, defaults.maxHeaderListSize))
    }

    /// What a SETTINGS frame changed.
    public enum Change: Hashable, Sendable {
        /// The peer ACKed our SETTINGS: our own limits are in force from now on.
        case localAcked
        /// The peer's SETTINGS arrived (answer with an ACK): every open stream's send window
        /// moves by `streamWindowDelta`, the connection's by `connectionWindowDelta`.
        case remote(streamWindowDelta: Int, connectionWindowDelta: Int)
    }

    /// A SETTINGS frame from the peer. Throws on a malformed frame or a second SETTINGS.
    public mutating func receive(_ frame: Frame) throws(ProtocolViolation) -> Change {
        let pairs = try FramePayload.settings(frame)
        if frame.flags.contains(.ack) {
            localAcked = true
            enforcedMaxMessageSize = Int(local.maxMessageSize)
            enforcedMaxHeaderListSize = Int(local.maxHeaderListSize)
            return .localAcked
        }
        guard !receivedRemote else { throw ProtocolViolation("a second SETTINGS frame") }
        let settings = try ConnectionSettings.decode(pairs)
        let change = Change.remote(
            streamWindowDelta: Int(settings.initialStreamWindow) - Int(remote.initialStreamWindow),
            connectionWindowDelta: Int(settings.initialConnectionWindow) - Int(remote.initialConnectionWindow)
        )
        remote = settings
        receivedRemote = true
        return change
    }

    /// The limit of ours in force now: ours once ACKed, before that never below the default.
    public func enforced<T: Comparable>(_ value: KeyPath<ConnectionSettings, T>) -> T {
        localAcked
            ? local[keyPath: value] : max(local[keyPath: value], ConnectionSettings.protocolDefaults[keyPath: value])
    }

    /// Our MAX_CONCURRENT_STREAMS in force now (none before the peer ACKed it).
    public var enforcedStreamLimit: Int? {
        guard localAcked, let limit = local.maxConcurrentStreams else { return nil }
        return Int(limit)
    }
}
