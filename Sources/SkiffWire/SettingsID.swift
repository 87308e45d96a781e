/// Identifies one SETTINGS parameter.
public struct SettingsID: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let maxFrameSize = SettingsID(rawValue: 0x1)
    public static let initialStreamWindow = SettingsID(rawValue: 0x2)
    public static let initialConnectionWindow = SettingsID(rawValue: 0x3)
    public static let maxConcurrentStreams = SettingsID(rawValue: 0x4)
    public static let maxHeaderListSize = SettingsID(rawValue: 0x5)
    public static let maxMessageSize = SettingsID(rawValue: 0x6)
    public static let keepaliveMinIntervalMS = SettingsID(rawValue: 0x7)
}

/// What one side is willing to receive, as advertised in its SETTINGS frame.
public struct ConnectionSettings: Sendable, Hashable {
    /// Largest frame payload the side accepts.
    public var maxFrameSize: UInt32 = 65_536
    /// Initial per-stream window for MESSAGE bytes.
    public var initialStreamWindow: UInt32 = 8 * 1024 * 1024
    /// Initial connection window for MESSAGE bytes.
    public var initialConnectionWindow: UInt32 = 16 * 1024 * 1024
    /// Most concurrent streams the side accepts; `nil` is unlimited.
    public var maxConcurrentStreams: UInt32? = nil
    /// Largest metadata block the side accepts.
    public var maxHeaderListSize: UInt32 = 8_192
    /// Largest message the side accepts.
    public var maxMessageSize: UInt32 = 4 * 1024 * 1024
    /// Smallest interval between PINGs the side tolerates while no stream is open.
    public var keepaliveMinIntervalMS: UInt32 = 300_000

    /// The defaults of the contract, in force until the peer's SETTINGS arrive.
    public static let protocolDefaults = ConnectionSettings()

    public init() {}

    /// The (id, value) pairs to send: every value that differs from the defaults.
    public var encodedPairs: [(SettingsID, UInt32)] {
        let d = ConnectionSettings.protocolDefaults
        var pairs: [(SettingsID, UInt32)] = []
        if maxFrameSize != d.maxFrameSize { pairs.append((.maxFrameSize, maxFrameSize)) }
        if initialStreamWindow != d.initialStreamWindow { pairs.append((.initialStreamWindow, initialStreamWindow)) }
        if initialConnectionWindow != d.initialConnectionWindow {
            pairs.append((.initialConnectionWindow, initialConnectionWindow))
        }
        if let m = maxConcurrentStreams { pairs.append((.maxConcurrentStreams, m)) }
        if maxHeaderListSize != d.maxHeaderListSize { pairs.append((.maxHeaderListSize, maxHeaderListSize)) }
        if maxMessageSize != d.maxMessageSize { pairs.append((.maxMessageSize, maxMessageSize)) }
        if keepaliveMinIntervalMS != d.keepaliveMinIntervalMS {
            pairs.append((.keepaliveMinIntervalMS, keepaliveMinIntervalMS))
        }
        return pairs
    }

    /// Applies received pairs on top of the defaults, checking every range of the contract.
    ///
    /// - Throws: ``ProtocolViolation`` when a value is out of range (unknown ids are ignored).
    public static func decode(_ pairs: [(UInt16, UInt32)]) throws(ProtocolViolation) -> ConnectionSettings {
        var s = ConnectionSettings()
        for (id, value) in pairs {
            switch SettingsID(rawValue: id) {
            case .maxFrameSize:
                guard value >= 16_384, value <= 16 * 1024 * 1024 else {
                    throw ProtocolViolation("MAX_FRAME_SIZE \(value) is outside 16384…16777216")
                }
                s.maxFrameSize = value
            case .initialStreamWindow:
                guard value <= Int32.max else {
                    throw ProtocolViolation("INITIAL_STREAM_WINDOW \(value) exceeds 2^31-1")
                }
                s.initialStreamWindow = value
            case .initialConnectionWindow:
                guard value >= 1, value <= Int32.max else {
                    throw ProtocolViolation("INITIAL_CONNECTION_WINDOW \(value) is outside 1…2^31-1")
                }
                s.initialConnectionWindow = value
            case .maxConcurrentStreams:
                s.maxConcurrentStreams = value
            case .maxHeaderListSize:
                guard value >= 1_024 else { throw ProtocolViolation("MAX_HEADER_LIST_SIZE \(value) is below 1024") }
                s.maxHeaderListSize = value
            case .maxMessageSize:
                guard value >= 1_024, value <= Int32.max else {
                    throw ProtocolViolation("MAX_MESSAGE_SIZE \(value) is outside 1024…2^31-1")
                }
                s.maxMessageSize = value
            case .keepaliveMinIntervalMS:
                s.keepaliveMinIntervalMS = value
            default:
                continue
            }
        }
        guard s.maxHeaderListSize <= s.maxFrameSize - 6 else {
            throw ProtocolViolation("MAX_HEADER_LIST_SIZE \(s.maxHeaderListSize) exceeds MAX_FRAME_SIZE - 6")
        }
        guard s.initialStreamWindow >= s.maxMessageSize else {
            throw ProtocolViolation(
                "INITIAL_STREAM_WINDOW \(s.initialStreamWindow) is below MAX_MESSAGE_SIZE \(s.maxMessageSize)"
            )
        }
        return s
    }

    /// Checks that these settings are valid to advertise (the same ranges a peer enforces).
    public func validate() throws(ProtocolViolation) {
        _ = try ConnectionSettings.decode(encodedPairs.map { ($0.0.rawValue, $0.1) })
    }
}
