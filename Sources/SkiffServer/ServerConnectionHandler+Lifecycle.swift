import DequeModule
import Logging
import NIOCore
import SkiffCore
import SkiffWire

extension ServerConnectionHandler {
    // MARK: Connection life

    func armIdleTimer() {
        guard streams.isEmpty, idleTimer == nil, !closing else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.idleTimeout.nanoseconds)
        ) {
            [self] in
            idleTimer = nil
            if streams.isEmpty { beginDrain() }
        }
    }

    /// Starts a graceful drain: GOAWAY(2^31-1), PING, then on its ACK the final GOAWAY.
    func beginDrain() {
        guard !draining, !closing else { return }
        draining = true
        outbound.writeGoAway(lastStreamID: 0x7FFF_FFFF, status: .ok, debug: "server draining")
        outbound.writePing(Self.drainPingData, ack: false)
        flushNow()
        graceTimer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(configuration.drainGracePeriod.nanoseconds)
        ) {
            [self] in
            graceExpired()
        }
    }

    func sendFinalGoAway() {
        finalLastStreamID = highestAcceptedID
        outbound.writeGoAway(lastStreamID: highestAcceptedID, status: .ok, debug: "server draining")
        flushNow()
        if streams.isEmpty { closeNow() }
    }

    func graceExpired() {
        if finalLastStreamID == nil {
            finalLastStreamID = highestAcceptedID
            outbound.writeGoAway(lastStreamID: highestAcceptedID, status: .ok, debug: "server draining")
        }
        for stream in streams.values where !stream.serverClosed {
            outbound.writeRSTStream(streamID: stream.id, status: .unavailable, reason: "server shut down")
            stream.serverClosed = true
            stream.finalStatus = .unavailable
            stream.close()
            stream.task?.cancel()
        }
        closeNow()
    }

    func goAwayAndClose(_ status: StatusCode, _ debug: String) {
        guard !closing else { return }
        logger.debug("closing connection", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(debug)"])
        outbound.writeGoAway(lastStreamID: highestAcceptedID, status: status, debug: debug)
        closeNow()
    }

    func closeNow() {
        guard !closing else { return }
        flushNow()
        closing = true
        for stream in streams.values { stream.task?.cancel() }
        context.close(promise: nil)
    }

    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return address.pathname ?? "unix"
        }
    }
}
