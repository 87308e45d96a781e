import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

extension ServerConnectionHandler {
    // MARK: Connection life

    /// The connection has no open stream from now on: it drains once that has lasted the idle
    /// timeout. The timer is not cancelled when a stream opens (``idleSince`` is cleared instead),
    /// so a connection that goes idle between every call does not schedule and cancel a timer
    /// per call; when the timer fires early it re-arms for the time that is left.
    func armIdleTimer() {
        guard runningStreams == 0, !closing else { return }
        // Already idle (a call that never started ended): idle since then, not since now.
        if idleSince == nil { idleSince = now }
        if idleTimer == nil { scheduleIdleTimer(at: now + .nanoseconds(configuration.idleTimeout.nanoseconds)) }
    }

    private func scheduleIdleTimer(at deadline: NIODeadline) {
        idleTimer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            guard runningStreams == 0, !closing, let since = idleSince else { return }
            let due = since + .nanoseconds(configuration.idleTimeout.nanoseconds)
            if now >= due {
                beginDrain()
            } else {
                scheduleIdleTimer(at: due)
            }
        }
    }

    /// Starts a graceful drain: GOAWAY(2^31-1), PING, then on its ACK the final GOAWAY.
    func beginDrain() {
        guard !closing, drain.beginDrain() else { return }
        outbound.writeGoAway(lastStreamID: 0x7FFF_FFFF, status: .ok, debug: "server draining")
        outbound.writePing(ConnectionDrain.pingData, ack: false)
        flushNow()
        // Subscriptions and other calls that never end by themselves end now (UNAVAILABLE, with how to resume).
        drainSignal.fire()
        graceTimer = eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.drainGracePeriod.nanoseconds)
        ) {
            [self] in
            graceExpired()
        }
    }

    func sendFinalGoAway(lastStreamID: UInt32) {
        outbound.writeGoAway(lastStreamID: lastStreamID, status: .ok, debug: "server draining")
        flushNow()
        if streams.isEmpty { closeNow() }
    }

    func graceExpired() {
        if let last = drain.graceExpired() {
            outbound.writeGoAway(lastStreamID: last, status: .ok, debug: "server draining")
        }
        for stream in streams.values where !stream.state.isClosed {
            outbound.writeRSTStream(streamID: stream.id, status: .unavailable, reason: "server shut down")
            stream.state.close(.unavailable)
            dropQueuedResponses(of: stream)
            stream.close()
            stream.task?.cancel()
        }
        closeNow()
    }

    func goAwayAndClose(_ status: StatusCode, _ debug: String) {
        guard !closing else { return }
        logger.debug(
            "closing connection",
            metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(LogText.bounded(debug))"]
        )
        outbound.writeGoAway(lastStreamID: drain.highestAcceptedID, status: status, debug: debug)
        closeNow()
    }

    /// Ends the connection after what is queued (its last GOAWAY): the output is shut first and
    /// what the client still sends is read and dropped for up to ``closeLinger``, so that the
    /// client's kernel gets the GOAWAY rather than a reset for unread bytes.
    func closeNow() {
        guard !closing else { return }
        flushNow()
        closing = true
        for stream in streams.values { stream.task?.cancel() }
        guard let context else { return }
        let channel = context.channel
        context.close(mode: .output).assumeIsolated().whenFailure { _ in channel.close(promise: nil) }
        lingerTimer = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Self.closeLinger.nanoseconds)) {
            channel.close(promise: nil)
        }
    }

    /// How long a closing connection keeps reading, to let its last GOAWAY reach the client.
    static let closeLinger: Duration = .seconds(1)

    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return address.pathname ?? "unix"
        }
    }
}

extension Duration {
    /// "1.5 s", for messages people read.
    var formattedSeconds: String {
        let seconds = Double(nanoseconds) / 1e9
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
