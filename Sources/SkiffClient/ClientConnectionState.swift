/// The life of one client connection, as a value with no I/O: connecting until the socket is up,
/// active from then, ready once the server's SETTINGS arrived, no longer taking new streams after
/// the server's GOAWAY or a graceful close, closing once the close is sent, closed.
///
/// No stream opens before the server's SETTINGS: until then nothing shows that a server process
/// took the connection (the kernel completes connections a listener never accepts, and resets them
/// when it closes), so a call sent that early and then reset could not tell "never seen" from
/// "maybe processed". Waiting costs the first call one round trip and makes a reset before
/// SETTINGS always safe to retry elsewhere.
///
/// ``ClientConnectionHandler`` feeds it the connection's events and acts on what it answers.
struct ClientConnectionState {
    enum Phase: Hashable {
        /// The socket is not up yet: calls routed here wait.
        case connecting
        /// Preface and SETTINGS sent; streams open once the server's SETTINGS arrived and while
        /// ``ClientConnectionState/takesNewStreams``.
        case active
        /// Ended: nothing more is sent or read.
        case closed
    }

    /// What to do with a call routed to this connection.
    enum Routing: Hashable {
        /// Open its stream now (if a slot is free) or queue it here.
        case openOrQueue
        /// Queue it here until the connection is up and the server's SETTINGS arrived.
        case queue
        /// Send it to another connection: this one takes no new streams.
        case reroute
        /// Fail it: this connection has closed.
        case fail
    }

    private(set) var phase = Phase.connecting
    /// Whether the server's SETTINGS ever arrived (a connection that never got them counts as a
    /// failed attempt, and its queued calls fail rather than move on).
    private(set) var everReady = false
    /// Whether new streams may open here: not after the server's GOAWAY or a graceful close.
    private(set) var takesNewStreams = true
    /// Whether the application asked for a graceful close.
    private(set) var closingGracefully = false
    /// Whether the close has been sent.
    private(set) var closeInitiated = false

    /// The socket is up. Returns `false` when the connection was closed meanwhile (close it).
    mutating func connected() -> Bool {
        guard phase == .connecting else { return false }
        phase = .active
        return true
    }

    /// The server's SETTINGS arrived.
    mutating func ready() { everReady = true }

    /// No new streams from now on. Returns `true` the first time (tell the pool).
    mutating func stopTakingStreams() -> Bool {
        guard takesNewStreams else { return false }
        takesNewStreams = false
        return true
    }

    /// The application asked for a graceful close. Returns `true` when the connection can close at
    /// once: it never came up and no call waits for it.
    mutating func beginGracefulClose(nothingQueued: Bool) -> Bool {
        closingGracefully = true
        return phase == .connecting && nothingQueued
    }

    /// Whether a connection with no stream open and none queued closes now; `true` once (the
    /// caller sends the close).
    mutating func closeIfIdle(idle: Bool) -> Bool {
        guard phase == .active, !takesNewStreams || closingGracefully, idle, !closeInitiated else { return false }
        closeInitiated = true
        return true
    }

    /// The connection ends. Returns whether it was active, or `nil` when it had ended already.
    mutating func shutdown() -> (wasActive: Bool, everReady: Bool)? {
        guard phase != .closed else { return nil }
        let wasActive = phase == .active
        phase = .closed
        return (wasActive, everReady)
    }

    /// Where a call routed here goes.
    var routing: Routing {
        switch phase {
        case .closed: .fail
        case .connecting: .queue
        case .active where !takesNewStreams || closeInitiated: .reroute
        case .active: everReady ? .openOrQueue : .queue
        }
    }

    /// Whether queued calls may open streams now.
    var opensStreams: Bool { phase == .active && everReady && takesNewStreams }

    /// Whether frames are read and timers act.
    var isActive: Bool { phase == .active }
}
